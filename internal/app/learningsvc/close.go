package learningsvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// taskNote validates what a task event says about the task's success and
// builds the note it adds to the task's signals.
func taskNote(op string, in TaskEventInput, kind learning.TaskEventKind) (learning.TaskNote, error) {
	n := learning.TaskNote{Signal: learning.Signal(in.Signal), EndReason: in.EndReason}
	if in.Signal != "" && !n.Signal.Valid() {
		return n, &app.Error{Op: op, Kind: app.KindInvalid, Field: "signal", Message: fmt.Sprintf("unknown signal %q", in.Signal),
			Hint: fmt.Sprintf("one of %v", learning.SessionSignals)}
	}
	if in.EndReason != "" {
		if err := app.ValidID(op, "end_reason", in.EndReason); err != nil {
			return n, err
		}
	}
	if err := app.ValidText(op, "plan", in.Plan, app.MaxTextLen, false); err != nil {
		return n, err
	}
	if len(in.Files) > learning.MaxTaskFiles {
		return n, app.Invalid(op, "files", "has more than %d entries", learning.MaxTaskFiles)
	}
	for _, f := range in.Files {
		if err := app.ValidID(op, "files", f); err != nil || len(f) > app.MaxPathLen {
			return n, app.Invalid(op, "files", "entry %q must be a non-empty single-line path", f)
		}
	}
	if in.EventID != "" {
		if err := app.ValidID(op, "event_id", in.EventID); err != nil {
			return n, err
		}
	}
	n.Files = in.Files
	switch kind {
	case learning.TaskPrompt, learning.TaskStart:
		n.Text = in.Text
	}
	if in.Plan != "" {
		n.Text += "\n" + in.Plan
	}
	return n, nil
}

// CloseTaskInput closes a tracked task: its session ended, or went idle.
type CloseTaskInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	// Reason is why the task is closed (session_end, idle…), kept with
	// the inference.
	Reason string `json:"reason,omitempty"`
}

// CloseTaskResult says what closing a task did.
type CloseTaskResult struct {
	Task TaskInfo `json:"task"`
	// Outcome is the inferred outcome recorded, nil when none was (see
	// Skipped).
	Outcome *OutcomeResult `json:"outcome,omitempty"`
	// Inference is what the success was inferred from.
	Inference *learning.Inference `json:"inference,omitempty"`
	// Skipped says why no outcome was recorded.
	Skipped string `json:"skipped,omitempty"`
}

const opCloseTask = "close task"

