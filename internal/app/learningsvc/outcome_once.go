package learningsvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// outcomeFeedbackID is the id of the maturity feedback an outcome gives a
// pattern: derived, so that replacing the outcome finds and removes it.
func outcomeFeedbackID(outcomeID, patternID string) string {
	return "mf-" + strings.TrimPrefix(outcomeID, "out-") + "/" + patternID
}

// taskOutcome returns the newest outcome of a task, nil when it has none.
func taskOutcome(ctx context.Context, tx store.Tx, project, taskID string) (*learning.Outcome, error) {
	list, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{TaskID: taskID, Limit: 1})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// differs names the first field in which an explicit outcome for a task
// that already has one disagrees with it ("" when it repeats it). Only
// what the caller gave is compared: values taken from the tracked task may
// have moved on since.
func (s *Service) differs(ctx context.Context, tx store.Tx, prev, o learning.Outcome, in OutcomeInput) string {
	switch {
	case prev.Success != o.Success:
		return "success"
	case in.DurationMs != nil && prev.DurationMs != o.DurationMs:
		return "duration_ms"
	case in.ErrorCount != nil && prev.ErrorCount != o.ErrorCount:
		return "error_count"
	case in.RetryCount != nil && prev.RetryCount != o.RetryCount:
		return "retry_count"
	case prev.Strategy != o.Strategy:
		return "strategy"
	case in.FailureMode != "" && prev.FailureMode != o.FailureMode:
		return "failure_mode"
	case prev.FailureDetails != o.FailureDetails:
		return "failure_details"
	case len(in.FilesTouched) > 0 && !slices.Equal(uniqueSorted(prev.FilesTouched), uniqueSorted(o.FilesTouched)):
		return "files_touched"
	case len(in.Criteria) > 0 && !slices.Equal(uniqueSorted(prev.Criteria), o.Criteria):
		return "criteria"
	}
	for _, ref := range in.Patterns {
		if !s.refersToAny(ctx, tx, prev.Project, ref, prev.Patterns) {
			return "patterns"
		}
	}
	return ""
}

// refersToAny reports whether a pattern reference (id or content) names
// one of the given pattern ids, without creating anything.
func (s *Service) refersToAny(ctx context.Context, tx store.Tx, project, ref string, ids []string) bool {
	if slices.Contains(ids, ref) {
		return true
	}
	p, ok, err := FindPattern(ctx, tx, project, ref)
	if err == nil && ok && slices.Contains(ids, p.ID) {
		return true
	}
	if st, found := learning.StrategyByLabel(ref); found {
		p, ok, err := findStrategy(ctx, tx, project, st)
		return err == nil && ok && slices.Contains(ids, p.ID)
	}
	return false
}

// outcomeRemoval is what removing an outcome undid.
type outcomeRemoval struct {
	Observations        int
	PatternsRemoved     []string
	AntiPatternsRemoved []string
	Kept                []string // the patterns it had fed that remain, recomputed
}

// removeOutcome deletes an outcome (an inferred one being replaced, or one
// a user forgets) with the maturity feedback it gave its patterns, and
// recomputes what it contributed to, so that they equal what they would be
// had it never been recorded: its patterns' counts, maturity and
// inversion (an anti-pattern that only held because of it goes, and so
// does a pattern only it had used), its criteria, and the task-context
// index of plan guidance.
func (s *Service) removeOutcome(ctx context.Context, tx store.Tx, o learning.Outcome, now time.Time) (outcomeRemoval, error) {
	r := outcomeRemoval{PatternsRemoved: []string{}, AntiPatternsRemoved: []string{}}
	for _, pid := range o.Patterns {
		n, err := deleteOutcomeObservation(ctx, tx, o, pid)
		if err != nil {
			return r, err
		}
		r.Observations += n
	}
	if err := tx.DeleteOutcome(ctx, o.Project, o.ID); err != nil {
		return r, err
	}
	for _, pid := range o.Patterns {
		gone, anti, err := s.settlePattern(ctx, tx, o.Project, pid)
		if err != nil {
			return r, err
		}
		if anti != "" {
			r.AntiPatternsRemoved = append(r.AntiPatternsRemoved, anti)
		}
		if gone {
			r.PatternsRemoved = append(r.PatternsRemoved, pid)
			continue
		}
		if err := s.recomputePattern(ctx, tx, o.Project, pid, now); err != nil {
			return r, err
		}
		r.Kept = append(r.Kept, pid)
	}
	for _, c := range o.Criteria {
		if err := s.recomputeCriterion(ctx, tx, o.Project, c, now); err != nil {
			return r, err
		}
	}
	s.contexts.forget(o.Project)
	return r, nil
}

// recomputePattern rebuilds one pattern's counts and maturity from its
// stored feedback, as RebuildTx does for a whole project.
func (s *Service) recomputePattern(ctx context.Context, tx store.Tx, project, id string, now time.Time) error {
	p, err := tx.LockPattern(ctx, project, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	m, err := tx.GetMaturity(ctx, project, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		m = learning.Maturity{Project: project, PatternID: id, Generation: p.Generation}
	case err != nil:
		return err
	}
	p.SuccessCount, p.FailureCount, p.ExampleTasks = 0, 0, []string{}
	m.Helpful, m.Harmful = learning.DecayedSum{}, learning.DecayedSum{}
	m.HelpfulCount, m.HarmfulCount, m.NeutralCount = 0, 0, 0
	m.LastValidated = time.Time{}
	fbs, err := tx.MaturityFeedback(ctx, project, id)
	if err != nil {
		return err
	}
	for _, f := range fbs {
		p.Observe(f, s.lc.MaxExampleTasks)
		m.Apply(f, s.lc.Maturity.HalfLifeDays)
	}
	if p.Kind != learning.KindAntiPattern && (p.AntiPatternID != "" || s.lc.ShouldInvert(p)) {
		if p, _, _, err = s.invert(ctx, tx, p, now); err != nil {
			return err
		}
	}
	p.UpdatedAt, m.UpdatedAt = now, now
	if err := tx.UpdatePattern(ctx, p); err != nil {
		return err
	}
	return tx.PutMaturity(ctx, m)
}

// recomputeCriterion rebuilds one criterion's sums from the feedback of
// the stored outcomes.
func (s *Service) recomputeCriterion(ctx context.Context, tx store.Tx, project, name string, now time.Time) error {
	old, err := tx.LockCriterion(ctx, project, name, now)
	if err != nil {
		return err
	}
	events, err := tx.FeedbackByCriterion(ctx, project, name)
	if err != nil {
		return err
	}
	c := learning.Criterion{Project: project, Name: name, CreatedAt: old.CreatedAt}
	for _, f := range events {
		c.Apply(f, s.lc.EventWeight(f), s.lc.HalfLifeDays)
	}
	c.UpdatedAt = now
	if err := tx.PutCriterion(ctx, c); err != nil {
		return fmt.Errorf("recompute criterion %s: %w", name, err)
	}
	return nil
}

// outcomeAppender is a store transaction that can write a new outcome row
// later in the transaction (sqlstore: at Flush, under PostgreSQL's group
// commit), saving a round trip per outcome.
type outcomeAppender interface {
	AppendOutcome(ctx context.Context, o learning.Outcome) error
}

// appendOutcome stores a new outcome (its id is fresh, so whether it was
// inserted is not asked).
func appendOutcome(ctx context.Context, tx store.Tx, o learning.Outcome) error {
	if a, ok := tx.(outcomeAppender); ok {
		return a.AppendOutcome(ctx, o)
	}
	_, err := tx.InsertOutcome(ctx, o)
	return err
}
