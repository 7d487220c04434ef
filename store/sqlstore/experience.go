package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// The experience tables (migration 00004) order listings by NOT NULL time
// columns: a time is stored as its microseconds since the Unix epoch, the
// zero time included, so it sorts the same on every backend.

func at(t time.Time) int64 { return t.UnixMicro() }

func fromAt(n int64) time.Time { return time.UnixMicro(n).UTC() }

// jsonSlice encodes a list as JSON text; nil is stored as [].
func jsonSlice[T any](what string, v []T) (string, error) {
	if len(v) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w: %v", what, store.ErrInvalid, err)
	}
	return string(b), nil
}

// fromJSONSlice decodes a JSON list, never returning nil.
func fromJSONSlice[T any](what, s string) ([]T, error) {
	out := []T{}
	if s == "" || s == "[]" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// inList is "col IN (?, ?, …)" for n values.
func inList(col string, n int) string {
	return col + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

func strArgs[S ~string](v []S) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}

// Turns.

const turnCols = `project, id, task_id, turn_id, role, content, source, ts, seq`

func scanTurn(s scanner) (experience.Turn, error) {
	var t experience.Turn
	var ts int64
	err := s.Scan(&t.Project, &t.ID, &t.TaskID, &t.TurnID, &t.Role, &t.Content, &t.Source, &ts, &t.Seq)
	t.Time = fromAt(ts)
	return t, err
}

// InsertTurn implements store.ExperienceStorage.
func (t *Tx) InsertTurn(ctx context.Context, tu experience.Turn) (bool, error) {
	return t.insert(ctx, "turn", `INSERT INTO experience_turns (`+turnCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, tu.Project, tu.ID, tu.TaskID, tu.TurnID, string(tu.Role), tu.Content, tu.Source, at(tu.Time), tu.Seq)
}

// GetTurn implements store.ExperienceStorage.
func (t *Tx) GetTurn(ctx context.Context, project, id string) (experience.Turn, error) {
	return one(ctx, t, "turn "+id, scanTurn, `SELECT `+turnCols+` FROM experience_turns WHERE project = ? AND id = ?`, project, id)
}

func turnWhere(project string, f store.TurnFilter) (string, []any) {
	q, args := ` FROM experience_turns WHERE project = ?`, []any{project}
	if f.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, f.TaskID)
	}
	if len(f.Roles) > 0 {
		q += ` AND ` + inList("role", len(f.Roles))
		args = append(args, strArgs(f.Roles)...)
	}
	if !f.Since.IsZero() {
		q += ` AND ts >= ?`
		args = append(args, at(f.Since))
	}
	return q, args
}

// ListTurns implements store.ExperienceStorage.
func (t *Tx) ListTurns(ctx context.Context, project string, f store.TurnFilter) ([]experience.Turn, error) {
	where, args := turnWhere(project, f)
	order := ` ORDER BY ts, seq, id`
	if f.NewestFirst {
		order = ` ORDER BY ts DESC, seq DESC, id DESC`
	}
	q, args := page(`SELECT `+turnCols+where+order, args, f.Limit, f.Offset)
	return many(ctx, t, "turns", scanTurn, q, args...)
}

// CountTurns implements store.ExperienceStorage.
func (t *Tx) CountTurns(ctx context.Context, project string, f store.TurnFilter) (int64, error) {
	where, args := turnWhere(project, f)
	return t.count(ctx, "turns", `SELECT COUNT(*)`+where, args...)
}

// Feedback signals.

const signalCols = `project, id, task_id, type, source, evidence, turn_id, confidence, extractor, created_at`

func scanSignal(s scanner) (experience.FeedbackSignal, error) {
	var g experience.FeedbackSignal
	var created int64
	err := s.Scan(&g.Project, &g.ID, &g.TaskID, &g.Type, &g.Source, &g.Evidence, &g.TurnID, &g.Confidence,
		&g.Extractor, &created)
	g.CreatedAt = fromAt(created)
	return g, err
}

