package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

const errorCols = `project, id, task_id, type, message, stack_trace, tool_name, context, ts, resolved, resolved_at`

func scanError(s scanner) (learning.ErrorEntry, error) {
	var e learning.ErrorEntry
	var ts, resolvedAt sql.NullInt64
	err := s.Scan(&e.Project, &e.ID, &e.TaskID, &e.Type, &e.Message, &e.StackTrace, &e.ToolName, &e.Context,
		&ts, &e.Resolved, &resolvedAt)
	e.Timestamp, e.ResolvedAt = fromMicros(ts), fromMicrosPtr(resolvedAt)
	return e, err
}

// errorSearchKey is the lower-cased text searched by ErrorFilter.Search.
func errorSearchKey(e learning.ErrorEntry) string {
	return strings.ToLower(strings.Join([]string{e.Message, e.Context, e.ToolName, e.TaskID}, "\n"))
}

// InsertError implements store.ErrorStorage.
func (t *Tx) InsertError(ctx context.Context, e learning.ErrorEntry) (bool, error) {
	return t.insert(ctx, "error", `INSERT INTO errors (`+errorCols+`, search_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, e.Project, e.ID, e.TaskID, string(e.Type), e.Message, e.StackTrace, e.ToolName,
		e.Context, micros(e.Timestamp), e.Resolved, microsPtr(e.ResolvedAt), errorSearchKey(e))
}

// GetError implements store.ErrorStorage.
func (t *Tx) GetError(ctx context.Context, project, id string) (learning.ErrorEntry, error) {
	return one(ctx, t, "error "+id, scanError, `SELECT `+errorCols+` FROM errors WHERE project = ? AND id = ?`, project, id)
}

// ErrorsByTask implements store.ErrorStorage.
func (t *Tx) ErrorsByTask(ctx context.Context, project, taskID string, includeResolved bool) ([]learning.ErrorEntry, error) {
	if errs, ok := t.prefetchedErrors(project, taskID, includeResolved); ok {
		return errs, nil
	}
	q := `SELECT ` + errorCols + ` FROM errors WHERE project = ? AND task_id = ?`
	if !includeResolved {
		q += ` AND resolved = FALSE`
	}
	return many(ctx, t, "errors", scanError, q+` ORDER BY ts, id`, project, taskID)
}

// ResolveError implements store.ErrorStorage.
func (t *Tx) ResolveError(ctx context.Context, project, id string, at time.Time) (learning.ErrorEntry, error) {
	if _, err := t.exec(ctx, `UPDATE errors SET resolved = TRUE, resolved_at = ?
		WHERE project = ? AND id = ? AND resolved = FALSE`, micros(at), project, id); err != nil {
		return learning.ErrorEntry{}, err
	}
	return t.GetError(ctx, project, id)
}

func errorWhere(project string, f store.ErrorFilter) (string, []any) {
	q, args := ` FROM errors WHERE project = ?`, []any{project}
	if f.TaskID != "" {
		q += ` AND task_id = ?`
		args = append(args, f.TaskID)
	}
	if f.UnresolvedOnly {
		q += ` AND resolved = FALSE`
	}
	if f.Type != "" {
		q += ` AND type = ?`
		args = append(args, string(f.Type))
	}
	if f.Search != "" {
		q += ` AND search_key LIKE ? ESCAPE '\'`
		args = append(args, likePattern(strings.ToLower(f.Search)))
	}
	return q, args
}

// ListErrors implements store.ErrorStorage.
func (t *Tx) ListErrors(ctx context.Context, project string, f store.ErrorFilter) ([]learning.ErrorEntry, error) {
	where, args := errorWhere(project, f)
	q, args := page(`SELECT `+errorCols+where+` ORDER BY ts DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "errors", scanError, q, args...)
}

// CountErrors implements store.ErrorStorage.
func (t *Tx) CountErrors(ctx context.Context, project string, f store.ErrorFilter) (int64, error) {
	where, args := errorWhere(project, f)
	return t.count(ctx, "errors", `SELECT COUNT(*)`+where, args...)
}

// EachError implements store.ErrorStorage.
func (t *Tx) EachError(ctx context.Context, project string, fn func(learning.ErrorEntry) error) error {
	return each(ctx, t, "errors", scanError, fn,
		`SELECT `+errorCols+` FROM errors WHERE project = ? ORDER BY ts, id`, project)
}

// GetMeta implements store.MetaStorage.
func (t *Tx) GetMeta(ctx context.Context, key string) (string, error) {
	return one(ctx, t, "setting "+key, func(s scanner) (string, error) {
		var v string
		return v, s.Scan(&v)
	}, `SELECT value FROM meta WHERE key = ?`, key)
}

// SetMeta implements store.MetaStorage.
func (t *Tx) SetMeta(ctx context.Context, key, value string) error {
	_, err := t.exec(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// Projects implements store.MetaStorage: projects with learning records
// or experience data.
func (t *Tx) Projects(ctx context.Context) ([]string, error) {
	if err := t.flushFirst(ctx); err != nil {
		return nil, err
	}
	return many(ctx, t, "projects", func(s scanner) (string, error) {
		var p string
		return p, s.Scan(&p)
	}, `SELECT project FROM outcomes UNION SELECT project FROM patterns UNION SELECT project FROM criteria
		UNION SELECT project FROM errors UNION SELECT project FROM tasks UNION SELECT project FROM explore_sessions
		UNION SELECT project FROM experience_turns UNION SELECT project FROM feedback_signals
		UNION SELECT project FROM task_experiences UNION SELECT project FROM heuristics
		UNION SELECT project FROM heuristic_evidence UNION SELECT project FROM heuristic_support
		UNION SELECT project FROM heuristic_feedback UNION SELECT project FROM recalls
		UNION SELECT project FROM skills UNION SELECT project FROM skill_versions
		UNION SELECT project FROM embeddings UNION SELECT project FROM search_docs
		UNION SELECT project FROM trace_traces UNION SELECT project FROM trace_patterns
		UNION SELECT project FROM team_teams UNION SELECT project FROM team_runs
		ORDER BY 1`)
}
