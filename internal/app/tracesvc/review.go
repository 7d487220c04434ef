package tracesvc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// Review kinds.
const (
	ReviewTaskKind = "task"
	ReviewDaily    = "daily"
	ReviewWeekly   = "weekly"
)

// Review is a stored review: its kind, period, result and report.
type Review = store.TraceReview

// TaskReviewResult is a task-end review.
type TaskReviewResult struct {
	Project string           `json:"project"`
	TaskID  string           `json:"task_id"`
	Traces  int              `json:"traces"`
	Review  trace.TaskReview `json:"review"`
	// ReviewID of the stored review.
	ReviewID string `json:"review_id,omitempty"`
}

type reviewTaskArgs struct {
	Project string `json:"project"`
	TaskID  string `json:"task_id"`
}

// ReviewTask runs the task-end review (seed: 任务结束复盘) over a task's
// traces: every chain with final_success && len(attempts) > 1 creates or
// updates its failure patterns (a trace already counted by a pattern is
// not counted again, so a review can run any number of times); chains that
// failed every attempt mark the skill as needing a person; the result,
// with its heuristic proposals (avoid/verify), is stored as a review of
// kind "task".
func (s *Service) ReviewTask(ctx context.Context, project, taskID string) (*TaskReviewResult, error) {
	const op = "review task"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "task_id", taskID); err != nil {
		return nil, err
	}
	now := s.env.Now()
	res := &TaskReviewResult{Project: project, TaskID: taskID}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		var traces []trace.ExecutionTrace
		skills := map[string]bool{}
		if err := tx.EachTrace(ctx, project, store.TraceFilter{TaskID: taskID}, func(t trace.ExecutionTrace) error {
			traces = append(traces, t)
			skills[t.SkillID] = true
			return nil
		}); err != nil {
			return err
		}
		if len(traces) == 0 {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "task_id", Message: "task " + taskID + " has no traces"}
		}
		if err := lockSkills(ctx, tx, project, slices.Collect(maps.Keys(skills))); err != nil {
			return err
		}
		var patterns []trace.FailurePattern
		for skill := range skills {
			ps, err := tx.ListFailurePatterns(ctx, project, store.FailurePatternFilter{SkillID: skill})
			if err != nil {
				return err
			}
			patterns = append(patterns, ps...)
		}
		rev, err := trace.ReviewTask(traces, patterns, now, s.cfg.Review)
		if err != nil {
			return invalid(op, err)
		}
		// The patterns were learned as each trace closed: propose the
		// heuristics of every pattern the task's traces taught.
		rev.Heuristics = taskHeuristics(traces, patterns, rev)
		for _, ch := range rev.Patterns {
			if err := tx.PutFailurePattern(ctx, project, ch.Pattern); err != nil {
				return err
			}
		}
		// The skills' statistics were updated as each trace closed; the
		// verdicts here are the task's view of them.
		for _, v := range rev.Skills {
			if !v.NeedsPerson {
				continue
			}
			st, err := tx.GetTraceSkill(ctx, project, v.SkillID)
			if err != nil {
				continue
			}
			if !st.NeedsPerson {
				st.NeedsPerson, st.Reason = true, v.Reason
				if err := tx.PutTraceSkill(ctx, project, st, now); err != nil {
					return err
				}
			}
		}
		data, err := json.Marshal(struct {
			TaskID string `json:"task_id"`
			trace.TaskReview
		}{taskID, rev})
		if err != nil {
			return err
		}
		id := app.NewID("rev-")
		if _, err := tx.InsertTraceReview(ctx, store.TraceReview{Project: project, ID: id, Kind: ReviewTaskKind,
			PeriodStart: now, PeriodEnd: now, CreatedAt: now, Result: data}); err != nil {
			return err
		}
		*res = TaskReviewResult{Project: project, TaskID: taskID, Traces: len(traces), Review: rev, ReviewID: id}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.heuristics != nil && len(res.Review.Heuristics) > 0 {
		if err := s.heuristics(ctx, project, taskID, res.Review.Heuristics); err != nil {
			s.env.Logger.Warn("trace: the task review's heuristics were not written to the experience system",
				"project", project, "task", taskID, "err", err)
		}
	}
	return res, nil
}

