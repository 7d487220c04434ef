package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// maturityValueCols are the maturity columns after project and pattern_id.
const maturityValueCols = `helpful_sum, helpful_ref, harmful_sum, harmful_ref, helpful_count, harmful_count,
	neutral_count, manual_state, manual_reason, promoted_at, deprecated_at, last_validated, generation, reset_at, updated_at`

const maturityCols = `project, pattern_id, ` + maturityValueCols

// maturityScan scans maturity values through nullable holders, so that the
// same code reads a plain row and the optional side of a LEFT JOIN.
type maturityScan struct {
	hSum, xSum                                      sql.NullFloat64
	hRef, xRef, promoted, deprecated, lv, reset, up sql.NullInt64
	hCount, xCount, nCount, gen                     sql.NullInt64
	manual, reason                                  sql.NullString
}

func (ms *maturityScan) nullableDest() []any {
	return []any{&ms.hSum, &ms.hRef, &ms.xSum, &ms.xRef, &ms.hCount, &ms.xCount, &ms.nCount,
		&ms.manual, &ms.reason, &ms.promoted, &ms.deprecated, &ms.lv, &ms.gen, &ms.reset, &ms.up}
}

func (ms *maturityScan) finishNullable(project, patternID string) (learning.Maturity, error) {
	return learning.Maturity{
		Project:       project,
		PatternID:     patternID,
		Helpful:       learning.DecayedSum{Value: ms.hSum.Float64, Ref: fromMicros(ms.hRef)},
		Harmful:       learning.DecayedSum{Value: ms.xSum.Float64, Ref: fromMicros(ms.xRef)},
		HelpfulCount:  ms.hCount.Int64,
		HarmfulCount:  ms.xCount.Int64,
		NeutralCount:  ms.nCount.Int64,
		Manual:        learning.MaturityState(ms.manual.String),
		ManualReason:  ms.reason.String,
		PromotedAt:    fromMicrosPtr(ms.promoted),
		DeprecatedAt:  fromMicrosPtr(ms.deprecated),
		LastValidated: fromMicros(ms.lv),
		Generation:    ms.gen.Int64,
		ResetAt:       fromMicrosPtr(ms.reset),
		UpdatedAt:     fromMicros(ms.up),
	}, nil
}

func scanMaturity(s scanner) (learning.Maturity, error) {
	var project, id string
	var ms maturityScan
	if err := s.Scan(append([]any{&project, &id}, ms.nullableDest()...)...); err != nil {
		return learning.Maturity{}, err
	}
	return ms.finishNullable(project, id)
}

func maturityKey(project, patternID string) rowKey { return rowKey{"maturity", project, patternID} }

// GetMaturity implements store.MaturityStorage.
func (t *Tx) GetMaturity(ctx context.Context, project, patternID string) (learning.Maturity, error) {
	k := maturityKey(project, patternID)
	if v, present, ok := t.lookup(k); ok {
		if !present {
			return learning.Maturity{}, fmt.Errorf("maturity of %s: %w", patternID, store.ErrNotFound)
		}
		return v.(learning.Maturity), nil
	}
	m, err := one(ctx, t, "maturity of "+patternID, scanMaturity,
		`SELECT `+maturityCols+` FROM maturity WHERE project = ? AND pattern_id = ?`, project, patternID)
	switch {
	case err == nil:
		t.remember(k, m, true)
	case errors.Is(err, store.ErrNotFound):
		t.remember(k, nil, false)
	}
	return m, err
}

// PutMaturity implements store.MaturityStorage.
func (t *Tx) PutMaturity(ctx context.Context, m learning.Maturity) error {
	t.touch(m.Project, m.PatternID, false)
	if t.agg != nil {
		t.stage(maturityKey(m.Project, m.PatternID), m)
		return nil
	}
	return t.writeMaturity(ctx, m)
}

func (t *Tx) writeMaturity(ctx context.Context, m learning.Maturity) error {
	return t.writeMaturities(ctx, []learning.Maturity{m})
}