// InsertSignal implements store.ExperienceStorage.
func (t *Tx) InsertSignal(ctx context.Context, g experience.FeedbackSignal) (bool, error) {
	return t.insert(ctx, "signal", `INSERT INTO feedback_signals (`+signalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, g.Project, g.ID, g.TaskID, string(g.Type), string(g.Source), g.Evidence, g.TurnID,
		g.Confidence, string(g.Extractor), at(g.CreatedAt))
}

func signalWhere(project string, f store.SignalFilter) (string, []any) {
	q, args := ` FROM feedback_signals WHERE project = ?`, []any{project}
	if f.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, f.TaskID)
	}
	if f.Type != "" {
		q += ` AND type = ?`
		args = append(args, string(f.Type))
	}
	return q, args
}

// ListSignals implements store.ExperienceStorage.
func (t *Tx) ListSignals(ctx context.Context, project string, f store.SignalFilter) ([]experience.FeedbackSignal, error) {
	where, args := signalWhere(project, f)
	q, args := page(`SELECT `+signalCols+where+` ORDER BY created_at, id`, args, f.Limit, f.Offset)
	return many(ctx, t, "signals", scanSignal, q, args...)
}

// CountSignals implements store.ExperienceStorage.
func (t *Tx) CountSignals(ctx context.Context, project string, f store.SignalFilter) (int64, error) {
	where, args := signalWhere(project, f)
	return t.count(ctx, "signals", `SELECT COUNT(*)`+where, args...)
}

