package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

const outcomeCols = `project, id, task_id, duration_ms, error_count, retry_count, success, files_touched,
	strategy, failure_mode, failure_details, ts, patterns, criteria, error_count_source,
	raw_score, score_type, score, recorded_at, exploration, task, tags, criterion_scores, inference`

func scanOutcome(s scanner) (learning.Outcome, error) {
	var o learning.Outcome
	var files, patterns, criteria, score string
	var ts, recorded sql.NullInt64
	var mode, exploration, tags, scores string
	err := s.Scan(&o.Project, &o.ID, &o.TaskID, &o.DurationMs, &o.ErrorCount, &o.RetryCount, &o.Success, &files,
		&o.Strategy, &mode, &o.FailureDetails, &ts, &patterns, &criteria, &o.ErrorCountSource,
		&o.Score.Raw, &o.Score.Type, &score, &recorded, &exploration, &o.Task, &tags, &scores, &o.Inference)
	if err != nil {
		return o, err
	}
	if o.Tags, err = fromJSONList(tags); err != nil {
		return o, err
	}
	if scores != "" && scores != "{}" {
		if err := json.Unmarshal([]byte(scores), &o.CriterionScores); err != nil {
			return o, fmt.Errorf("decode criterion scores: %w", err)
		}
	}
	if o.Exploration, err = fromJSONSummary(exploration); err != nil {
		return o, err
	}
	o.Inferred = o.Inference != ""
	o.FailureMode = learning.FailureMode(mode)
	o.Timestamp, o.RecordedAt = fromMicros(ts), fromMicros(recorded)
	if o.FilesTouched, err = fromJSONList(files); err != nil {
		return o, err
	}
	if o.Patterns, err = fromJSONList(patterns); err != nil {
		return o, err
	}
	if o.Criteria, err = fromJSONList(criteria); err != nil {
		return o, err
	}
	raw, typ := o.Score.Raw, o.Score.Type
	if err := json.Unmarshal([]byte(score), &o.Score); err != nil {
		return o, fmt.Errorf("decode score: %w", err)
	}
	o.Score.Raw, o.Score.Type = raw, typ
	return o, nil
}

// InsertOutcome implements store.OutcomeStorage.
func (t *Tx) InsertOutcome(ctx context.Context, o learning.Outcome) (bool, error) {
	args, err := outcomeArgs(o)
	if err != nil {
		return false, err
	}
	return t.insert(ctx, "outcome", `INSERT INTO outcomes (`+outcomeCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, args...)
}

// GetOutcome implements store.OutcomeStorage.
func (t *Tx) GetOutcome(ctx context.Context, project, id string) (learning.Outcome, error) {
	return one(ctx, t, "outcome "+id, scanOutcome,
		`SELECT `+outcomeCols+` FROM outcomes WHERE project = ? AND id = ?`, project, id)
}

func (t *Tx) outcomeWhere(project string, f store.OutcomeFilter) (string, []any) {
	q, args := ` FROM outcomes WHERE project = ?`, []any{project}
	if f.TaskID != "" {
		q = ` FROM outcomes` + t.d.OutcomeTaskIndex + ` WHERE project = ? AND task_id = ?`
		args = append(args, f.TaskID)
	}
	if !f.Since.IsZero() {
		q += ` AND recorded_at >= ?`
		args = append(args, f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		q += ` AND recorded_at < ?`
		args = append(args, f.Until.UnixMicro())
	}
	return q, args
}

// ListOutcomes implements store.OutcomeStorage.
func (t *Tx) ListOutcomes(ctx context.Context, project string, f store.OutcomeFilter) ([]learning.Outcome, error) {
	if list, ok := t.prefetchedOutcome(project, f); ok {
		return list, nil
	}
	defer t.outcomeRead(project, f.TaskID)()
	where, args := t.outcomeWhere(project, f)
	q, args := page(`SELECT `+outcomeCols+where+` ORDER BY recorded_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "outcomes", scanOutcome, q, args...)
}

// CountOutcomes implements store.OutcomeStorage.
func (t *Tx) CountOutcomes(ctx context.Context, project string, f store.OutcomeFilter) (int64, error) {
	defer t.outcomeRead(project, f.TaskID)()
	where, args := t.outcomeWhere(project, f)
	return t.count(ctx, "outcomes", `SELECT COUNT(*)`+where, args...)
}

// EachOutcome implements store.OutcomeStorage.
func (t *Tx) EachOutcome(ctx context.Context, project string, fn func(learning.Outcome) error) error {
	return each(ctx, t, "outcomes", scanOutcome, fn,
		`SELECT `+outcomeCols+` FROM outcomes WHERE project = ? ORDER BY recorded_at, id`, project)
}
