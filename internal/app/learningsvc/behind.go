package learningsvc

import (
	"context"
	"errors"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Aggregates applied behind the outcome's commit (store/behind.go, SQLite's
// [store] aggregates = "idle", the default, or "behind"). A recording
// journals its outcome when replaying it reproduces every aggregate write
// it made: its criterion events and its patterns' observations (maturity
// feedback, counts, maturity), at the instant it evaluated them. A recording that replaced
// an inferred outcome, inverted a pattern or touched one with an
// anti-pattern (whose ids or removals a replay would not reproduce) is
// not journaled: its group writes everything in its commit.

// deferAggregates journals a recorded outcome when the transaction can
// apply its aggregates behind its commit.
func deferAggregates(tx store.Tx, res *OutcomeResult, now time.Time) {
	d, ok := tx.(store.AggregateDeferrer)
	if !ok || res.Replaced != "" || len(res.Inversions) > 0 {
		return
	}
	for _, u := range res.Patterns {
		if u.AntiPattern != nil || u.Recovered != nil {
			return
		}
	}
	d.DeferAggregates(res.Outcome.Project, res.Outcome.ID, now)
}

// ReplayAggregates implements store.AggregateReplay: the aggregate writes
// of each journaled outcome, in order, as recordTx made them.
func (s *Service) ReplayAggregates(ctx context.Context, tx store.Tx, entries []store.AggregateEntry) error {
	for _, e := range entries {
		o, err := tx.GetOutcome(ctx, e.Project, e.OutcomeID)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed since (its removal recomputed what it fed)
		}
		if err != nil {
			return err
		}
		if err := s.applyOutcome(ctx, tx, o, e.At); err != nil {
			return err
		}
	}
	return nil
}

// applyOutcome makes an outcome's aggregate writes: recordTx's, through
// the same two steps, without the result.
func (s *Service) applyOutcome(ctx context.Context, tx store.Tx, o learning.Outcome, now time.Time) error {
	for _, fb := range learning.FeedbackEvents(o) {
		if _, err := s.addCriterionEvent(ctx, tx, fb, now); err != nil {
			return err
		}
	}
	for _, pid := range o.Patterns {
		if _, _, err := s.observeOutcome(ctx, tx, o, pid, now); err != nil {
			return err
		}
	}
	return nil
}
