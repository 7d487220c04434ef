package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// The failure-learning tables (migration 00014). Seed fields are columns
// (for filters and people reading the database); the `data` column holds
// the record as JSON, which is what is read back.

// PutTrace implements store.TraceStorage.
func (t *Tx) PutTrace(ctx context.Context, project string, tr trace.ExecutionTrace, updatedAt time.Time) error {
	head := tr
	head.Attempts = nil
	data, err := json.Marshal(head)
	if err != nil {
		return fmt.Errorf("encode trace %s: %w", tr.ID, err)
	}
	if _, err := t.exec(ctx, `INSERT INTO trace_traces (project, id, skill_id, task_id, session_id, family, status,
		final_success, attempts, created_at, updated_at, duration_ms, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project, id) DO UPDATE SET skill_id = excluded.skill_id, task_id = excluded.task_id,
		session_id = excluded.session_id, family = excluded.family, status = excluded.status,
		final_success = excluded.final_success, attempts = excluded.attempts, created_at = excluded.created_at,
		updated_at = excluded.updated_at, duration_ms = excluded.duration_ms, data = excluded.data`,
		project, tr.ID, tr.SkillID, tr.TaskID, tr.SessionID, tr.Family, tr.Status(), tr.FinalSuccess, len(tr.Attempts),
		tr.CreatedAt.UnixMicro(), micros(updatedAt), tr.DurationMS, string(data)); err != nil {
		return fmt.Errorf("put trace %s: %w", tr.ID, err)
	}
	if _, err := t.exec(ctx, `DELETE FROM trace_attempts WHERE project = ? AND trace_id = ? AND idx > ?`,
		project, tr.ID, len(tr.Attempts)); err != nil {
		return fmt.Errorf("put trace %s attempts: %w", tr.ID, err)
	}
	for _, a := range tr.Attempts {
		ad, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode trace %s attempt %d: %w", tr.ID, a.Index, err)
		}
		if _, err := t.exec(ctx, `INSERT INTO trace_attempts (project, trace_id, idx, at, success, error_type, error,
			fix_applied, fix_source, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (project, trace_id, idx) DO UPDATE SET at = excluded.at, success = excluded.success,
			error_type = excluded.error_type, error = excluded.error, fix_applied = excluded.fix_applied,
			fix_source = excluded.fix_source, data = excluded.data`,
			project, tr.ID, a.Index, a.Timestamp.UnixMicro(), a.Success, a.ErrorType, a.Error, a.FixApplied,
			string(a.FixSource), string(ad)); err != nil {
			return fmt.Errorf("put trace %s attempt %d: %w", tr.ID, a.Index, err)
		}
	}
	return nil
}

func scanTraceHead(s scanner) (trace.ExecutionTrace, error) {
	var data string
	var tr trace.ExecutionTrace
	if err := s.Scan(&data); err != nil {
		return tr, err
	}
	if err := json.Unmarshal([]byte(data), &tr); err != nil {
		return tr, fmt.Errorf("decode trace: %w", err)
	}
	return tr, nil
}

func scanAttempt(s scanner) (attemptRow, error) {
	var r attemptRow
	var data string
	if err := s.Scan(&r.traceID, &data); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(data), &r.a); err != nil {
		return r, fmt.Errorf("decode attempt: %w", err)
	}
	return r, nil
}

type attemptRow struct {
	traceID string
	a       trace.Attempt
}

// attach reads the attempts of the given traces (in one query per 200
// traces) and sets them in index order.
func (t *Tx) attach(ctx context.Context, project string, traces []trace.ExecutionTrace) error {
	pos := make(map[string]int, len(traces))
	for i := range traces {
		pos[traces[i].ID] = i
		traces[i].Attempts = []trace.Attempt{}
	}
	for start := 0; start < len(traces); start += 200 {
		end := min(start+200, len(traces))
		q := `SELECT trace_id, data FROM trace_attempts WHERE project = ? AND trace_id IN (`
		args := []any{project}
		for i := start; i < end; i++ {
			if i > start {
				q += ", "
			}
			q += "?"
			args = append(args, traces[i].ID)
		}
		q += `) ORDER BY trace_id, idx`
		err := each(ctx, t, "trace attempts", scanAttempt, func(r attemptRow) error {
			if i, ok := pos[r.traceID]; ok {
				traces[i].Attempts = append(traces[i].Attempts, r.a)
			}
			return nil
		}, q, args...)
		if err != nil {
			return err
		}
	}
	return nil
}

