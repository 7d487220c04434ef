package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The writer's first run of a group flushes in pipelines
// (sqlstore/flush_pipeline.go), which write pending criterion events to
// shards but no whole criterion. A group that staged a whole criterion
// (PutCriterion, as recomputing a criterion after an outcome is replaced
// does) must still write it, with the pending events of other criteria
// of the same transaction: neither may be lost, whichever flush runs.
func TestWriterFlushesWholeCriterionWithEvents(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	event := func(id, criterion string) learning.FeedbackEvent {
		return learning.FeedbackEvent{ID: id, Project: "p", Criterion: criterion, Type: learning.Helpful,
			RawValue: 0.9, TaskID: "t-" + id, Timestamp: now}
	}
	// both criteria exist with their shards
	if err := s.Update(ctx, func(tx store.Tx) error {
		for _, c := range []string{"accuracy", "speed"} {
			if _, err := tx.AddCriterionEvent(ctx, event("seed-"+c, c), 1, 30, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	whole := learning.Criterion{Project: "p", Name: "speed", HelpfulCount: 7, HarmfulCount: 3, NeutralCount: 2,
		Helpful: learning.DecayedSum{Value: 5.5, Ref: now}, Harmful: learning.DecayedSum{Value: 1.25, Ref: now},
		LastValidated: now, CreatedAt: now, UpdatedAt: now}
	if err := s.Update(ctx, func(tx store.Tx) error {
		// a pending event (a shard delta at Flush) ...
		if _, err := tx.AddCriterionEvent(ctx, event("e1", "accuracy"), 1, 30, now); err != nil {
			return err
		}
		// ... and a whole criterion, locked and replaced
		if _, err := tx.LockCriterion(ctx, "p", "speed", now); err != nil {
			return err
		}
		return tx.PutCriterion(ctx, whole)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(tx store.Tx) error {
		got, err := tx.GetCriterion(ctx, "p", "speed")
		if err != nil {
			return err
		}
		if got.HelpfulCount != 7 || got.HarmfulCount != 3 || got.NeutralCount != 2 ||
			got.Helpful.Value != 5.5 || got.Harmful.Value != 1.25 {
			t.Errorf("speed after PutCriterion in the writer: %+v, want the staged criterion %+v", got, whole)
		}
		acc, err := tx.GetCriterion(ctx, "p", "accuracy")
		if err != nil {
			return err
		}
		if acc.HelpfulCount != 2 {
			t.Errorf("accuracy: %d helpful events, want 2 (the seed and the pending one)", acc.HelpfulCount)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
