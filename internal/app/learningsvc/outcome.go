package learningsvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// OutcomeResult is everything one recorded outcome changed.
type OutcomeResult struct {
	Outcome learning.Outcome `json:"outcome"`
	// Task is the tracked task the outcome ended (and took its duration
	// or retries from when they were omitted), if there is one.
	Task       *TaskInfo                `json:"task,omitempty"`
	Feedback   []learning.FeedbackEvent `json:"feedback"`
	Weighted   []learning.WeightedScore `json:"weighted"`
	Patterns   []PatternUpdate          `json:"pattern_updates"`
	Inversions []learning.Inversion     `json:"inversions"`
	// Unchanged: the task already had this outcome (a repeated report, or
	// an inferred outcome after an explicit one); nothing was recorded and
	// Outcome is the stored one.
	Unchanged bool `json:"unchanged,omitempty"`
	// Replaced is the id of the inferred outcome this one replaced.
	Replaced string `json:"replaced,omitempty"`
}

const opRecordOutcome = "record outcome"

// validateOutcome checks an outcome input and builds the outcome to store
// (ErrorCount still unset when the input omits it).
func (s *Service) validateOutcome(in OutcomeInput, now time.Time) (learning.Outcome, error) {
	op := opRecordOutcome
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return learning.Outcome{}, err
	}
	task := in.TaskID
	if in.TaskIDAlias != "" {
		if task != "" && task != in.TaskIDAlias {
			return learning.Outcome{}, app.Invalid(op, "task_id", "differs from bead_id %q", task)
		}
		task = in.TaskIDAlias
	}
	if err := app.ValidID(op, "bead_id", task); err != nil {
		return learning.Outcome{}, err
	}
	o := learning.Outcome{ID: app.NewID("out-"), Project: project, TaskID: task, RecordedAt: now,
		Strategy: in.Strategy, FailureDetails: in.FailureDetails, Inferred: in.Inferred}
	switch {
	case in.DurationMs == nil:
		o.DurationMs = -1 // taken from the tracked task in the transaction
	case *in.DurationMs < 0:
		return o, app.Invalid(op, "duration_ms", "must be >= 0, got %d", *in.DurationMs)
	case *in.DurationMs > app.MaxDurationMs:
		return o, app.Invalid(op, "duration_ms", "must be <= %d (one year), got %d", app.MaxDurationMs, *in.DurationMs)
	default:
		o.DurationMs = *in.DurationMs
	}
	if in.Success == nil {
		return o, &app.Error{Op: op, Kind: app.KindInvalid, Field: "success", Message: "is required", Hint: "true or false"}
	}
	o.Success = *in.Success
	if in.ErrorCount != nil {
		if err := app.CheckCount(op, "error_count", *in.ErrorCount); err != nil {
			return o, err
		}
		o.ErrorCount, o.ErrorCountSource = *in.ErrorCount, "input"
	}
	o.RetryCount = -1 // taken from the tracked task, else 0
	if in.RetryCount != nil {
		if err := app.CheckCount(op, "retry_count", *in.RetryCount); err != nil {
			return o, err
		}
		o.RetryCount = *in.RetryCount
	}
	if len(in.FilesTouched) > app.MaxFilesTouched {
		return o, app.Invalid(op, "files_touched", "has more than %d entries", app.MaxFilesTouched)
	}
	o.FilesTouched = []string{}
	for _, f := range in.FilesTouched {
		if err := app.ValidID(op, "files_touched", f); err != nil || len(f) > app.MaxPathLen {
			return o, app.Invalid(op, "files_touched", "entry %q must be a non-empty single-line path", f)
		}
		o.FilesTouched = append(o.FilesTouched, f)
	}
	if in.Strategy != "" {
		if err := PatternContent(op, "strategy", in.Strategy); err != nil {
			return o, err
		}
	}
	if err := app.ValidText(op, "failure_details", in.FailureDetails, app.MaxTextLen, false); err != nil {
		return o, err
	}
	if err := app.ValidText(op, "description", in.Description, app.MaxTextLen, false); err != nil {
		return o, err
	}
	if err := app.ValidText(op, "task", in.Task, app.MaxTextLen, false); err != nil {
		return o, err
	}
	if err := validTags(op, in.Tags); err != nil {
		return o, err
	}
	o.Task, o.Tags = in.Task, uniqueSorted(in.Tags)
	if in.FailureMode != "" {
		m := learning.FailureMode(in.FailureMode)
		if !m.Valid() {
			return o, &app.Error{Op: op, Kind: app.KindInvalid, Field: "failure_mode", Message: fmt.Sprintf("unknown mode %q", in.FailureMode),
				Hint: fmt.Sprintf("one of %v", learning.FailureModes)}
		}
		if o.Success {
			return o, app.Invalid(op, "failure_mode", "is only meaningful when success is false")
		}
		o.FailureMode = m
	} else if !o.Success && in.FailureDetails != "" {
		o.FailureMode = learning.ClassifyFailure(in.FailureDetails)
	}
	if o.Timestamp, err = app.ParseTime(op, "timestamp", in.Timestamp, now); err != nil {
		return o, err
	}
	if len(in.Patterns) > app.MaxPatternRefs {
		return o, app.Invalid(op, "patterns", "has more than %d entries", app.MaxPatternRefs)
	}
	for _, p := range in.Patterns {
		if err := PatternContent(op, "patterns", p); err != nil {
			return o, err
		}
	}
	if len(in.Criteria) > app.MaxCriteria {
		return o, app.Invalid(op, "criteria", "has more than %d entries", app.MaxCriteria)
	}
	o.Criteria = slices.Clone(in.Criteria)
	if len(o.Criteria) == 0 {
		o.Criteria = slices.Clone(s.lc.DefaultCriteria)
	}
	for _, c := range o.Criteria {
		if err := learning.ValidateName("criteria", c); err != nil {
			return o, app.Invalid(op, "criteria", "%v", err)
		}
	}
	o.Criteria = uniqueSorted(o.Criteria)
	return o, nil
}