// taskHeuristics are the heuristic proposals of a task's review: the
// review's own (chains that gave up, patterns it changed) and those of the
// patterns that counted the task's traces before the review.
func taskHeuristics(traces []trace.ExecutionTrace, patterns []trace.FailurePattern, rev trace.TaskReview) []trace.HeuristicProposal {
	out := slices.Clone(rev.Heuristics)
	seen := map[string]bool{}
	for _, h := range out {
		if h.PatternID != "" {
			seen[h.PatternID] = true
		}
	}
	ids := map[string]bool{}
	for _, t := range traces {
		ids[t.ID] = true
	}
	for _, p := range patterns {
		if seen[p.ID] || !slices.ContainsFunc(p.TraceIDs, func(id string) bool { return ids[id] }) {
			continue
		}
		if h, ok := trace.VerifyHeuristic(p); ok {
			seen[p.ID] = true
			out = append(out, h)
		}
	}
	if out == nil {
		out = []trace.HeuristicProposal{}
	}
	return out
}

func (s *Service) reviewTaskJob(ctx context.Context, j jobs.Job) error {
	var a reviewTaskArgs
	if err := j.Decode(&a); err != nil {
		return err
	}
	_, err := s.ReviewTask(ctx, a.Project, a.TaskID)
	if app.KindOf(err) == app.KindNotFound || app.KindOf(err) == app.KindInvalid {
		return jobs.Permanent(err)
	}
	return err
}

// ScheduledReviewInput asks for a scheduled review.
type ScheduledReviewInput struct {
	Project string `json:"project,omitempty"`
	// Kind is "daily" (24 h) or "weekly" (7 days).
	Kind string `json:"kind"`
	// End of the reviewed period (default: the start of the current UTC
	// day, or of the current week for weekly reviews — the period that
	// just ended).
	End time.Time `json:"end,omitzero"`
}

// ScheduledReviewOutput is a scheduled review and whether it was made now.
type ScheduledReviewOutput struct {
	Review Review                      `json:"review"`
	Result trace.ScheduledReviewResult `json:"result"`
	// Created is false when the period had been reviewed already (the
	// stored review is returned).
	Created bool `json:"created"`
}

func periodLength(kind string) (time.Duration, jobs.Period, bool) {
	switch kind {
	case ReviewDaily:
		return 24 * time.Hour, jobs.Daily, true
	case ReviewWeekly:
		return 7 * 24 * time.Hour, jobs.Weekly, true
	}
	return 0, "", false
}

