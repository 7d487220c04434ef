package learningsvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// TaskEventInput reports something that happened in a tracked task (an
// agent session): it started, the user prompted, a tool ran or failed, the
// agent stopped. Client hooks send these, so that an outcome can later be
// recorded with one call: duration, retries and errors are already known.
type TaskEventInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	// Kind is start, prompt, tool, tool_failure or stop.
	Kind string `json:"kind"`
	// Text is the prompt or the task description (the first becomes the
	// task's description).
	Text     string `json:"text,omitempty"`
	ToolName string `json:"tool_name,omitempty"`
	// Message describes a tool failure; it is recorded in the error
	// accumulator as a tool_failure of the task.
	Message string `json:"message,omitempty"`
	// Source names the reporting client (claude, codex, cursor, opencode…).
	Source    string `json:"source,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	// EventID identifies the event (a hook event's id): an event already
	// applied within app.DuplicateWindow of its time is not applied again,
	// so a redelivered or doubly installed hook counts once.
	EventID string `json:"event_id,omitempty"`
	// Plan is the agent's plan (its plan or to-do tool's input): the
	// strategies it names count as the task's, like a prompt's.
	Plan string `json:"plan,omitempty"`
	// Files are the files the event edited.
	Files []string `json:"files,omitempty"`
	// Signal is the event's decisive signal about the task's success
	// (test_pass, test_fail, user_confirmed, user_rejected, stop_completed,
	// stop_aborted, stop_error), used when the outcome is inferred.
	Signal string `json:"signal,omitempty"`
	// EndReason is the client's reason for an end event.
	EndReason string `json:"end_reason,omitempty"`
}

// TaskInfo is a tracked task with what an outcome would take from it.
type TaskInfo struct {
	learning.Task
	DurationMs int64 `json:"duration_ms"`
	// ErrorCount is the number of errors recorded for the task.
	ErrorCount int `json:"error_count"`
	OpenErrors int `json:"open_errors"`
}

// TaskEventResult is the task after an event, and the error recorded for a
// tool failure.
type TaskEventResult struct {
	Task  TaskInfo             `json:"task"`
	Error *learning.ErrorEntry `json:"error,omitempty"`
	// Duplicate: the event had been applied already (same event id); it
	// changed nothing.
	Duplicate bool `json:"duplicate,omitempty"`
}

// RecordTaskEvent folds one event into a task, creating the task on its
// first event; a tool failure is also recorded in the error accumulator,
// in the same transaction.
func (s *Service) RecordTaskEvent(ctx context.Context, in TaskEventInput) (*TaskEventResult, error) {
	const op = "record task event"
	in = scrubTaskEvent(in)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	kind := learning.TaskEventKind(in.Kind)
	if !kind.Valid() {
		return nil, &app.Error{Op: op, Kind: app.KindInvalid, Field: "kind", Message: fmt.Sprintf("unknown kind %q", in.Kind),
			Hint: fmt.Sprintf("one of %v", learning.TaskEventKinds)}
	}
	if err := app.ValidText(op, "text", in.Text, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "message", in.Message, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	for field, v := range map[string]string{"tool_name": in.ToolName, "source": in.Source} {
		if v != "" {
			if err := app.ValidID(op, field, v); err != nil {
				return nil, err
			}
		}
	}
	at, err := app.ParseTime(op, "timestamp", in.Timestamp, now)
	if err != nil {
		return nil, err
	}
	note, err := taskNote(op, in, kind)
	if err != nil {
		return nil, err
	}
	var res TaskEventResult
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		res.Duplicate = false
		if in.EventID != "" {
			fresh, err := tx.MarkEvent(ctx, project, in.EventID+"/task", at, app.DuplicateWindow)
			if err != nil {
				return err
			}
			if !fresh {
				res.Duplicate = true
				t, err := tx.GetTask(ctx, project, in.TaskID)
				if err != nil {
					return err
				}
				res.Task, err = taskInfo(ctx, tx, t)
				return err
			}
		}
		if _, err := tx.InsertTask(ctx, learning.Task{ID: in.TaskID, Project: project, Source: in.Source,
			StartedAt: at, LastActivityAt: at, UpdatedAt: now}); err != nil {
			return err
		}
		t, err := tx.LockTask(ctx, project, in.TaskID)
		if err != nil {
			return err
		}
		t.Apply(kind, in.Text, at)
		t.Note(note)
		if kind != learning.TaskEnd {
			t.EndedAt = nil // the session goes on: it will be closed again
		}
		if t.Source == "" {
			t.Source = in.Source
		}
		t.UpdatedAt = now
		if err := tx.UpdateTask(ctx, t); err != nil {
			return err
		}
		res.Error = nil
		if kind == learning.TaskToolFailure {
			msg := in.Message
			if msg == "" {
				msg = "tool " + in.ToolName + " failed"
			}
			entry := learning.ErrorEntry{ID: app.NewID("err-"), Project: project, TaskID: in.TaskID, Type: learning.ErrToolFailure,
				Message: msg, ToolName: in.ToolName, Timestamp: at}
			if _, err := tx.InsertError(ctx, entry); err != nil {
				return err
			}
			res.Error = &entry
		}
		res.Task, err = taskInfo(ctx, tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func taskInfo(ctx context.Context, tx store.Tx, t learning.Task) (TaskInfo, error) {
	errs, err := tx.ErrorsByTask(ctx, t.Project, t.ID, true)
	if err != nil {
		return TaskInfo{}, err
	}
	info := TaskInfo{Task: t, DurationMs: t.DurationMs(), ErrorCount: len(errs)}
	for _, x := range errs {
		if !x.Resolved {
			info.OpenErrors++
		}
	}
	return info, nil
}

// GetTask returns a tracked task.
func (s *Service) GetTask(ctx context.Context, project, id string) (*TaskInfo, error) {
	const op = "get task"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", id); err != nil {
		return nil, err
	}
	var info TaskInfo
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		t, err := tx.GetTask(ctx, project, id)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "bead_id", Message: fmt.Sprintf("no tracked task %q in project %q", id, project),
				Hint: "tasks are created by task events (client hooks)"}
		}
		if err != nil {
			return err
		}
		info, err = taskInfo(ctx, tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// TaskQuery selects tracked tasks.
type TaskQuery struct {
	Project  string `json:"project,omitempty"`
	OpenOnly bool   `json:"open_only,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	Offset   int    `json:"offset,omitempty"`
}

// TaskList is a page of tasks, most recently active first, each with what
// an outcome would take from it.
type TaskList = app.Page[TaskInfo]

// ListTasks lists tracked tasks, most recently active first.
func (s *Service) ListTasks(ctx context.Context, q TaskQuery) (*TaskList, error) {
	const op = "list tasks"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.TaskFilter{OpenOnly: q.OpenOnly, Limit: limit, Offset: q.Offset}
	out := TaskList{Project: project, Items: []TaskInfo{}, Limit: limit, Offset: q.Offset}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		tasks, err := tx.ListTasks(ctx, project, f)
		if err != nil {
			return err
		}
		out.Items = make([]TaskInfo, len(tasks))
		for i, t := range tasks {
			if out.Items[i], err = taskInfo(ctx, tx, t); err != nil {
				return err
			}
		}
		out.Total, err = tx.CountTasks(ctx, project, f)
		return err
	})
	return app.Finish(&out, err)
}
