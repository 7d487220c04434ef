package kaizen

import "context"

// Engine actions over the data a user owns: forgetting (deleting) what
// kaizen recorded, and correcting a heuristic. Each delegates to its
// service, which recomputes or removes what depended on the record in the
// same transaction.

// DeleteOutcome forgets an outcome and what it taught: its criterion
// feedback, its pattern observations, an inversion or a pattern that only
// it supported; pattern counts and maturity and criterion weights are
// rebuilt from the remaining events.
func (e *Engine) DeleteOutcome(ctx context.Context, in ForgetInput) (*DeleteOutcomeResult, error) {
	e.experience.SettleRecalls()
	return e.learning.DeleteOutcome(ctx, in)
}

// DeleteTurn forgets a captured turn: the turn, its memory in full text
// and vectors, the signals quoting it, and its place in stored recalls.
func (e *Engine) DeleteTurn(ctx context.Context, in ForgetInput) (*ForgetResult, error) {
	return e.experience.DeleteTurn(ctx, in)
}

// ForgetMemory takes a captured turn out of recall and keeps the turn.
func (e *Engine) ForgetMemory(ctx context.Context, in ForgetInput) (*ForgetResult, error) {
	return e.experience.ForgetMemory(ctx, in)
}

// DeleteHeuristic forgets a heuristic with its evidence, support,
// verdicts, index entries, place in recalls and adoption by skills.
func (e *Engine) DeleteHeuristic(ctx context.Context, in ForgetInput) (*ForgetResult, error) {
	return e.experience.DeleteHeuristic(ctx, in)
}

// DeleteSkill forgets a skill (id or name) with its versions, index
// entries, place in recalls and SKILL.md file.
func (e *Engine) DeleteSkill(ctx context.Context, in ForgetInput) (*ForgetResult, error) {
	return e.experience.DeleteSkill(ctx, in)
}

// EditHeuristic rewrites a heuristic's trigger, rule or why; its recall
// index follows the new text.
func (e *Engine) EditHeuristic(ctx context.Context, in HeuristicEditInput) (*HeuristicActionResult, error) {
	return e.experience.EditHeuristic(ctx, in)
}

// Learned reports what a project learned in a period: patterns newly
// proven or deprecated and anti-patterns created, each with the
// observations behind it; heuristics created, promoted and gone stale;
// skills activated; and the success trend with its 95 % Wilson interval
// against the period before.
func (e *Engine) Learned(ctx context.Context, q LearnedQuery) (*Learned, error) {
	return e.digest.Learned(ctx, q)
}

// ProjectSummaries lists every project holding data with its last
// activity (and its record counts when q.Counts).
func (e *Engine) ProjectSummaries(ctx context.Context, q ProjectQuery) ([]ProjectSummary, error) {
	e.experience.SettleRecalls()
	return e.digest.ProjectSummaries(ctx, q)
}

// ReembedWith is Reembed with options: the project (empty: every
// project) and a progress callback.
func (e *Engine) ReembedWith(ctx context.Context, opts ReembedOptions) (*ReembedResult, error) {
	return e.experience.ReembedWith(ctx, opts)
}

// RebuildWith is Rebuild with options: the project and a progress
// callback.
func (e *Engine) RebuildWith(ctx context.Context, opts RebuildOptions) (*RebuildResult, error) {
	return e.learning.RebuildWith(ctx, opts)
}