// DeleteSignals implements store.ExperienceStorage.
func (t *Tx) DeleteSignals(ctx context.Context, project, taskID string, by experience.Extractor) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM feedback_signals WHERE project = ? AND task_id = ? AND extractor = ?`,
		project, taskID, string(by))
	if err != nil {
		return 0, fmt.Errorf("delete signals: %w", err)
	}
	return res.RowsAffected()
}

// Task experiences.

const experienceCols = `project, task_id, goal, success_criteria, failed_attempts, working_approach, heuristics,
	signals, mode, extractor, calls, created_at`

func scanExperience(s scanner) (experience.TaskExperience, error) {
	var e experience.TaskExperience
	var criteria, attempts, heuristics, signals string
	var created int64
	err := s.Scan(&e.Project, &e.TaskID, &e.Goal, &criteria, &attempts, &e.WorkingApproach, &heuristics,
		&signals, &e.Mode, &e.Extractor, &e.Calls, &created)
	if err != nil {
		return e, err
	}
	e.CreatedAt = fromAt(created)
	if e.SuccessCriteria, err = fromJSONSlice[string]("success criteria", criteria); err != nil {
		return e, err
	}
	if e.FailedAttempts, err = fromJSONSlice[experience.FailedAttempt]("failed attempts", attempts); err != nil {
		return e, err
	}
	if e.Heuristics, err = fromJSONSlice[experience.TransferableHeuristic]("heuristics", heuristics); err != nil {
		return e, err
	}
	e.Signals, err = fromJSONSlice[experience.FeedbackSignal]("signals", signals)
	return e, err
}

// InsertExperience implements store.ExperienceStorage.
func (t *Tx) InsertExperience(ctx context.Context, e experience.TaskExperience) (bool, error) {
	criteria, err := jsonSlice("success criteria", e.SuccessCriteria)
	if err != nil {
		return false, err
	}
	attempts, err := jsonSlice("failed attempts", e.FailedAttempts)
	if err != nil {
		return false, err
	}
	heuristics, err := jsonSlice("heuristics", e.Heuristics)
	if err != nil {
		return false, err
	}
	signals, err := jsonSlice("signals", e.Signals)
	if err != nil {
		return false, err
	}
	return t.insert(ctx, "experience", `INSERT INTO task_experiences (`+experienceCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.Project, e.TaskID, e.Goal, criteria, attempts, e.WorkingApproach, heuristics, signals,
		string(e.Mode), string(e.Extractor), e.Calls, at(e.CreatedAt))
}

// GetExperience implements store.ExperienceStorage.
func (t *Tx) GetExperience(ctx context.Context, project, taskID string) (experience.TaskExperience, error) {
	return one(ctx, t, "experience of task "+taskID, scanExperience,
		`SELECT `+experienceCols+` FROM task_experiences WHERE project = ? AND task_id = ?`, project, taskID)
}

// ListExperiences implements store.ExperienceStorage.
func (t *Tx) ListExperiences(ctx context.Context, project string, f store.PageFilter) ([]experience.TaskExperience, error) {
	q, args := page(`SELECT `+experienceCols+` FROM task_experiences WHERE project = ?
		ORDER BY created_at DESC, task_id DESC`, []any{project}, f.Limit, f.Offset)
	return many(ctx, t, "experiences", scanExperience, q, args...)
}

// CountExperiences implements store.ExperienceStorage.
func (t *Tx) CountExperiences(ctx context.Context, project string) (int64, error) {
	return t.count(ctx, "experiences", `SELECT COUNT(*) FROM task_experiences WHERE project = ?`, project)
}

// Heuristics.

const heuristicCols = `project, id, kind, trigger_text, rule_text, why, status, status_reason, support_tasks,
	evidence_count, helpful_count, misleading_count, misleading_streak, recall_count, superseded_by, source_task_id,
	last_recalled_at, last_validated_at, created_at, updated_at`

func scanHeuristic(s scanner) (experience.Heuristic, error) {
	var h experience.Heuristic
	var recalled, validated sql.NullInt64
	var created, updated int64
	err := s.Scan(&h.Project, &h.ID, &h.Kind, &h.Trigger, &h.Rule, &h.Why, &h.Status, &h.StatusReason,
		&h.SupportTasks, &h.EvidenceCount, &h.HelpfulCount, &h.MisleadingCount, &h.MisleadingStreak, &h.RecallCount,
		&h.SupersededBy, &h.SourceTaskID, &recalled, &validated, &created, &updated)
	h.LastRecalledAt, h.LastValidatedAt = fromMicrosPtr(recalled), fromMicrosPtr(validated)
	h.CreatedAt, h.UpdatedAt = fromAt(created), fromAt(updated)
	return h, err
}

// heuristicSearchKey is the lower-cased text HeuristicFilter.Search looks
// in: trigger, rule and why, one per line.
func heuristicSearchKey(h experience.Heuristic) string {
	return strings.ToLower(h.Trigger + "\n" + h.Rule + "\n" + h.Why)
}

// heuristicArgs are the values of heuristicCols, then the search key.
func heuristicArgs(h experience.Heuristic) []any {
	return []any{h.Project, h.ID, string(h.Kind), h.Trigger, h.Rule, h.Why, string(h.Status), h.StatusReason,
		h.SupportTasks, h.EvidenceCount, h.HelpfulCount, h.MisleadingCount, h.MisleadingStreak, h.RecallCount,
		h.SupersededBy, h.SourceTaskID, microsPtr(h.LastRecalledAt), microsPtr(h.LastValidatedAt),
		at(h.CreatedAt), at(h.UpdatedAt), heuristicSearchKey(h)}
}

// InsertHeuristic implements store.ExperienceStorage.
func (t *Tx) InsertHeuristic(ctx context.Context, h experience.Heuristic) (bool, error) {
	return t.insert(ctx, "heuristic", `INSERT INTO heuristics (`+heuristicCols+`, search_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		heuristicArgs(h)...)
}

// GetHeuristic implements store.ExperienceStorage.
func (t *Tx) GetHeuristic(ctx context.Context, project, id string) (experience.Heuristic, error) {
	return one(ctx, t, "heuristic "+id, scanHeuristic,
		`SELECT `+heuristicCols+` FROM heuristics WHERE project = ? AND id = ?`, project, id)
}

