package learningsvc

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// ErrorInput records an error met while executing a task (the seed's
// ErrorAccumulator.recordError).
type ErrorInput struct {
	Project    string `json:"project,omitempty"`
	TaskID     string `json:"bead_id"`
	Type       string `json:"error_type"`
	Message    string `json:"message"`
	StackTrace string `json:"stack_trace,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	Context    string `json:"context,omitempty"`
	Timestamp  string `json:"timestamp,omitempty"`
}

// RecordError adds an error to a task's accumulator.
func (s *Service) RecordError(ctx context.Context, in ErrorInput) (*learning.ErrorEntry, error) {
	const op = "record error"
	in = scrubError(in)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	t := learning.ErrorType(in.Type)
	if in.Type == "" {
		t = learning.ErrUnknown
	}
	if !t.Valid() {
		return nil, &app.Error{Op: op, Kind: app.KindInvalid, Field: "error_type", Message: fmt.Sprintf("unknown type %q", in.Type),
			Hint: fmt.Sprintf("one of %v", learning.ErrorTypes)}
	}
	if err := app.ValidText(op, "message", in.Message, app.MaxTextLen, true); err != nil {
		return nil, err
	}
	for field, v := range map[string]string{"stack_trace": in.StackTrace, "context": in.Context} {
		if err := app.ValidText(op, field, v, app.MaxTextLen, false); err != nil {
			return nil, err
		}
	}
	if in.ToolName != "" {
		if err := app.ValidID(op, "tool_name", in.ToolName); err != nil {
			return nil, err
		}
	}
	at, err := app.ParseTime(op, "timestamp", in.Timestamp, now)
	if err != nil {
		return nil, err
	}
	entry := learning.ErrorEntry{ID: app.NewID("err-"), Project: project, TaskID: in.TaskID, Type: t, Message: in.Message,
		StackTrace: in.StackTrace, ToolName: in.ToolName, Context: in.Context, Timestamp: at}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		_, err := tx.InsertError(ctx, entry)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &entry, nil
}

// ResolveError marks an error resolved; resolved errors leave the retry
// context. Resolving twice keeps the first resolution time.
func (s *Service) ResolveError(ctx context.Context, project, id string) (*learning.ErrorEntry, error) {
	const op = "resolve error"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "id", id); err != nil {
		return nil, err
	}
	var entry learning.ErrorEntry
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		entry, err = tx.ResolveError(ctx, project, id, now)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "id", Message: fmt.Sprintf("no error %q in project %q", id, project)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &entry, nil
}

// ErrorContextResult is the retry prompt block of a task with its errors.
type ErrorContextResult struct {
	TaskID   string                `json:"bead_id"`
	Markdown string                `json:"markdown"`
	Errors   []learning.ErrorEntry `json:"errors"`
}

// ErrorContext formats a task's errors for a retry prompt, grouped by type;
// resolved errors only when includeResolved.
func (s *Service) ErrorContext(ctx context.Context, project, taskID string, includeResolved bool) (*ErrorContextResult, error) {
	const op = "error context"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", taskID); err != nil {
		return nil, err
	}
	res := ErrorContextResult{TaskID: taskID}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		res.Errors, err = tx.ErrorsByTask(ctx, project, taskID, includeResolved)
		return err
	})
	if err != nil {
		return nil, err
	}
	scrubErrorEntries(res.Errors)
	res.Markdown = learning.ErrorContext(res.Errors, includeResolved)
	return &res, nil
}

// ErrorStats counts a task's errors; Total is what an outcome uses as
// error_count when it gives none.
func (s *Service) ErrorStats(ctx context.Context, project, taskID string) (*learning.ErrorStats, error) {
	const op = "error stats"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", taskID); err != nil {
		return nil, err
	}
	var entries []learning.ErrorEntry
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		entries, err = tx.ErrorsByTask(ctx, project, taskID, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	st := learning.StatsOf(entries)
	return &st, nil
}

// ErrorQuery selects errors to list.
type ErrorQuery struct {
	Project        string `json:"project,omitempty"`
	TaskID         string `json:"bead_id,omitempty"`
	UnresolvedOnly bool   `json:"unresolved_only,omitempty"`
	Type           string `json:"error_type,omitempty"`
	Search         string `json:"search,omitempty"`
	Limit          int    `json:"limit,omitempty"`
	Offset         int    `json:"offset,omitempty"`
}

// ErrorList is a page of errors, newest first.
type ErrorList = app.Page[learning.ErrorEntry]

// ListErrors lists recorded errors, newest first.
func (s *Service) ListErrors(ctx context.Context, q ErrorQuery) (*ErrorList, error) {
	const op = "list errors"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	if q.Type != "" && !learning.ErrorType(q.Type).Valid() {
		return nil, app.Invalid(op, "error_type", "unknown type %q", q.Type)
	}
	if err := app.CheckQuery(op, "search", q.Search); err != nil {
		return nil, err
	}
	if err := app.CheckQuery(op, "task_id", q.TaskID); err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.ErrorFilter{TaskID: q.TaskID, UnresolvedOnly: q.UnresolvedOnly, Type: learning.ErrorType(q.Type),
		Search: q.Search, Limit: limit, Offset: q.Offset}
	out := ErrorList{Project: project, Items: []learning.ErrorEntry{}, Limit: limit, Offset: q.Offset}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		if out.Items, err = tx.ListErrors(ctx, project, f); err != nil {
			return err
		}
		out.Total, err = tx.CountErrors(ctx, project, f)
		return err
	})
	return app.Finish(&out, err)
}
