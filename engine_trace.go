package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app/tracesvc"
	"github.com/kaizenhq/kaizen/trace"
)

// Engine actions of the failure-learning system (seed 003, package trace):
// each delegates to the trace service. See docs/trace.md.

// Types of the failure-learning actions.
type (
	TraceEventInput       = tracesvc.EventInput
	TraceEventResult      = tracesvc.EventResult
	RecordTraceInput      = tracesvc.RecordTraceInput
	RecordTraceResult     = tracesvc.RecordTraceResult
	TraceCheckInput       = tracesvc.CheckInput
	TraceCheckResult      = tracesvc.CheckResult
	TraceVerifyInput      = tracesvc.VerifyInput
	TraceQuery            = tracesvc.TraceQuery
	TraceList             = tracesvc.TraceList
	FailurePatternQuery   = tracesvc.FailurePatternQuery
	FailurePatternList    = tracesvc.FailurePatternList
	TraceSkillList        = tracesvc.SkillList
	TaskReviewResult      = tracesvc.TaskReviewResult
	ScheduledReviewInput  = tracesvc.ScheduledReviewInput
	ScheduledReviewOutput = tracesvc.ScheduledReviewOutput
	TraceReviewQuery      = tracesvc.ReviewQuery
	TraceReviewList       = tracesvc.ReviewList
	TraceReview           = tracesvc.Review
	ArtifactHistory       = tracesvc.ArtifactHistory
	ExecutionTrace        = trace.ExecutionTrace
	FailurePattern        = trace.FailurePattern
	TraceVerdict          = trace.Verdict
	TraceWarning          = trace.Warning
)

// RecordTraceEvents feeds an agent session's events (commands, edits,
// prompts, session end) to its trace assembly; the client hooks call it.
func (e *Engine) RecordTraceEvents(ctx context.Context, in TraceEventInput) (*TraceEventResult, error) {
	return e.trace.RecordEvents(ctx, in)
}

// RecordTrace records a whole execution trace.
func (e *Engine) RecordTrace(ctx context.Context, in RecordTraceInput) (*RecordTraceResult, error) {
	return e.trace.RecordTrace(ctx, in)
}

// CheckCommand is the pre-execution check: known failure patterns of the
// command, with their fix, as a warning (never a block).
func (e *Engine) CheckCommand(ctx context.Context, in TraceCheckInput) (*TraceCheckResult, error) {
	return e.trace.Check(ctx, in)
}

// VerifyResult is self-verification: a result against its expectation,
// with the next correction and the known fixes.
func (e *Engine) VerifyResult(ctx context.Context, in TraceVerifyInput) (*TraceVerdict, error) {
	return e.trace.Verify(ctx, in)
}

// ListTraces lists execution traces, newest first.
func (e *Engine) ListTraces(ctx context.Context, q TraceQuery) (*TraceList, error) {
	return e.trace.ListTraces(ctx, q)
}

// GetTrace returns one execution trace with its attempts.
func (e *Engine) GetTrace(ctx context.Context, project, id string) (*ExecutionTrace, error) {
	return e.trace.GetTrace(ctx, project, id)
}

// ListFailurePatterns lists failure patterns, most frequent first.
func (e *Engine) ListFailurePatterns(ctx context.Context, q FailurePatternQuery) (*FailurePatternList, error) {
	return e.trace.ListFailurePatterns(ctx, q)
}

// GetFailurePattern returns one failure pattern.
func (e *Engine) GetFailurePattern(ctx context.Context, project, id string) (*FailurePattern, error) {
	return e.trace.GetFailurePattern(ctx, project, id)
}

// ListTraceSkills lists every skill's success statistics.
func (e *Engine) ListTraceSkills(ctx context.Context, project string) (*TraceSkillList, error) {
	return e.trace.ListTraceSkills(ctx, project)
}

// ReviewTask runs the task-end review of a task's traces.
func (e *Engine) ReviewTask(ctx context.Context, project, taskID string) (*TaskReviewResult, error) {
	return e.trace.ReviewTask(ctx, project, taskID)
}

// RunTraceReview runs a scheduled (daily or weekly) review of a period.
func (e *Engine) RunTraceReview(ctx context.Context, in ScheduledReviewInput) (*ScheduledReviewOutput, error) {
	return e.trace.RunScheduledReview(ctx, in)
}

// ListTraceReviews lists reviews, newest first.
func (e *Engine) ListTraceReviews(ctx context.Context, q TraceReviewQuery) (*TraceReviewList, error) {
	return e.trace.ListReviews(ctx, q)
}

// GetTraceReview returns one review with its result and report.
func (e *Engine) GetTraceReview(ctx context.Context, project, id string) (*TraceReview, error) {
	return e.trace.GetReview(ctx, project, id)
}

// ArtifactHistory returns an artifact's execution history and its success
// rate per context.
func (e *Engine) ArtifactHistory(ctx context.Context, project, artifactID string) (*ArtifactHistory, error) {
	return e.trace.GetArtifactHistory(ctx, project, artifactID)
}
