package kaizen

import (
	"context"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// Engine actions of the learning system (seed 000): outcomes, patterns, plan guidance, errors, tasks: each delegates to its service.

// PlanGuidance returns structured guidance for planning a task: the ranked
// patterns (base score × maturity multiplier, with the evidence), the
// anti-patterns to avoid, warnings when the task description mentions an
// anti-pattern or deprecated pattern, criterion weights, and the open
// errors of the task. Render it with Guidance.Markdown.
func (e *Engine) PlanGuidance(ctx context.Context, in PlanInput) (*learning.Guidance, error) {
	return e.learning.PlanGuidance(ctx, in)
}

// ExtractPatterns detects the seed's decomposition strategies in a
// description, in English or Chinese (see the package function; it needs
// no stored data).
func (e *Engine) ExtractPatterns(description string) ([]learning.Extracted, error) {
	return e.learning.ExtractPatterns(description)
}

// OutcomeSeries counts the outcomes that finished on each of the last
// days UTC days (today included), and how many succeeded. capped reports
// that the window held more than 50,000 outcomes and only the newest were
// counted.
func (e *Engine) OutcomeSeries(ctx context.Context, project string, days int) (series []DayCount, capped bool, err error) {
	return e.learning.OutcomeSeries(ctx, project, days)
}

// Rebuild recomputes a project's aggregates (pattern counts, maturity sums,
// inversions, criterion sums) from the stored events. The result equals the
// incremental aggregates; use it to repair or after changing half-lives.
func (e *Engine) Rebuild(ctx context.Context, project string) (*RebuildResult, error) {
	return e.learning.Rebuild(ctx, project)
}

// RecordTaskEvent folds one event into a task, creating the task on its
// first event; a tool failure is also recorded in the error accumulator,
// in the same transaction.
func (e *Engine) RecordTaskEvent(ctx context.Context, in TaskEventInput) (*TaskEventResult, error) {
	return e.learning.RecordTaskEvent(ctx, in)
}

// CloseTask ends a tracked task and, unless one was reported, records
// its outcome inferred from what its events showed (see
// learningsvc.Service.CloseTask).
func (e *Engine) CloseTask(ctx context.Context, in CloseTaskInput) (*CloseTaskResult, error) {
	return e.learning.CloseTask(ctx, in)
}

// CloseIdleTasks closes the tracked tasks idle for longer than a timeout.
func (e *Engine) CloseIdleTasks(ctx context.Context, in CloseIdleInput) (*CloseIdleResult, error) {
	return e.learning.CloseIdleTasks(ctx, in)
}

// PruneAppliedEvents forgets the ids of events applied more than olderThan
// ago (the ledger that makes redelivered hook events count once).
func (e *Engine) PruneAppliedEvents(ctx context.Context, olderThan time.Duration) (int64, error) {
	return e.learning.PruneAppliedEvents(ctx, olderThan)
}

// GetTask returns a tracked task.
func (e *Engine) GetTask(ctx context.Context, project, id string) (*TaskInfo, error) {
	return e.learning.GetTask(ctx, project, id)
}

// ListTasks lists tracked tasks, most recently active first.
func (e *Engine) ListTasks(ctx context.Context, q TaskQuery) (*TaskList, error) {
	return e.learning.ListTasks(ctx, q)
}

// RecordError adds an error to a task's accumulator.
func (e *Engine) RecordError(ctx context.Context, in ErrorInput) (*learning.ErrorEntry, error) {
	return e.learning.RecordError(ctx, in)
}

// ResolveError marks an error resolved; resolved errors leave the retry
// context. Resolving twice keeps the first resolution time.
func (e *Engine) ResolveError(ctx context.Context, project, id string) (*learning.ErrorEntry, error) {
	return e.learning.ResolveError(ctx, project, id)
}

// ErrorContext formats a task's errors for a retry prompt, grouped by type;
// resolved errors only when includeResolved.
func (e *Engine) ErrorContext(ctx context.Context, project, taskID string, includeResolved bool) (*ErrorContextResult, error) {
	return e.learning.ErrorContext(ctx, project, taskID, includeResolved)
}

// ErrorStats counts a task's errors; Total is what an outcome uses as
// error_count when it gives none.
func (e *Engine) ErrorStats(ctx context.Context, project, taskID string) (*learning.ErrorStats, error) {
	return e.learning.ErrorStats(ctx, project, taskID)
}

// ListErrors lists recorded errors, newest first.
func (e *Engine) ListErrors(ctx context.Context, q ErrorQuery) (*ErrorList, error) {
	return e.learning.ListErrors(ctx, q)
}

// RecordOutcome scores a finished task and learns from it in one
// transaction: the outcome with its feedback event per criterion and the
// criterion aggregates, and for every pattern used its maturity feedback,
// the pattern's counts and maturity and, when the failure ratio crosses the
// threshold, the anti-pattern inversion.
func (e *Engine) RecordOutcome(ctx context.Context, in OutcomeInput) (*OutcomeResult, error) {
	return e.learning.RecordOutcome(ctx, in)
}

// ListOutcomes lists recorded outcomes, newest first.
func (e *Engine) ListOutcomes(ctx context.Context, q OutcomeQuery) (*OutcomeList, error) {
	return e.learning.ListOutcomes(ctx, q)
}

// GetOutcome returns one outcome.
func (e *Engine) GetOutcome(ctx context.Context, project, id string) (*learning.Outcome, error) {
	return e.learning.GetOutcome(ctx, project, id)
}

// ObservePattern records a success or failure of a pattern: the
// observation, helpful or harmful maturity feedback, and the inversion check.
func (e *Engine) ObservePattern(ctx context.Context, in ObserveInput) (*ObservationResult, error) {
	return e.learning.ObservePattern(ctx, in)
}

// ListPatterns lists patterns with their maturity. The state filter is
// evaluated at the engine's now (maturity decays), so it is applied after
// loading the project's patterns.
func (e *Engine) ListPatterns(ctx context.Context, q PatternQuery) (*PatternList, error) {
	return e.learning.ListPatterns(ctx, q)
}

// GetPattern returns a pattern by id, or by content when ref is not an id.
func (e *Engine) GetPattern(ctx context.Context, project, ref string) (*PatternDetail, error) {
	return e.learning.GetPattern(ctx, project, ref)
}

// PromotePattern marks a pattern proven by external validation. A
// deprecated pattern cannot be promoted; reset it first.
func (e *Engine) PromotePattern(ctx context.Context, in ManualInput) (*ManualResult, error) {
	return e.learning.PromotePattern(ctx, in)
}

// DeprecatePattern excludes a pattern (multiplier 0) for a reason.
func (e *Engine) DeprecatePattern(ctx context.Context, in ManualInput) (*ManualResult, error) {
	return e.learning.DeprecatePattern(ctx, in)
}

// ResetPattern starts a pattern's evaluation over: manual state cleared,
// observations and maturity feedback recorded before now no longer count,
// and its anti-pattern (if any) removed. History stays stored.
func (e *Engine) ResetPattern(ctx context.Context, in ManualInput) (*ManualResult, error) {
	return e.learning.ResetPattern(ctx, in)
}

// ExplainPattern answers why a pattern is in its state and whether it was
// inverted, with the numbers and thresholds involved.
func (e *Engine) ExplainPattern(ctx context.Context, project, ref string) (*learning.PatternExplanation, error) {
	return e.learning.ExplainPattern(ctx, project, ref)
}

// ListCriteria returns every criterion's weight at the engine's now.
func (e *Engine) ListCriteria(ctx context.Context, project string) (*CriterionList, error) {
	return e.learning.ListCriteria(ctx, project)
}

// ExplainCriterion explains a criterion's weight.
func (e *Engine) ExplainCriterion(ctx context.Context, project, name string) (*learning.CriterionExplanation, error) {
	return e.learning.ExplainCriterion(ctx, project, name)
}