// LockHeuristic implements store.ExperienceStorage.
func (t *Tx) LockHeuristic(ctx context.Context, project, id string) (experience.Heuristic, error) {
	return one(ctx, t, "heuristic "+id, scanHeuristic,
		`SELECT `+heuristicCols+` FROM heuristics WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

// UpdateHeuristic implements store.ExperienceStorage.
func (t *Tx) UpdateHeuristic(ctx context.Context, h experience.Heuristic) error {
	a := heuristicArgs(h)
	return t.change(ctx, "update heuristic "+h.ID, `UPDATE heuristics SET kind = ?, trigger_text = ?, rule_text = ?,
		why = ?, status = ?, status_reason = ?, support_tasks = ?, evidence_count = ?, helpful_count = ?,
		misleading_count = ?, misleading_streak = ?, recall_count = ?, superseded_by = ?, source_task_id = ?,
		last_recalled_at = ?, last_validated_at = ?, created_at = ?, updated_at = ?, search_key = ?
		WHERE project = ? AND id = ?`, append(a[2:], a[0], a[1])...)
}

func heuristicWhere(project string, f store.HeuristicFilter) (string, []any) {
	q, args := ` FROM heuristics WHERE project = ?`, []any{project}
	if len(f.Statuses) > 0 {
		q += ` AND ` + inList("status", len(f.Statuses))
		args = append(args, strArgs(f.Statuses)...)
	}
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, string(f.Kind))
	}
	if f.Search != "" {
		q += ` AND search_key LIKE ? ESCAPE '\'`
		args = append(args, likePattern(strings.ToLower(f.Search)))
	}
	return q, args
}