// writeMaturities upserts maturity records in multi-row statements (in
// pattern order, the order concurrent writers lock them in).
func (t *Tx) writeMaturities(ctx context.Context, ms []learning.Maturity) error {
	slices.SortFunc(ms, func(a, b learning.Maturity) int {
		return cmp.Or(strings.Compare(a.Project, b.Project), strings.Compare(a.PatternID, b.PatternID))
	})
	return inStatements(ms, func(run []learning.Maturity) error {
		args := make([]any, 0, 17*len(run))
		for _, m := range run {
			args = append(args, m.Project, m.PatternID, m.Helpful.Value, micros(m.Helpful.Ref), m.Harmful.Value, micros(m.Harmful.Ref),
				m.HelpfulCount, m.HarmfulCount, m.NeutralCount, string(m.Manual), m.ManualReason, microsPtr(m.PromotedAt),
				microsPtr(m.DeprecatedAt), micros(m.LastValidated), m.Generation, microsPtr(m.ResetAt), micros(m.UpdatedAt))
		}
		if _, err := t.exec(ctx, `INSERT INTO maturity (`+maturityCols+`) VALUES `+placeholders(len(run), 17)+`
		ON CONFLICT (project, pattern_id) DO UPDATE SET helpful_sum = excluded.helpful_sum, helpful_ref = excluded.helpful_ref,
		harmful_sum = excluded.harmful_sum, harmful_ref = excluded.harmful_ref, helpful_count = excluded.helpful_count,
		harmful_count = excluded.harmful_count, neutral_count = excluded.neutral_count, manual_state = excluded.manual_state,
		manual_reason = excluded.manual_reason, promoted_at = excluded.promoted_at, deprecated_at = excluded.deprecated_at,
		last_validated = excluded.last_validated, generation = excluded.generation, reset_at = excluded.reset_at,
		updated_at = excluded.updated_at`, args...); err != nil {
			return fmt.Errorf("put maturity: %w", err)
		}
		return nil
	})
}

// ListMaturity implements store.MaturityStorage.
func (t *Tx) ListMaturity(ctx context.Context, project string) ([]learning.Maturity, error) {
	if err := t.flushFirst(ctx); err != nil {
		return nil, err
	}
	return many(ctx, t, "maturity", scanMaturity,
		`SELECT `+maturityCols+` FROM maturity WHERE project = ? ORDER BY pattern_id`, project)
}

// DeleteMaturity implements store.MaturityStorage.
func (t *Tx) DeleteMaturity(ctx context.Context, project, patternID string) error {
	if err := t.flushFirst(ctx); err != nil { // a staged record must exist in SQL to be deleted
		return err
	}
	err := t.change(ctx, "delete maturity of "+patternID, `DELETE FROM maturity WHERE project = ? AND pattern_id = ?`, project, patternID)
	if err == nil {
		t.rememberLocked(maturityKey(project, patternID), nil, false, true)
		t.touch(project, patternID, false)
	}
	return err
}

const maturityFeedbackCols = `project, id, pattern_id, success, type, weight, task_id, ts, generation`

func scanMaturityFeedback(s scanner) (learning.MaturityFeedback, error) {
	var f learning.MaturityFeedback
	var ts sql.NullInt64
	err := s.Scan(&f.Project, &f.ID, &f.PatternID, &f.Success, &f.Type, &f.Weight, &f.TaskID, &ts, &f.Generation)
	f.Timestamp = fromMicros(ts)
	return f, err
}

// InsertMaturityFeedback implements store.MaturityStorage.
func (t *Tx) InsertMaturityFeedback(ctx context.Context, f learning.MaturityFeedback) (bool, error) {
	if err := t.flushAppends(ctx); err != nil {
		return false, err
	}
	return t.insert(ctx, "maturity feedback", `INSERT INTO maturity_feedback (`+maturityFeedbackCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, f.Project, f.ID, f.PatternID, f.Success, string(f.Type), f.Weight, f.TaskID, micros(f.Timestamp),
		f.Generation)
}

// MaturityFeedback implements store.MaturityStorage.
func (t *Tx) MaturityFeedback(ctx context.Context, project, patternID string) ([]learning.MaturityFeedback, error) {
	if err := t.flushAppends(ctx); err != nil {
		return nil, err
	}
	return many(ctx, t, "maturity feedback", scanMaturityFeedback, `SELECT `+maturityFeedbackCols+`
		FROM maturity_feedback WHERE project = ? AND pattern_id = ? ORDER BY ts, id`, project, patternID)
}

// EachMaturityFeedback implements store.MaturityStorage.
func (t *Tx) EachMaturityFeedback(ctx context.Context, project string, fn func(learning.MaturityFeedback) error) error {
	if err := t.flushAppends(ctx); err != nil {
		return err
	}
	return each(ctx, t, "maturity feedback", scanMaturityFeedback, fn,
		`SELECT `+maturityFeedbackCols+` FROM maturity_feedback WHERE project = ? ORDER BY ts, id`, project)
}
