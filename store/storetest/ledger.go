package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func testLedger(t *testing.T, setup setupFunc) {
	t.Run("MarkEventWindow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mark := func(project, key string, when time.Time) bool {
			return write(b, func(tx store.Tx) (bool, error) { return tx.MarkEvent(b.ctx, project, key, when, 10*time.Second) })
		}
		t0 := at(100)
		if !mark("p", "ev-1/task", t0) {
			t.Fatal("the first mark of a key must be fresh")
		}
		if mark("p", "ev-1/task", t0) {
			t.Error("the same key at the same time must be a duplicate")
		}
		if mark("p", "ev-1/task", t0.Add(9999*time.Millisecond)) {
			t.Error("the same key 9.999 s later (inside the window) must be a duplicate")
		}
		if !mark("p", "ev-1/task", t0.Add(10*time.Second)) {
			t.Error("the same key 10 s later (at the window's end) must be fresh")
		}
		if mark("p", "ev-1/task", t0.Add(15*time.Second)) {
			t.Error("after a fresh mark the window restarts from its time")
		}
		if !mark("q", "ev-1/task", t0) || !mark("p", "ev-1/explore", t0) {
			t.Error("another project or another key is a new event")
		}
		n := write(b, func(tx store.Tx) (int64, error) { return tx.PruneEvents(b.ctx, t0.Add(time.Second)) })
		if n != 2 {
			t.Errorf("PruneEvents removed %d keys, want the 2 marked at t0", n)
		}
		if !mark("q", "ev-1/task", t0) {
			t.Error("a pruned key is forgotten")
		}
	})

	t.Run("MarkEventSerialises", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		fresh := make([]bool, workers)
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				ok, err := tx.MarkEvent(b.ctx, "p", "same", at(5), time.Minute)
				fresh[i] = ok
				return err
			})
		})
		requireNoErrors(t, "MarkEvent", errs)
		n := 0
		for _, ok := range fresh {
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d of %d concurrent marks of one key were fresh, want exactly 1", n, workers)
		}
	})

	t.Run("LockKeySerialises", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		now := at(5)
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				if err := tx.LockKey(b.ctx, "p", "outcome/task-1"); err != nil {
					return err
				}
				// an unlocked read-modify-write, made safe by the key
				c, err := tx.GetCriterion(b.ctx, "p", "type_safe")
				if errors.Is(err, store.ErrNotFound) {
					c, err = learning.Criterion{Project: "p", Name: "type_safe", CreatedAt: now, UpdatedAt: now}, nil
				}
				if err != nil {
					return err
				}
				c.NeutralCount++
				return tx.PutCriterion(b.ctx, c)
			})
		})
		requireNoErrors(t, "LockKey", errs)
		c, err := get(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "type_safe") })
		if err != nil || c.NeutralCount != workers {
			t.Errorf("count %d (%v) after %d transactions serialised by one key, want %d", c.NeutralCount, err, workers, workers)
		}
	})

	t.Run("DeleteOutcomeAndFeedback", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		o := fullOutcome("p", "o-1")
		mf := learning.MaturityFeedback{ID: "mf-1/pattern-1", Project: "p", PatternID: "pattern-1", Success: true,
			Type: learning.Helpful, Weight: 1, TaskID: o.TaskID, Timestamp: at(3)}
		b.update(func(tx store.Tx) error {
			if _, err := tx.InsertOutcome(b.ctx, o); err != nil {
				return err
			}
			_, err := tx.InsertMaturityFeedback(b.ctx, mf)
			return err
		})
		b.update(func(tx store.Tx) error {
			if err := tx.DeleteOutcome(b.ctx, "p", "o-1"); err != nil {
				return err
			}
			return tx.DeleteMaturityFeedback(b.ctx, "p", mf.ID)
		})
		_, err := get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		requireNotFound(t, "GetOutcome after DeleteOutcome", err)
		if fb := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) { return tx.FeedbackByTask(b.ctx, "p", o.TaskID) }); len(fb) != 0 {
			t.Errorf("the deleted outcome's criterion feedback remains: %v", fb)
		}
		if mfs := read(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
			return tx.MaturityFeedback(b.ctx, "p", "pattern-1")
		}); len(mfs) != 0 {
			t.Errorf("the deleted maturity feedback remains: %v", mfs)
		}
		err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.DeleteOutcome(b.ctx, "p", "o-1") })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteOutcome of a missing outcome: %v, want ErrNotFound", err)
		}
		err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.DeleteMaturityFeedback(b.ctx, "p", mf.ID) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteMaturityFeedback of a missing row: %v, want ErrNotFound", err)
		}
	})
}
