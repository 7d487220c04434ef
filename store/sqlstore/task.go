package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

const taskCols = `project, id, description, source, started_at, last_activity_at, ended_at, prompts, tool_calls,
	tool_failures, retry_count, failed_this_turn, exploration, updated_at, signals`

func scanTask(s scanner) (learning.Task, error) {
	var t learning.Task
	var started, active, ended, updated sql.NullInt64
	var exploration, signals string
	err := s.Scan(&t.Project, &t.ID, &t.Description, &t.Source, &started, &active, &ended, &t.Prompts, &t.ToolCalls,
		&t.ToolFailures, &t.RetryCount, &t.FailedThisTurn, &exploration, &updated, &signals)
	if err != nil {
		return t, err
	}
	if signals != "" {
		if err := json.Unmarshal([]byte(signals), &t.Signals); err != nil {
			return t, fmt.Errorf("decode task signals: %w", err)
		}
	}
	t.StartedAt, t.LastActivityAt, t.EndedAt, t.UpdatedAt = fromMicros(started), fromMicros(active), fromMicrosPtr(ended), fromMicros(updated)
	t.Exploration, err = fromJSONSummary(exploration)
	return t, err
}

func taskArgs(t learning.Task) []any {
	return []any{t.Project, t.ID, t.Description, t.Source, micros(t.StartedAt), micros(t.LastActivityAt), microsPtr(t.EndedAt),
		t.Prompts, t.ToolCalls, t.ToolFailures, t.RetryCount, t.FailedThisTurn, jsonSummary(t.Exploration), micros(t.UpdatedAt),
		jsonSignals(t.Signals)}
}

// jsonSignals stores a task's signals as JSON, "" when it has none.
func jsonSignals(s learning.TaskSignals) string {
	if s.Empty() {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// InsertTask implements store.TaskStorage.
func (t *Tx) InsertTask(ctx context.Context, task learning.Task) (bool, error) {
	return t.insert(ctx, "task", `INSERT INTO tasks (`+taskCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, taskArgs(task)...)
}

// GetTask implements store.TaskStorage.
func (t *Tx) GetTask(ctx context.Context, project, id string) (learning.Task, error) {
	return one(ctx, t, "task "+id, scanTask, `SELECT `+taskCols+` FROM tasks WHERE project = ? AND id = ?`, project, id)
}

// LockTask implements store.TaskStorage.
func (t *Tx) LockTask(ctx context.Context, project, id string) (learning.Task, error) {
	if task, ok, err := t.prefetchedTask(project, id); ok {
		return task, err
	}
	return one(ctx, t, "task "+id, scanTask,
		`SELECT `+taskCols+` FROM tasks WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

// UpdateTask implements store.TaskStorage.
func (t *Tx) UpdateTask(ctx context.Context, task learning.Task) error {
	t.forgetTask(task.Project, task.ID) // prefetch.go: only this task's row changes
	defer t.pre.quietly()()
	a := taskArgs(task)
	return t.change(ctx, "update task "+task.ID, `UPDATE tasks SET description = ?, source = ?, started_at = ?,
		last_activity_at = ?, ended_at = ?, prompts = ?, tool_calls = ?, tool_failures = ?, retry_count = ?,
		failed_this_turn = ?, exploration = ?, updated_at = ?, signals = ? WHERE project = ? AND id = ?`, append(a[2:], a[0], a[1])...)
}

func taskWhere(project string, f store.TaskFilter) (string, []any) {
	q, args := ` FROM tasks WHERE project = ?`, []any{project}
	if f.OpenOnly {
		q += ` AND ended_at IS NULL`
	}
	if !f.IdleBefore.IsZero() {
		q += ` AND last_activity_at < ?`
		args = append(args, f.IdleBefore.UnixMicro())
	}
	return q, args
}

// ListTasks implements store.TaskStorage.
func (t *Tx) ListTasks(ctx context.Context, project string, f store.TaskFilter) ([]learning.Task, error) {
	where, args := taskWhere(project, f)
	q, args := page(`SELECT `+taskCols+where+` ORDER BY last_activity_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "tasks", scanTask, q, args...)
}

// CountTasks implements store.TaskStorage.
func (t *Tx) CountTasks(ctx context.Context, project string, f store.TaskFilter) (int64, error) {
	where, args := taskWhere(project, f)
	return t.count(ctx, "tasks", `SELECT COUNT(*)`+where, args...)
}

// jsonSummary stores an exploration summary as JSON, "" for none.
func jsonSummary(x *learning.ExplorationSummary) string {
	if x == nil {
		return ""
	}
	b, _ := json.Marshal(x)
	return string(b)
}

func fromJSONSummary(s string) (*learning.ExplorationSummary, error) {
	if s == "" {
		return nil, nil
	}
	var x learning.ExplorationSummary
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return nil, fmt.Errorf("decode exploration summary: %w", err)
	}
	return &x, nil
}