// RunScheduledReview runs the scheduled review (seed: 定时复盘) of one
// period: success-rate trends per skill, artifact and methodology against
// the previous period, the most frequent failure patterns, errors no
// pattern covers, skills needing a person, and suggestions; stored with
// its markdown report. Idempotent per period: a period reviewed already
// returns the stored review.
func (s *Service) RunScheduledReview(ctx context.Context, in ScheduledReviewInput) (*ScheduledReviewOutput, error) {
	const op = "run review"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	length, period, ok := periodLength(in.Kind)
	if !ok {
		return nil, app.Invalid(op, "kind", "%q is not daily or weekly", in.Kind)
	}
	now := s.env.Now()
	end := in.End.UTC()
	if end.IsZero() {
		end = period.Start(now)
	}
	current, previous := trace.Periods(end, length)
	out := &ScheduledReviewOutput{}
	// Read and compute in a read transaction (a long review never holds
	// the writer), then insert the review; a review of the same period
	// inserted meanwhile wins.
	done := false
	var result trace.ScheduledReviewResult
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		done = false
		if r, ok, err := periodReview(ctx, tx, project, in.Kind, current.Start); err != nil || ok {
			if ok {
				out.Review, done = r, true
				return json.Unmarshal(r.Result, &out.Result)
			}
			return err
		}
		var traces []trace.ExecutionTrace
		if err := tx.EachTrace(ctx, project, store.TraceFilter{Since: previous.Start, Until: current.End},
			func(t trace.ExecutionTrace) error {
				t.Attempts = slimAttempts(t.Attempts)
				traces = append(traces, t)
				return nil
			}); err != nil {
			return err
		}
		patterns, err := tx.ListFailurePatterns(ctx, project, store.FailurePatternFilter{})
		if err != nil {
			return err
		}
		if result, err = trace.ReviewPeriod(traces, patterns, current, previous, s.cfg.Schedule); err != nil {
			return invalid(op, err)
		}
		return nil
	})
	if err != nil || done {
		return out, err
	}
	data, err := json.Marshal(result)
	if err != nil {
		return nil, app.Wrap(op, err)
	}
	title := fmt.Sprintf("kaizen %s review of %s", in.Kind, project)
	r := store.TraceReview{Project: project, ID: app.NewID("rev-"), Kind: in.Kind, PeriodStart: current.Start,
		PeriodEnd: current.End, CreatedAt: now, Result: data, Report: trace.RenderMarkdown(result, title)}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		created, err := tx.InsertTraceReview(ctx, r)
		if err != nil {
			return err
		}
		out.Review, out.Result, out.Created = r, result, created
		if !created {
			prev, ok, err := periodReview(ctx, tx, project, in.Kind, current.Start)
			if err != nil || !ok {
				return err
			}
			out.Review = prev
			return json.Unmarshal(prev.Result, &out.Result)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// periodReview finds the stored review of a kind and period start.
func periodReview(ctx context.Context, tx store.Tx, project, kind string, start time.Time) (store.TraceReview, bool, error) {
	for offset := 0; ; offset += 100 {
		rs, err := tx.ListTraceReviews(ctx, project, store.TraceReviewFilter{Kind: kind, Limit: 100, Offset: offset})
		if err != nil {
			return store.TraceReview{}, false, err
		}
		for _, r := range rs {
			if r.PeriodStart.Equal(start) {
				return r, true, nil
			}
		}
		if len(rs) < 100 {
			return store.TraceReview{}, false, nil
		}
	}
}

// slimAttempts drops the outputs the scheduled review does not read.
func slimAttempts(as []trace.Attempt) []trace.Attempt {
	for i := range as {
		as[i].Result = ""
		as[i].FixActions = nil
	}
	return as
}

// scheduledArgs are the arguments of a scheduled review job.
type scheduledArgs struct {
	Project string    `json:"project"`
	End     time.Time `json:"end"`
}

// scheduleReviews enqueues, in the transaction of a trace that closed, the
// daily and weekly reviews of the periods the trace is in: due when each
// period ends, one job per project and period (a job that exists is kept).
func scheduleReviews(ctx context.Context, tx store.Tx, project string, now time.Time) error {
	for _, k := range []struct {
		kind   string
		period jobs.Period
	}{{KindReviewDaily, jobs.Daily}, {KindReviewWeekly, jobs.Weekly}} {
		end := k.period.Next(now)
		if _, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: k.kind, Args: scheduledArgs{Project: project, End: end},
			RunAt: end, UniqueKey: k.kind + "/" + project + "@" + end.Format(time.RFC3339), Mode: store.EnqueueKeep}); err != nil {
			return err
		}
	}
	return nil
}

// scheduledJob is the handler of a scheduled review job: it reviews the
// project's period that ended at the job's end. The review is idempotent
// per period, so a job that restarts after a crash changes nothing more.
func (s *Service) scheduledJob(kind string) jobs.Handler {
	return func(ctx context.Context, j jobs.Job) error {
		var a scheduledArgs
		if err := j.Decode(&a); err != nil {
			return err
		}
		_, err := s.RunScheduledReview(ctx, ScheduledReviewInput{Project: a.Project, Kind: kind, End: a.End})
		if app.KindOf(err) == app.KindInvalid {
			return jobs.Permanent(err)
		}
		return err
	}
}