// ListHeuristics implements store.ExperienceStorage.
func (t *Tx) ListHeuristics(ctx context.Context, project string, f store.HeuristicFilter) ([]experience.Heuristic, error) {
	where, args := heuristicWhere(project, f)
	q, args := page(`SELECT `+heuristicCols+where+` ORDER BY updated_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "heuristics", scanHeuristic, q, args...)
}

// CountHeuristics implements store.ExperienceStorage.
func (t *Tx) CountHeuristics(ctx context.Context, project string, f store.HeuristicFilter) (int64, error) {
	where, args := heuristicWhere(project, f)
	return t.count(ctx, "heuristics", `SELECT COUNT(*)`+where, args...)
}

// EachHeuristic implements store.ExperienceStorage.
func (t *Tx) EachHeuristic(ctx context.Context, project string, statuses []experience.HeuristicStatus, fn func(experience.Heuristic) error) error {
	where, args := heuristicWhere(project, store.HeuristicFilter{Statuses: statuses})
	return each(ctx, t, "heuristics", scanHeuristic, fn, `SELECT `+heuristicCols+where+` ORDER BY id`, args...)
}

const evidenceCols = `project, id, heuristic_id, task_id, action, text, similarity, created_at`

func scanEvidence(s scanner) (experience.HeuristicEvidence, error) {
	var e experience.HeuristicEvidence
	var created int64
	err := s.Scan(&e.Project, &e.ID, &e.HeuristicID, &e.TaskID, &e.Action, &e.Text, &e.Similarity, &created)
	e.CreatedAt = fromAt(created)
	return e, err
}

// InsertEvidence implements store.ExperienceStorage.
func (t *Tx) InsertEvidence(ctx context.Context, e experience.HeuristicEvidence) (bool, error) {
	return t.insert(ctx, "evidence", `INSERT INTO heuristic_evidence (`+evidenceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, e.Project, e.ID, e.HeuristicID, e.TaskID, string(e.Action), e.Text, e.Similarity,
		at(e.CreatedAt))
}

// ListEvidence implements store.ExperienceStorage.
func (t *Tx) ListEvidence(ctx context.Context, project, heuristicID string) ([]experience.HeuristicEvidence, error) {
	return many(ctx, t, "evidence", scanEvidence, `SELECT `+evidenceCols+` FROM heuristic_evidence
		WHERE project = ? AND heuristic_id = ? ORDER BY created_at, id`, project, heuristicID)
}

// AddSupport implements store.ExperienceStorage.
func (t *Tx) AddSupport(ctx context.Context, project, heuristicID, taskID string, when time.Time) (bool, error) {
	return t.insert(ctx, "support", `INSERT INTO heuristic_support (project, heuristic_id, task_id, created_at)
		VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, project, heuristicID, taskID, at(when))
}

// ListSupport implements store.ExperienceStorage.
func (t *Tx) ListSupport(ctx context.Context, project, heuristicID string) ([]store.Support, error) {
	return many(ctx, t, "support", func(s scanner) (store.Support, error) {
		var sp store.Support
		var created int64
		err := s.Scan(&sp.TaskID, &created)
		sp.At = fromAt(created)
		return sp, err
	}, `SELECT task_id, created_at FROM heuristic_support WHERE project = ? AND heuristic_id = ? ORDER BY created_at, task_id`,
		project, heuristicID)
}

const heuristicFeedbackCols = `project, id, heuristic_id, recall_id, task_id, verdict, note, source, created_at`

func scanHeuristicFeedback(s scanner) (experience.HeuristicFeedback, error) {
	var f experience.HeuristicFeedback
	var created int64
	err := s.Scan(&f.Project, &f.ID, &f.HeuristicID, &f.RecallID, &f.TaskID, &f.Verdict, &f.Note, &f.Source, &created)
	f.CreatedAt = fromAt(created)
	return f, err
}

// InsertHeuristicFeedback implements store.ExperienceStorage.
func (t *Tx) InsertHeuristicFeedback(ctx context.Context, f experience.HeuristicFeedback) (bool, error) {
	return t.insert(ctx, "heuristic feedback", `INSERT INTO heuristic_feedback (`+heuristicFeedbackCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, f.Project, f.ID, f.HeuristicID, f.RecallID,
		f.TaskID, string(f.Verdict), f.Note, f.Source, at(f.CreatedAt))
}

// ListHeuristicFeedback implements store.ExperienceStorage.
func (t *Tx) ListHeuristicFeedback(ctx context.Context, project, heuristicID string) ([]experience.HeuristicFeedback, error) {
	return many(ctx, t, "heuristic feedback", scanHeuristicFeedback, `SELECT `+heuristicFeedbackCols+`
		FROM heuristic_feedback WHERE project = ? AND heuristic_id = ? ORDER BY created_at, id`, project, heuristicID)
}

// Recall events.

const recallCols = `project, id, task_id, query, live_signals, items, created_at`

func scanRecall(s scanner) (experience.RecallEvent, error) {
	var r experience.RecallEvent
	var live, items string
	var created int64
	if err := s.Scan(&r.Project, &r.ID, &r.TaskID, &r.Query, &live, &items, &created); err != nil {
		return r, err
	}
	r.CreatedAt = fromAt(created)
	var err error
	if r.LiveSignals, err = fromJSONSlice[experience.LiveSignal]("live signals", live); err != nil {
		return r, err
	}
	r.Items, err = fromJSONSlice[experience.RecallItem]("recall items", items)
	return r, err
}

// InsertRecall implements store.ExperienceStorage. The ids of the items
// go to recall_items too, for RecallFilter.RefID.
func (t *Tx) InsertRecall(ctx context.Context, r experience.RecallEvent) (bool, error) {
	live, err := jsonSlice("live signals", r.LiveSignals)
	if err != nil {
		return false, err
	}
	items, err := jsonSlice("recall items", r.Items)
	if err != nil {
		return false, err
	}
	ok, err := t.insert(ctx, "recall", `INSERT INTO recalls (`+recallCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, r.Project, r.ID, r.TaskID, r.Query, live, items, at(r.CreatedAt))
	if !ok || err != nil {
		return ok, err
	}
	seen := map[string]bool{}
	for _, it := range r.Items {
		if seen[it.RefID] {
			continue
		}
		seen[it.RefID] = true
		if _, err := t.exec(ctx, `INSERT INTO recall_items (project, ref_id, recall_id) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, r.Project, it.RefID, r.ID); err != nil {
			return false, fmt.Errorf("insert recall item: %w", err)
		}
	}
	return true, nil
}

// GetRecall implements store.ExperienceStorage.
func (t *Tx) GetRecall(ctx context.Context, project, id string) (experience.RecallEvent, error) {
	return one(ctx, t, "recall "+id, scanRecall, `SELECT `+recallCols+` FROM recalls WHERE project = ? AND id = ?`, project, id)
}

func recallWhere(project string, f store.RecallFilter) (string, []any) {
	q, args := ` FROM recalls WHERE project = ?`, []any{project}
	if f.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, f.TaskID)
	}
	if f.RefID != "" {
		q += ` AND id IN (SELECT recall_id FROM recall_items WHERE project = ? AND ref_id = ?)`
		args = append(args, project, f.RefID)
	}
	return q, args
}

// ListRecalls implements store.ExperienceStorage.
func (t *Tx) ListRecalls(ctx context.Context, project string, f store.RecallFilter) ([]experience.RecallEvent, error) {
	where, args := recallWhere(project, f)
	q, args := page(`SELECT `+recallCols+where+` ORDER BY created_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "recalls", scanRecall, q, args...)
}

// CountRecalls implements store.ExperienceStorage.
func (t *Tx) CountRecalls(ctx context.Context, project string, f store.RecallFilter) (int64, error) {
	where, args := recallWhere(project, f)
	return t.count(ctx, "recalls", `SELECT COUNT(*)`+where, args...)
}

// Skills.

const skillCols = `project, id, name, description, when_to_use, steps, status, version, content, source_task_id,
	heuristic_ids, created_at, updated_at`

func scanSkill(s scanner) (experience.Skill, error) {
	var k experience.Skill
	var steps, heuristics string
	var created, updated int64
	err := s.Scan(&k.Project, &k.ID, &k.Name, &k.Description, &k.WhenToUse, &steps, &k.Status, &k.Version,
		&k.Content, &k.SourceTaskID, &heuristics, &created, &updated)
	if err != nil {
		return k, err
	}
	k.CreatedAt, k.UpdatedAt = fromAt(created), fromAt(updated)
	if k.Steps, err = fromJSONList(steps); err != nil {
		return k, err
	}
	k.HeuristicIDs, err = fromJSONList(heuristics)
	return k, err
}

// skillSearchKey is the lower-cased text SkillFilter.Search looks in:
// name and description, one per line.
func skillSearchKey(k experience.Skill) string {
	return strings.ToLower(k.Name + "\n" + k.Description)
}

// skillArgs are the values of skillCols, then the search key.
func skillArgs(k experience.Skill) []any {
	return []any{k.Project, k.ID, k.Name, k.Description, k.WhenToUse, jsonList(k.Steps), string(k.Status), k.Version,
		k.Content, k.SourceTaskID, jsonList(k.HeuristicIDs), at(k.CreatedAt), at(k.UpdatedAt), skillSearchKey(k)}
}

// InsertSkill implements store.ExperienceStorage: the conflict clause
// covers both the id and the unique name.
func (t *Tx) InsertSkill(ctx context.Context, k experience.Skill) (bool, error) {
	return t.insert(ctx, "skill", `INSERT INTO skills (`+skillCols+`, search_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, skillArgs(k)...)
}

// GetSkill implements store.ExperienceStorage.
func (t *Tx) GetSkill(ctx context.Context, project, id string) (experience.Skill, error) {
	return one(ctx, t, "skill "+id, scanSkill, `SELECT `+skillCols+` FROM skills WHERE project = ? AND id = ?`, project, id)
}

// GetSkillByName implements store.ExperienceStorage.
func (t *Tx) GetSkillByName(ctx context.Context, project, name string) (experience.Skill, error) {
	return one(ctx, t, "skill named "+name, scanSkill,
		`SELECT `+skillCols+` FROM skills WHERE project = ? AND name = ?`, project, name)
}

// LockSkill implements store.ExperienceStorage.
func (t *Tx) LockSkill(ctx context.Context, project, id string) (experience.Skill, error) {
	return one(ctx, t, "skill "+id, scanSkill,
		`SELECT `+skillCols+` FROM skills WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

// UpdateSkill implements store.ExperienceStorage. The name is checked
// before writing, so a taken name is reported as ErrNameTaken (and does
// not abort a PostgreSQL transaction with a constraint violation).
func (t *Tx) UpdateSkill(ctx context.Context, k experience.Skill) error {
	ids, err := many(ctx, t, "skills", func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	}, `SELECT id FROM skills WHERE project = ? AND (id = ? OR name = ?)`, k.Project, k.ID, k.Name)
	if err != nil {
		return err
	}
	exists, taken := false, ""
	for _, id := range ids {
		if id == k.ID {
			exists = true
		} else {
			taken = id
		}
	}
	if !exists {
		return fmt.Errorf("update skill %s: %w", k.ID, store.ErrNotFound)
	}
	if taken != "" {
		return fmt.Errorf("update skill %s: name %q belongs to skill %s: %w", k.ID, k.Name, taken, store.ErrNameTaken)
	}
	a := skillArgs(k)
	return t.change(ctx, "update skill "+k.ID, `UPDATE skills SET name = ?, description = ?, when_to_use = ?,
		steps = ?, status = ?, version = ?, content = ?, source_task_id = ?, heuristic_ids = ?, created_at = ?,
		updated_at = ?, search_key = ? WHERE project = ? AND id = ?`, append(a[2:], a[0], a[1])...)
}

func skillWhere(project string, f store.SkillFilter) (string, []any) {
	q, args := ` FROM skills WHERE project = ?`, []any{project}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.Search != "" {
		q += ` AND search_key LIKE ? ESCAPE '\'`
		args = append(args, likePattern(strings.ToLower(f.Search)))
	}
	return q, args
}

// ListSkills implements store.ExperienceStorage.
func (t *Tx) ListSkills(ctx context.Context, project string, f store.SkillFilter) ([]experience.Skill, error) {
	where, args := skillWhere(project, f)
	q, args := page(`SELECT `+skillCols+where+` ORDER BY name`, args, f.Limit, f.Offset)
	return many(ctx, t, "skills", scanSkill, q, args...)
}

// CountSkills implements store.ExperienceStorage.
func (t *Tx) CountSkills(ctx context.Context, project string, f store.SkillFilter) (int64, error) {
	where, args := skillWhere(project, f)
	return t.count(ctx, "skills", `SELECT COUNT(*)`+where, args...)
}

const skillVersionCols = `project, skill_id, version, content, changelog, source_task_id, created_at`

func scanSkillVersion(s scanner) (experience.SkillVersion, error) {
	var v experience.SkillVersion
	var created int64
	err := s.Scan(&v.Project, &v.SkillID, &v.Version, &v.Content, &v.Changelog, &v.SourceTaskID, &created)
	v.CreatedAt = fromAt(created)
	return v, err
}

// InsertSkillVersion implements store.ExperienceStorage.
func (t *Tx) InsertSkillVersion(ctx context.Context, v experience.SkillVersion) (bool, error) {
	return t.insert(ctx, "skill version", `INSERT INTO skill_versions (`+skillVersionCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, v.Project, v.SkillID, v.Version, v.Content, v.Changelog,
		v.SourceTaskID, at(v.CreatedAt))
}

// ListSkillVersions implements store.ExperienceStorage.
func (t *Tx) ListSkillVersions(ctx context.Context, project, skillID string) ([]experience.SkillVersion, error) {
	return many(ctx, t, "skill versions", scanSkillVersion, `SELECT `+skillVersionCols+` FROM skill_versions
		WHERE project = ? AND skill_id = ? ORDER BY version`, project, skillID)
}