// GetTrace implements store.TraceStorage.
func (t *Tx) GetTrace(ctx context.Context, project, id string) (trace.ExecutionTrace, error) {
	tr, err := one(ctx, t, "trace "+id, scanTraceHead, `SELECT data FROM trace_traces WHERE project = ? AND id = ?`, project, id)
	if err != nil {
		return tr, err
	}
	list := []trace.ExecutionTrace{tr}
	if err := t.attach(ctx, project, list); err != nil {
		return tr, err
	}
	return list[0], nil
}

func traceWhere(project string, f store.TraceFilter) (string, []any) {
	q, args := ` FROM trace_traces WHERE project = ?`, []any{project}
	add := func(cond string, v any) {
		q += ` AND ` + cond
		args = append(args, v)
	}
	if f.SkillID != "" {
		add(`skill_id = ?`, f.SkillID)
	}
	if f.TaskID != "" {
		add(`task_id = ?`, f.TaskID)
	}
	if f.SessionID != "" {
		add(`session_id = ?`, f.SessionID)
	}
	if f.Status != "" {
		add(`status = ?`, f.Status)
	}
	if !f.Since.IsZero() {
		add(`created_at >= ?`, f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		add(`created_at < ?`, f.Until.UnixMicro())
	}
	return q, args
}

// ListTraces implements store.TraceStorage.
func (t *Tx) ListTraces(ctx context.Context, project string, f store.TraceFilter) ([]trace.ExecutionTrace, error) {
	where, args := traceWhere(project, f)
	q, args := page(`SELECT data`+where+` ORDER BY created_at DESC, id DESC`, args, f.Limit, f.Offset)
	out, err := many(ctx, t, "traces", scanTraceHead, q, args...)
	if err != nil {
		return nil, err
	}
	return out, t.attach(ctx, project, out)
}

// CountTraces implements store.TraceStorage.
func (t *Tx) CountTraces(ctx context.Context, project string, f store.TraceFilter) (int64, error) {
	where, args := traceWhere(project, f)
	return t.count(ctx, "traces", `SELECT COUNT(*)`+where, args...)
}

// EachTrace implements store.TraceStorage. The traces' heads are read in
// one query, then their attempts 500 traces at a time, so the callback
// never runs while a query is open.
func (t *Tx) EachTrace(ctx context.Context, project string, f store.TraceFilter, fn func(trace.ExecutionTrace) error) error {
	f.Limit, f.Offset = 0, 0
	where, args := traceWhere(project, f)
	heads, err := many(ctx, t, "traces", scanTraceHead, `SELECT data`+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return err
	}
	for start := 0; start < len(heads); start += 500 {
		batch := heads[start:min(start+500, len(heads))]
		if err := t.attach(ctx, project, batch); err != nil {
			return err
		}
		for i := range batch {
			if err := fn(batch[i]); err != nil {
				return err
			}
			batch[i] = trace.ExecutionTrace{} // let the attempts go
		}
	}
	return nil
}

// InsertExecutionRecords implements store.TraceStorage.
func (t *Tx) InsertExecutionRecords(ctx context.Context, project string, recs []trace.ExecutionRecord) error {
	for _, r := range recs {
		if _, err := t.exec(ctx, `INSERT INTO trace_executions (project, artifact_id, trace_id, at, success, error,
			context_hash) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			project, r.ArtifactID, r.TraceID, r.Timestamp.UnixMicro(), r.Success, r.Error, r.ContextHash); err != nil {
			return fmt.Errorf("insert execution record: %w", err)
		}
	}
	return nil
}

func scanExecution(s scanner) (trace.ExecutionRecord, error) {
	var r trace.ExecutionRecord
	var at int64
	err := s.Scan(&r.ArtifactID, &r.TraceID, &at, &r.Success, &r.Error, &r.ContextHash)
	r.Timestamp = time.UnixMicro(at).UTC()
	return r, err
}

// ExecutionRecords implements store.TraceStorage.
func (t *Tx) ExecutionRecords(ctx context.Context, project, artifactID string, limit int) ([]trace.ExecutionRecord, error) {
	q, args := page(`SELECT artifact_id, trace_id, at, success, error, context_hash FROM trace_executions
		WHERE project = ? AND artifact_id = ? ORDER BY at, trace_id`, []any{project, artifactID}, limit, 0)
	return many(ctx, t, "execution records", scanExecution, q, args...)
}

func scanFailurePattern(s scanner) (trace.FailurePattern, error) {
	var data string
	var p trace.FailurePattern
	if err := s.Scan(&data); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return p, fmt.Errorf("decode failure pattern: %w", err)
	}
	return p, nil
}

// PutFailurePattern implements store.TraceStorage.
func (t *Tx) PutFailurePattern(ctx context.Context, project string, p trace.FailurePattern) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode failure pattern %s: %w", p.ID, err)
	}
	if _, err := t.exec(ctx, `INSERT INTO trace_patterns (project, id, skill_id, family, cond, error_type, frequency,
		first_occurred, last_occurred, suggested_fix, weight, grouping_version, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project, id) DO UPDATE SET skill_id = excluded.skill_id, family = excluded.family,
		cond = excluded.cond, error_type = excluded.error_type, frequency = excluded.frequency,
		first_occurred = excluded.first_occurred, last_occurred = excluded.last_occurred,
		suggested_fix = excluded.suggested_fix, weight = excluded.weight,
		grouping_version = excluded.grouping_version, data = excluded.data`,
		project, p.ID, p.SkillID, p.Family, p.Condition, p.ErrorType, p.Frequency, micros(p.FirstOccurred),
		p.LastOccurred.UnixMicro(), p.SuggestedFix, p.Weight, p.GroupingVersion, string(data)); err != nil {
		return fmt.Errorf("put failure pattern %s: %w", p.ID, err)
	}
	return nil
}

// GetFailurePattern implements store.TraceStorage.
func (t *Tx) GetFailurePattern(ctx context.Context, project, id string) (trace.FailurePattern, error) {
	return one(ctx, t, "failure pattern "+id, scanFailurePattern, `SELECT data FROM trace_patterns WHERE project = ? AND id = ?`, project, id)
}

// LockFailurePattern implements store.TraceStorage.
func (t *Tx) LockFailurePattern(ctx context.Context, project, id string) (trace.FailurePattern, error) {
	return one(ctx, t, "failure pattern "+id, scanFailurePattern,
		`SELECT data FROM trace_patterns WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

func patternWhere(project string, f store.FailurePatternFilter) (string, []any) {
	q, args := ` FROM trace_patterns WHERE project = ?`, []any{project}
	switch {
	case f.SkillID != "" && f.Family != "":
		q += ` AND (skill_id = ? OR family = ?)`
		args = append(args, f.SkillID, f.Family)
	case f.SkillID != "":
		q += ` AND skill_id = ?`
		args = append(args, f.SkillID)
	case f.Family != "":
		q += ` AND family = ?`
		args = append(args, f.Family)
	}
	return q, args
}

// ListFailurePatterns implements store.TraceStorage.
func (t *Tx) ListFailurePatterns(ctx context.Context, project string, f store.FailurePatternFilter) ([]trace.FailurePattern, error) {
	where, args := patternWhere(project, f)
	q, args := page(`SELECT data`+where+` ORDER BY frequency DESC, id`, args, f.Limit, f.Offset)
	return many(ctx, t, "failure patterns", scanFailurePattern, q, args...)
}

// CountFailurePatterns implements store.TraceStorage.
func (t *Tx) CountFailurePatterns(ctx context.Context, project string, f store.FailurePatternFilter) (int64, error) {
	where, args := patternWhere(project, f)
	return t.count(ctx, "failure patterns", `SELECT COUNT(*)`+where, args...)
}

func scanTraceSession(s scanner) (store.TraceSession, error) {
	var x store.TraceSession
	var state string
	var updated sql.NullInt64
	err := s.Scan(&x.Project, &x.ID, &state, &updated)
	x.State, x.UpdatedAt = json.RawMessage(state), fromMicros(updated)
	return x, err
}

// GetTraceSession implements store.TraceStorage.
func (t *Tx) GetTraceSession(ctx context.Context, project, id string) (store.TraceSession, error) {
	return one(ctx, t, "trace session "+id, scanTraceSession,
		`SELECT project, id, state, updated_at FROM trace_sessions WHERE project = ? AND id = ?`, project, id)
}

// LockTraceSession implements store.TraceStorage: it creates the session
// with an empty state when absent, so that concurrent first calls serialise
// on the row.
func (t *Tx) LockTraceSession(ctx context.Context, project, id string) (store.TraceSession, error) {
	if _, err := t.exec(ctx, `INSERT INTO trace_sessions (project, id, state, updated_at) VALUES (?, ?, '', NULL)
		ON CONFLICT DO NOTHING`, project, id); err != nil {
		return store.TraceSession{}, fmt.Errorf("lock trace session %s: %w", id, err)
	}
	return one(ctx, t, "trace session "+id, scanTraceSession,
		`SELECT project, id, state, updated_at FROM trace_sessions WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

// PutTraceSession implements store.TraceStorage.
func (t *Tx) PutTraceSession(ctx context.Context, s store.TraceSession) error {
	if _, err := t.exec(ctx, `INSERT INTO trace_sessions (project, id, state, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project, id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
		s.Project, s.ID, string(s.State), micros(s.UpdatedAt)); err != nil {
		return fmt.Errorf("put trace session %s: %w", s.ID, err)
	}
	return nil
}

// InsertTraceCheck implements store.TraceStorage.
func (t *Tx) InsertTraceCheck(ctx context.Context, c store.TraceCheck) (bool, error) {
	warnings := string(c.Warnings)
	if warnings == "" {
		warnings = "[]"
	}
	return t.insert(ctx, "trace check", `INSERT INTO trace_checks (project, id, session_id, skill_id, command, at,
		warned, pattern_ids, warnings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		c.Project, c.ID, c.SessionID, c.SkillID, c.Command, c.At.UnixMicro(), len(c.PatternIDs), jsonList(c.PatternIDs), warnings)
}

func scanTraceCheck(s scanner) (store.TraceCheck, error) {
	var c store.TraceCheck
	var at int64
	var ids, warnings string
	if err := s.Scan(&c.Project, &c.ID, &c.SessionID, &c.SkillID, &c.Command, &at, &ids, &warnings); err != nil {
		return c, err
	}
	c.At, c.Warnings = time.UnixMicro(at).UTC(), json.RawMessage(warnings)
	var err error
	c.PatternIDs, err = fromJSONList(ids)
	return c, err
}

// ListTraceChecks implements store.TraceStorage.
func (t *Tx) ListTraceChecks(ctx context.Context, project string, f store.TraceCheckFilter) ([]store.TraceCheck, error) {
	q, args := `SELECT project, id, session_id, skill_id, command, at, pattern_ids, warnings FROM trace_checks
		WHERE project = ?`, []any{project}
	if f.SessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, f.SessionID)
	}
	if f.WarnedOnly {
		q += ` AND warned > 0`
	}
	q, args = page(q+` ORDER BY at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "trace checks", scanTraceCheck, q, args...)
}

const reviewCols = `project, id, kind, period_start, period_end, created_at, result, report`

func scanTraceReview(s scanner) (store.TraceReview, error) {
	var r store.TraceReview
	var start, end, created int64
	var result string
	err := s.Scan(&r.Project, &r.ID, &r.Kind, &start, &end, &created, &result, &r.Report)
	r.PeriodStart, r.PeriodEnd, r.CreatedAt = time.UnixMicro(start).UTC(), time.UnixMicro(end).UTC(), time.UnixMicro(created).UTC()
	r.Result = json.RawMessage(result)
	return r, err
}

// InsertTraceReview implements store.TraceStorage.
func (t *Tx) InsertTraceReview(ctx context.Context, r store.TraceReview) (bool, error) {
	result := string(r.Result)
	if result == "" {
		result = "{}"
	}
	return t.insert(ctx, "trace review", `INSERT INTO trace_reviews (`+reviewCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, r.Project, r.ID, r.Kind, r.PeriodStart.UnixMicro(), r.PeriodEnd.UnixMicro(),
		r.CreatedAt.UnixMicro(), result, r.Report)
}

// GetTraceReview implements store.TraceStorage.
func (t *Tx) GetTraceReview(ctx context.Context, project, id string) (store.TraceReview, error) {
	return one(ctx, t, "trace review "+id, scanTraceReview,
		`SELECT `+reviewCols+` FROM trace_reviews WHERE project = ? AND id = ?`, project, id)
}

// ListTraceReviews implements store.TraceStorage.
func (t *Tx) ListTraceReviews(ctx context.Context, project string, f store.TraceReviewFilter) ([]store.TraceReview, error) {
	q, args := `SELECT `+reviewCols+` FROM trace_reviews WHERE project = ?`, []any{project}
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, f.Kind)
	}
	q, args = page(q+` ORDER BY created_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "trace reviews", scanTraceReview, q, args...)
}

func scanTraceSkill(s scanner) (trace.SkillStats, error) {
	var data string
	var st trace.SkillStats
	if err := s.Scan(&data); err != nil {
		return st, err
	}
	if err := json.Unmarshal([]byte(data), &st); err != nil {
		return st, fmt.Errorf("decode skill stats: %w", err)
	}
	return st, nil
}

// GetTraceSkill implements store.TraceStorage.
func (t *Tx) GetTraceSkill(ctx context.Context, project, skillID string) (trace.SkillStats, error) {
	return one(ctx, t, "trace skill "+skillID, scanTraceSkill,
		`SELECT data FROM trace_skills WHERE project = ? AND skill_id = ?`, project, skillID)
}

// PutTraceSkill implements store.TraceStorage.
func (t *Tx) PutTraceSkill(ctx context.Context, project string, s trace.SkillStats, updatedAt time.Time) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode skill stats: %w", err)
	}
	if _, err := t.exec(ctx, `INSERT INTO trace_skills (project, skill_id, data, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project, skill_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
		project, s.SkillID, string(data), micros(updatedAt)); err != nil {
		return fmt.Errorf("put skill stats %s: %w", s.SkillID, err)
	}
	return nil
}

// ListTraceSkills implements store.TraceStorage.
func (t *Tx) ListTraceSkills(ctx context.Context, project string) ([]trace.SkillStats, error) {
	return many(ctx, t, "trace skills", scanTraceSkill, `SELECT data FROM trace_skills WHERE project = ? ORDER BY skill_id`, project)
}

func scanString(s scanner) (string, error) {
	var v string
	return v, s.Scan(&v)
}

// GetTraceState implements store.TraceStorage.
func (t *Tx) GetTraceState(ctx context.Context, project, name string) (string, error) {
	return one(ctx, t, "trace state "+name, scanString, `SELECT value FROM trace_states WHERE project = ? AND name = ?`, project, name)
}

// LockTraceState implements store.TraceStorage: it creates the state
// empty when absent, so that concurrent first calls serialise on the row.
func (t *Tx) LockTraceState(ctx context.Context, project, name string) (string, error) {
	if _, err := t.exec(ctx, `INSERT INTO trace_states (project, name, value, updated_at) VALUES (?, ?, '', NULL)
		ON CONFLICT DO NOTHING`, project, name); err != nil {
		return "", fmt.Errorf("lock trace state %s: %w", name, err)
	}
	return one(ctx, t, "trace state "+name, scanString,
		`SELECT value FROM trace_states WHERE project = ? AND name = ?`+t.d.ForUpdate, project, name)
}

// PutTraceState implements store.TraceStorage.
func (t *Tx) PutTraceState(ctx context.Context, project, name, value string, updatedAt time.Time) error {
	if _, err := t.exec(ctx, `INSERT INTO trace_states (project, name, value, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		project, name, value, micros(updatedAt)); err != nil {
		return fmt.Errorf("put trace state %s: %w", name, err)
	}
	return nil
}