// RecordOutcome scores a finished task and learns from it in one
// transaction: the outcome with its feedback event per criterion and the
// criterion aggregates, and for every pattern used its maturity feedback,
// the pattern's counts and maturity and, when the failure ratio crosses the
// threshold, the anti-pattern inversion.
//
// A pattern's success and failure counts follow the task's real success;
// its maturity evidence is the outcome's scored type (helpful, neutral,
// harmful).
func (s *Service) RecordOutcome(ctx context.Context, in OutcomeInput) (*OutcomeResult, error) {
	in = scrubOutcome(in)
	now := s.env.Now()
	o, err := s.validateOutcome(in, now)
	if err != nil {
		return nil, err
	}
	if o.Inferred {
		o.Inference = "reported as inferred by the caller"
	}
	var res *OutcomeResult
	// the writer may read the task's state for its whole group at once
	hinted := store.WithWriteHint(ctx, s.outcomeHint(o, in))
	err = s.env.Update(hinted, opRecordOutcome, func(tx store.Tx) error {
		var err error
		res, err = s.recordTx(ctx, tx, o, in, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.recorded(res)
	return res, nil
}

// recorded runs the after-commit hook of a newly stored outcome.
func (s *Service) recorded(res *OutcomeResult) {
	// Committed: the job runner of this process may look at the work the
	// transaction enqueued.
	if res != nil && s.hooks.OutcomeRecorded != nil {
		s.hooks.OutcomeRecorded(res.Outcome.Project, res.Outcome.TaskID)
	}
}

// recordTx stores a validated outcome inside tx, once per task: a task
// holds one outcome. An outcome inferred by kaizen is replaced by an
// explicit one; an explicit outcome is kept, and recording it again is a
// no-op when the values agree and a conflict when they differ; an inferred
// outcome never replaces an explicit one.
func (s *Service) recordTx(ctx context.Context, tx store.Tx, o learning.Outcome, in OutcomeInput, now time.Time) (*OutcomeResult, error) {
	res := &OutcomeResult{Feedback: []learning.FeedbackEvent{}, Weighted: []learning.WeightedScore{},
		Patterns: []PatternUpdate{}, Inversions: []learning.Inversion{}}
	// Evaluate at a time read inside the transaction: writes are
	// serialised, so it is not earlier than any committed event and the
	// O(1) decayed sums stay exact (no fallback to recomputation).
	now = app.Latest(now, s.env.Now())
	// Serialise the outcomes of one task (PostgreSQL: concurrent recorders
	// of the same task wait here until the first commits).
	if err := tx.LockKey(ctx, o.Project, "outcome/"+o.TaskID); err != nil {
		return nil, err
	}
	prev, err := taskOutcome(ctx, tx, o.Project, o.TaskID)
	if err != nil {
		return nil, err
	}
	if prev != nil && (!prev.Inferred || o.Inferred) {
		if o.Inferred && !prev.Inferred {
			res.Outcome, res.Unchanged = *prev, true
			return res, nil
		}
		if !o.Inferred {
			if diff := s.differs(ctx, tx, *prev, o, in); diff != "" {
				return nil, &app.Error{Op: opRecordOutcome, Kind: app.KindConflict, Field: diff,
					Message: fmt.Sprintf("task %q already has outcome %s with a different %s", o.TaskID, prev.ID, diff),
					Hint:    "a task has one outcome: recording the same values again is a no-op; list the task's outcomes to see it", Next: "list_outcomes"}
			}
			res.Outcome, res.Unchanged = *prev, true
			return res, nil
		}
	}
	if prev != nil {
		// an inferred outcome, replaced by this one
		if _, err := s.removeOutcome(ctx, tx, *prev, now); err != nil {
			return nil, err
		}
		res.Replaced = prev.ID
	}
	info, err := s.fromTask(ctx, tx, &o, now)
	if err != nil {
		return nil, err
	}
	res.Task = info
	errs, err := tx.ErrorsByTask(ctx, o.Project, o.TaskID, true)
	if err != nil {
		return nil, err
	}
	if o.ErrorCountSource == "" {
		o.ErrorCount, o.ErrorCountSource = len(errs), "accumulator"
	}
	o.Score = s.lc.ScoreOutcome(o.Signals())
	o.CriterionScores = s.lc.JudgeCriteria(o, errs)
	refs, err := s.outcomePatterns(ctx, tx, o, in, now)
	if err != nil {
		return nil, err
	}
	o.Patterns = make([]string, len(refs))
	for i, r := range refs {
		o.Patterns[i] = r.pattern.ID
	}
	if err := appendOutcome(ctx, tx, o); err != nil {
		return nil, err
	}
	if s.hooks.OutcomeTx != nil {
		if err := s.hooks.OutcomeTx(ctx, tx, o, res.Replaced, now); err != nil {
			return nil, err
		}
	}
	res.Outcome = o
	// The outcome row holds its criterion feedback events
	// (learning.FeedbackEvents). Shared rows come after it: first the
	// criteria every outcome of the project updates (AddCriterionEvent:
	// concurrent writers do not wait for each other on PostgreSQL), and last
	// the patterns, whose row locks (PostgreSQL) are then held for the
	// shortest time.
	for _, fb := range learning.FeedbackEvents(o) {
		c, err := s.addCriterionEvent(ctx, tx, fb, now)
		if err != nil {
			return nil, err
		}
		w, err := s.weight(ctx, tx, c, now)
		if err != nil {
			return nil, err
		}
		res.Feedback = append(res.Feedback, fb)
		res.Weighted = append(res.Weighted, learning.ApplyWeight(fb.Criterion, o.Score.Raw, w.Weight))
	}
	for _, r := range refs {
		u, inv, err := s.observeOutcome(ctx, tx, o, r.pattern.ID, now)
		if err != nil {
			return nil, err
		}
		u.Created = r.created
		res.Patterns = append(res.Patterns, u)
		if inv != nil {
			res.Inversions = append(res.Inversions, *inv)
		}
	}
	deferAggregates(tx, res, now) // behind.go
	return res, nil
}

// fromTask completes an outcome from its tracked task, if there is one:
// an omitted duration is the task's duration so far, omitted retries are
// the task's retries. The task is marked ended. Without a tracked task the
// duration is required.
func (s *Service) fromTask(ctx context.Context, tx store.Tx, o *learning.Outcome, now time.Time) (*TaskInfo, error) {
	t, err := tx.LockTask(ctx, o.Project, o.TaskID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if o.DurationMs < 0 {
			return nil, &app.Error{Op: opRecordOutcome, Kind: app.KindInvalid, Field: "duration_ms",
				Message: fmt.Sprintf("is required: task %q is not tracked", o.TaskID),
				Hint:    "give milliseconds from start to completion, or track the task with client hooks (task events)"}
		}
		o.RetryCount = max(o.RetryCount, 0)
		return nil, nil
	case err != nil:
		return nil, err
	}
	if o.DurationMs < 0 {
		o.DurationMs = min(t.DurationMs(), app.MaxDurationMs)
	}
	if o.Task == "" {
		o.Task = t.Description // the session's first prompt
	}
	if o.RetryCount < 0 {
		o.RetryCount = int(min(t.RetryCount, app.MaxCount))
	}
	o.Exploration = t.Exploration
	ended := now
	t.EndedAt, t.UpdatedAt = &ended, now
	if err := tx.UpdateTask(ctx, t); err != nil {
		return nil, err
	}
	info, err := taskInfo(ctx, tx, t)
	return &info, err
}

// outcomePatterns resolves the patterns an outcome used: the listed ones,
// the strategy, and the strategies found in the description; deduplicated
// and sorted by id, the order in which they are locked.
func (s *Service) outcomePatterns(ctx context.Context, tx store.Tx, o learning.Outcome, in OutcomeInput, now time.Time) ([]patternRef, error) {
	type want struct {
		ref  string
		tags []string
	}
	var wants []want
	for _, p := range in.Patterns {
		wants = append(wants, want{ref: p})
	}
	if o.Strategy != "" {
		wants = append(wants, want{ref: o.Strategy, tags: []string{"strategy"}})
	}
	for _, x := range learning.ExtractPatterns(in.Description) {
		wants = append(wants, want{ref: x.LabelFor(s.lc.Locale)})
	}
	seen := map[string]bool{}
	var refs []patternRef
	for _, w := range wants {
		r, err := s.resolvePattern(ctx, tx, opRecordOutcome, o.Project, w.ref, w.tags, now)
		if err != nil {
			return nil, err
		}
		if r.pattern.Kind == learning.KindAntiPattern {
			return nil, &app.Error{Op: opRecordOutcome, Kind: app.KindInvalid, Field: "patterns",
				Message: fmt.Sprintf("%s is an anti-pattern", r.pattern.ID), Hint: "name its source pattern " + r.pattern.SourceID}
		}
		if !seen[r.pattern.ID] {
			seen[r.pattern.ID] = true
			refs = append(refs, r)
		}
	}
	slices.SortFunc(refs, func(a, b patternRef) int {
		switch {
		case a.pattern.ID < b.pattern.ID:
			return -1
		case a.pattern.ID > b.pattern.ID:
			return 1
		}
		return 0
	})
	return refs, nil
}

// weight evaluates a criterion at now (by recomputation when now precedes
// its newest event).
func (s *Service) weight(ctx context.Context, tx store.Tx, c learning.Criterion, now time.Time) (learning.CriterionWeight, error) {
	now = settle(now, c.Helpful.Ref, c.Harmful.Ref)
	if c.Helpful.Exact(now) && c.Harmful.Exact(now) {
		return s.lc.Weight(c, now), nil
	}
	events, err := tx.FeedbackByCriterion(ctx, c.Project, c.Name)
	if err != nil {
		return learning.CriterionWeight{}, err
	}
	return s.lc.WeightFromEvents(c, events, now), nil
}

// OutcomeQuery selects outcomes to list.
type OutcomeQuery struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

// OutcomeList is a page of outcomes, newest first.
type OutcomeList = app.Page[learning.Outcome]

// ListOutcomes lists recorded outcomes, newest first.
func (s *Service) ListOutcomes(ctx context.Context, q OutcomeQuery) (*OutcomeList, error) {
	const op = "list outcomes"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	if err := app.CheckQuery(op, "bead_id", q.TaskID); err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.OutcomeFilter{TaskID: q.TaskID, Limit: limit, Offset: q.Offset}
	out := OutcomeList{Project: project, Items: []learning.Outcome{}, Limit: limit, Offset: q.Offset}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		if out.Items, err = tx.ListOutcomes(ctx, project, f); err != nil {
			return err
		}
		out.Total, err = tx.CountOutcomes(ctx, project, f)
		return err
	})
	return app.Finish(&out, err)
}

// GetOutcome returns one outcome.
func (s *Service) GetOutcome(ctx context.Context, project, id string) (*learning.Outcome, error) {
	const op = "get outcome"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "id", id); err != nil {
		return nil, err
	}
	var o learning.Outcome
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		o, err = tx.GetOutcome(ctx, project, id)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "id", Message: fmt.Sprintf("no outcome %q in project %q", id, project),
				Hint: "list the project's outcomes to find its id", Next: "list_outcomes"}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// addCriterionEvent adds one of an outcome's criterion feedback events to
// its criterion's decayed sums (recordTx and the replay).
func (s *Service) addCriterionEvent(ctx context.Context, tx store.Tx, fb learning.FeedbackEvent, now time.Time) (learning.Criterion, error) {
	return tx.AddCriterionEvent(ctx, fb, s.lc.EventWeight(fb), s.lc.HalfLifeDays, now)
}

// observeOutcome records an outcome as an observation of one of its
// patterns (recordTx and the replay).
func (s *Service) observeOutcome(ctx context.Context, tx store.Tx, o learning.Outcome, pid string, now time.Time) (PatternUpdate, *learning.Inversion, error) {
	return s.observe(ctx, tx, pid, o.Project,
		observation{id: outcomeFeedbackID(o.ID, pid), success: o.Success, fbType: o.Score.Type, taskID: o.TaskID, at: o.Timestamp}, now)
}
