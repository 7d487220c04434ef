package kaizen

import (
	"context"
	"errors"
	"slices"
	"time"

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
}

const opRecordOutcome = "record outcome"

// validateOutcome checks an outcome input and builds the outcome to store
// (ErrorCount still unset when the input omits it).
func (e *Engine) validateOutcome(in OutcomeInput, now time.Time) (learning.Outcome, error) {
	op := opRecordOutcome
	project, err := e.project(op, in.Project)
	if err != nil {
		return learning.Outcome{}, err
	}
	task := in.TaskID
	if in.TaskIDAlias != "" {
		if task != "" && task != in.TaskIDAlias {
			return learning.Outcome{}, invalid(op, "task_id", "differs from bead_id %q", task)
		}
		task = in.TaskIDAlias
	}
	if err := validID(op, "bead_id", task); err != nil {
		return learning.Outcome{}, err
	}
	o := learning.Outcome{ID: newID("out-"), Project: project, TaskID: task, RecordedAt: now,
		Strategy: in.Strategy, FailureDetails: in.FailureDetails}
	switch {
	case in.DurationMs == nil:
		o.DurationMs = -1 // taken from the tracked task in the transaction
	case *in.DurationMs < 0:
		return o, invalid(op, "duration_ms", "must be >= 0, got %d", *in.DurationMs)
	case *in.DurationMs > maxDurationMs:
		return o, invalid(op, "duration_ms", "must be <= %d (one year), got %d", maxDurationMs, *in.DurationMs)
	default:
		o.DurationMs = *in.DurationMs
	}
	if in.Success == nil {
		return o, &Error{Op: op, Kind: KindInvalid, Field: "success", Message: "is required", Hint: "true or false"}
	}
	o.Success = *in.Success
	if in.ErrorCount != nil {
		if err := checkCount(op, "error_count", *in.ErrorCount); err != nil {
			return o, err
		}
		o.ErrorCount, o.ErrorCountSource = *in.ErrorCount, "input"
	}
	o.RetryCount = -1 // taken from the tracked task, else 0
	if in.RetryCount != nil {
		if err := checkCount(op, "retry_count", *in.RetryCount); err != nil {
			return o, err
		}
		o.RetryCount = *in.RetryCount
	}
	if len(in.FilesTouched) > maxFilesTouched {
		return o, invalid(op, "files_touched", "has more than %d entries", maxFilesTouched)
	}
	o.FilesTouched = []string{}
	for _, f := range in.FilesTouched {
		if err := validID(op, "files_touched", f); err != nil || len(f) > maxPathLen {
			return o, invalid(op, "files_touched", "entry %q must be a non-empty single-line path", f)
		}
		o.FilesTouched = append(o.FilesTouched, f)
	}
	if in.Strategy != "" {
		if err := patternContent(op, "strategy", in.Strategy); err != nil {
			return o, err
		}
	}
	if err := validText(op, "failure_details", in.FailureDetails, maxTextLen, false); err != nil {
		return o, err
	}
	if err := validText(op, "description", in.Description, maxTextLen, false); err != nil {
		return o, err
	}
	if in.FailureMode != "" {
		m := learning.FailureMode(in.FailureMode)
		if !m.Valid() {
			return o, &Error{Op: op, Kind: KindInvalid, Field: "failure_mode", Message: sprintf("unknown mode %q", in.FailureMode),
				Hint: sprintf("one of %v", learning.FailureModes)}
		}
		if o.Success {
			return o, invalid(op, "failure_mode", "is only meaningful when success is false")
		}
		o.FailureMode = m
	} else if !o.Success && in.FailureDetails != "" {
		o.FailureMode = learning.ClassifyFailure(in.FailureDetails)
	}
	if o.Timestamp, err = parseTime(op, "timestamp", in.Timestamp, now); err != nil {
		return o, err
	}
	if len(in.Patterns) > maxPatternRefs {
		return o, invalid(op, "patterns", "has more than %d entries", maxPatternRefs)
	}
	for _, p := range in.Patterns {
		if err := patternContent(op, "patterns", p); err != nil {
			return o, err
		}
	}
	if len(in.Criteria) > maxCriteria {
		return o, invalid(op, "criteria", "has more than %d entries", maxCriteria)
	}
	o.Criteria = slices.Clone(in.Criteria)
	if len(o.Criteria) == 0 {
		o.Criteria = slices.Clone(e.lc.DefaultCriteria)
	}
	for _, c := range o.Criteria {
		if err := learning.ValidateName("criteria", c); err != nil {
			return o, invalid(op, "criteria", "%v", err)
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
func (e *Engine) RecordOutcome(ctx context.Context, in OutcomeInput) (*OutcomeResult, error) {
	now := e.Now()
	o, err := e.validateOutcome(in, now)
	if err != nil {
		return nil, err
	}
	var res *OutcomeResult
	err = e.update(ctx, opRecordOutcome, func(tx store.Tx) error {
		res = &OutcomeResult{Feedback: []learning.FeedbackEvent{}, Weighted: []learning.WeightedScore{},
			Patterns: []PatternUpdate{}, Inversions: []learning.Inversion{}}
		o := o // fn may be retried: work on a copy
		// Evaluate at a time read inside the transaction: writes are
		// serialised, so it is not earlier than any committed event and the
		// O(1) decayed sums stay exact (no fallback to recomputation).
		now := latest(now, e.Now())
		info, err := e.fromTask(ctx, tx, &o, now)
		if err != nil {
			return err
		}
		res.Task = info
		if o.ErrorCountSource == "" {
			errs, err := tx.ErrorsByTask(ctx, o.Project, o.TaskID, true)
			if err != nil {
				return err
			}
			o.ErrorCount, o.ErrorCountSource = len(errs), "accumulator"
		}
		o.Score = e.lc.ScoreOutcome(o.Signals())
		refs, err := e.outcomePatterns(ctx, tx, o, in, now)
		if err != nil {
			return err
		}
		o.Patterns = make([]string, len(refs))
		for i, r := range refs {
			o.Patterns[i] = r.pattern.ID
		}
		if _, err := tx.InsertOutcome(ctx, o); err != nil {
			return err
		}
		res.Outcome = o
		// The outcome row holds its criterion feedback events
		// (learning.FeedbackEvents). Shared rows come after it: patterns,
		// and last the criteria every outcome of the project updates, so
		// that the hottest row locks (PostgreSQL) are held for the shortest
		// time.
		for _, r := range refs {
			u, inv, err := e.observe(ctx, tx, r.pattern.ID, o.Project,
				observation{success: o.Success, fbType: o.Score.Type, taskID: o.TaskID, at: o.Timestamp}, now)
			if err != nil {
				return err
			}
			u.Created = r.created
			res.Patterns = append(res.Patterns, u)
			if inv != nil {
				res.Inversions = append(res.Inversions, *inv)
			}
		}
		for _, fb := range learning.FeedbackEvents(o) {
			c, err := tx.LockCriterion(ctx, o.Project, fb.Criterion, now)
			if err != nil {
				return err
			}
			c.Apply(fb, e.lc.HalfLifeDays)
			c.UpdatedAt = now
			if err := tx.PutCriterion(ctx, c); err != nil {
				return err
			}
			w, err := e.weight(ctx, tx, c, now)
			if err != nil {
				return err
			}
			res.Feedback = append(res.Feedback, fb)
			res.Weighted = append(res.Weighted, learning.ApplyWeight(fb.Criterion, o.Score.Raw, w.Weight))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Committed: the daemon's worker extracts the task's experience once
	// the task is quiet (a non-blocking enqueue; a no-op without worker).
	e.outcomeRecorded(res.Outcome.Project, res.Outcome.TaskID)
	return res, nil
}

// fromTask completes an outcome from its tracked task, if there is one:
// an omitted duration is the task's duration so far, omitted retries are
// the task's retries. The task is marked ended. Without a tracked task the
// duration is required.
func (e *Engine) fromTask(ctx context.Context, tx store.Tx, o *learning.Outcome, now time.Time) (*TaskInfo, error) {
	t, err := tx.LockTask(ctx, o.Project, o.TaskID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if o.DurationMs < 0 {
			return nil, &Error{Op: opRecordOutcome, Kind: KindInvalid, Field: "duration_ms",
				Message: sprintf("is required: task %q is not tracked", o.TaskID),
				Hint:    "give milliseconds from start to completion, or track the task with client hooks (task events)"}
		}
		o.RetryCount = max(o.RetryCount, 0)
		return nil, nil
	case err != nil:
		return nil, err
	}
	if o.DurationMs < 0 {
		o.DurationMs = min(t.DurationMs(), maxDurationMs)
	}
	if o.RetryCount < 0 {
		o.RetryCount = int(min(t.RetryCount, maxCount))
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
func (e *Engine) outcomePatterns(ctx context.Context, tx store.Tx, o learning.Outcome, in OutcomeInput, now time.Time) ([]patternRef, error) {
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
		wants = append(wants, want{ref: x.LabelFor(e.lc.Locale)})
	}
	seen := map[string]bool{}
	var refs []patternRef
	for _, w := range wants {
		r, err := e.resolvePattern(ctx, tx, opRecordOutcome, o.Project, w.ref, w.tags, now)
		if err != nil {
			return nil, err
		}
		if r.pattern.Kind == learning.KindAntiPattern {
			return nil, &Error{Op: opRecordOutcome, Kind: KindInvalid, Field: "patterns",
				Message: sprintf("%s is an anti-pattern", r.pattern.ID), Hint: "name its source pattern " + r.pattern.SourceID}
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
func (e *Engine) weight(ctx context.Context, tx store.Tx, c learning.Criterion, now time.Time) (learning.CriterionWeight, error) {
	now = settle(now, c.Helpful.Ref, c.Harmful.Ref)
	if c.Helpful.Exact(now) && c.Harmful.Exact(now) {
		return e.lc.Weight(c, now), nil
	}
	events, err := tx.FeedbackByCriterion(ctx, c.Project, c.Name)
	if err != nil {
		return learning.CriterionWeight{}, err
	}
	return e.lc.WeightFromEvents(c, events, now), nil
}

// OutcomeQuery selects outcomes to list.
type OutcomeQuery struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

// OutcomeList is a page of outcomes, newest first.
type OutcomeList struct {
	Items []learning.Outcome `json:"items"`
	Total int64              `json:"total"`
}

// ListOutcomes lists recorded outcomes, newest first.
func (e *Engine) ListOutcomes(ctx context.Context, q OutcomeQuery) (*OutcomeList, error) {
	const op = "list outcomes"
	project, err := e.project(op, q.Project)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.OutcomeFilter{TaskID: q.TaskID, Limit: limit, Offset: q.Offset}
	var out OutcomeList
	err = e.view(ctx, op, func(tx store.Tx) error {
		var err error
		if out.Items, err = tx.ListOutcomes(ctx, project, f); err != nil {
			return err
		}
		out.Total, err = tx.CountOutcomes(ctx, project, f)
		return err
	})
	return &out, err
}

// GetOutcome returns one outcome.
func (e *Engine) GetOutcome(ctx context.Context, project, id string) (*learning.Outcome, error) {
	const op = "get outcome"
	project, err := e.project(op, project)
	if err != nil {
		return nil, err
	}
	if err := validID(op, "id", id); err != nil {
		return nil, err
	}
	var o learning.Outcome
	err = e.view(ctx, op, func(tx store.Tx) error {
		o, err = tx.GetOutcome(ctx, project, id)
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Op: op, Kind: KindNotFound, Field: "id", Message: sprintf("no outcome %q in project %q", id, project),
				Hint: "list the project's outcomes to find its id", Next: "list_outcomes"}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// pageLimit validates paging: limit 0 means the default (50), at most 1000;
// offset at least 0.
func pageLimit(op string, limit, offset int) (int, error) {
	switch {
	case limit < 0 || limit > 1000:
		return 0, invalid(op, "limit", "must be between 0 (default 50) and 1000, got %d", limit)
	case offset < 0:
		return 0, invalid(op, "offset", "must be >= 0, got %d", offset)
	case limit == 0:
		return 50, nil
	}
	return limit, nil
}