// CloseTask ends a tracked task and records its outcome from what kaizen
// saw of it, when nobody reported one: duration, errors and retries from
// the task, the strategies named in its prompts and plan as patterns, its
// first prompt as the description, the files it edited, and success
// inferred from its signals (learning.InferOutcome), marked inferred. An
// explicit outcome already recorded is kept; an inferred one is kept too
// unless the task went on after it (then it is replaced). Closing a task in
// which nothing happened records nothing.
func (s *Service) CloseTask(ctx context.Context, in CloseTaskInput) (*CloseTaskResult, error) {
	in.Reason = app.Scrub(in.Reason)
	project, err := s.env.ResolveProject(opCloseTask, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(opCloseTask, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	if in.Reason != "" {
		if err := app.ValidID(opCloseTask, "reason", in.Reason); err != nil {
			return nil, err
		}
	}
	var res *CloseTaskResult
	err = s.env.Update(ctx, opCloseTask, func(tx store.Tx) error {
		var err error
		res, err = s.closeTx(ctx, tx, project, in.TaskID, in.Reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	if res.Outcome != nil {
		s.recorded(res.Outcome)
	}
	return res, nil
}

func (s *Service) closeTx(ctx context.Context, tx store.Tx, project, taskID, reason string) (*CloseTaskResult, error) {
	now := s.env.Now()
	t, err := tx.LockTask(ctx, project, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &app.Error{Op: opCloseTask, Kind: app.KindNotFound, Field: "bead_id",
			Message: fmt.Sprintf("no tracked task %q in project %q", taskID, project), Hint: "tasks are created by task events (client hooks)"}
	}
	if err != nil {
		return nil, err
	}
	res := &CloseTaskResult{}
	end := func(why string) (*CloseTaskResult, error) {
		res.Skipped = why
		if t.EndedAt == nil {
			ended := now
			t.EndedAt, t.UpdatedAt = &ended, now
			if err := tx.UpdateTask(ctx, t); err != nil {
				return nil, err
			}
		}
		res.Task, err = taskInfo(ctx, tx, t)
		return res, err
	}
	prev, err := taskOutcome(ctx, tx, project, taskID)
	if err != nil {
		return nil, err
	}
	switch {
	case prev != nil && !prev.Inferred:
		return end("the task has an explicit outcome: " + prev.ID)
	case prev != nil && !t.LastActivityAt.After(prev.Timestamp):
		return end("the task was closed already: " + prev.ID)
	}
	inf, ok := learning.InferOutcome(t)
	if !ok {
		return end("nothing happened in the task: no prompt and no tool call")
	}
	in := OutcomeInput{Project: project, TaskID: taskID, Success: &inf.Success, Inferred: true,
		Description: t.Description, Timestamp: t.LastActivityAt.Format(time.RFC3339Nano)}
	for _, key := range t.Signals.Strategies {
		if st, found := learning.StrategyByLabel(key); found && len(in.Patterns) < app.MaxPatternRefs {
			in.Patterns = append(in.Patterns, st.LabelFor(s.lc.Locale))
		}
	}
	for _, f := range t.Signals.Files {
		if app.ValidID(opCloseTask, "files_touched", f) == nil && len(f) <= app.MaxPathLen {
			in.FilesTouched = append(in.FilesTouched, f)
		}
	}
	o, err := s.validateOutcome(in, now)
	if err != nil {
		return nil, err
	}
	o.Inference = inf.Reason
	if reason != "" {
		o.Inference += " (closed: " + reason + ")"
	}
	out, err := s.recordTx(ctx, tx, o, in, now)
	if err != nil {
		return nil, err
	}
	res.Outcome, res.Inference = out, &inf
	if out.Task != nil {
		res.Task = *out.Task
	} else if res.Task, err = taskInfo(ctx, tx, t); err != nil {
		return nil, err
	}
	return res, nil
}

// CloseIdleInput closes the tasks idle for longer than a timeout.
type CloseIdleInput struct {
	// Project limits the sweep to one project ("" sweeps every project).
	Project string `json:"project,omitempty"`
	// IdleMs is the timeout: tasks without activity for this long are
	// closed.
	IdleMs int64 `json:"idle_ms"`
	// At is the instant to measure idleness at (RFC 3339; default now).
	At string `json:"at,omitempty"`
	// Limit bounds the tasks closed by one call (default 100).
	Limit int `json:"limit,omitempty"`
}

// CloseIdleResult lists the tasks a sweep closed.
type CloseIdleResult struct {
	Closed []CloseTaskResult `json:"closed"`
}

// CloseIdleTasks closes (CloseTask, reason idle) the open tasks without
// activity for longer than the timeout, oldest activity first.
func (s *Service) CloseIdleTasks(ctx context.Context, in CloseIdleInput) (*CloseIdleResult, error) {
	const op = "close idle tasks"
	if in.IdleMs <= 0 || in.IdleMs > app.MaxDurationMs {
		return nil, app.Invalid(op, "idle_ms", "must be between 1 and %d, got %d", app.MaxDurationMs, in.IdleMs)
	}
	at, err := app.ParseTime(op, "at", in.At, s.env.Now())
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 100
	}
	var projects []string
	if in.Project != "" {
		p, err := s.env.ResolveProject(op, in.Project)
		if err != nil {
			return nil, err
		}
		projects = []string{p}
	}
	type idle struct{ project, id string }
	var todo []idle
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		todo = todo[:0]
		ps := projects
		if ps == nil {
			var err error
			if ps, err = tx.Projects(ctx); err != nil {
				return err
			}
		}
		before := at.Add(-time.Duration(in.IdleMs) * time.Millisecond)
		for _, p := range ps {
			tasks, err := tx.ListTasks(ctx, p, store.TaskFilter{OpenOnly: true, IdleBefore: before, Limit: limit})
			if err != nil {
				return err
			}
			for _, t := range tasks {
				if len(todo) < limit {
					todo = append(todo, idle{p, t.ID})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &CloseIdleResult{Closed: []CloseTaskResult{}}
	for _, t := range todo {
		r, err := s.CloseTask(ctx, CloseTaskInput{Project: t.project, TaskID: t.id, Reason: "idle"})
		if err != nil {
			return out, err
		}
		out.Closed = append(out.Closed, *r)
	}
	return out, nil
}

// PruneAppliedEvents forgets the ids of the events applied more than
// olderThan ago (they only need to outlive redeliveries) and returns how
// many it removed.
func (s *Service) PruneAppliedEvents(ctx context.Context, olderThan time.Duration) (int64, error) {
	var n int64
	err := s.env.Update(ctx, "prune applied events", func(tx store.Tx) error {
		var err error
		n, err = tx.PruneEvents(ctx, s.env.Now().Add(-olderThan))
		return err
	})
	return n, err
}
