package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

var errBoom = errors.New("storetest: fn failed on purpose")

// codeError is an error type fn returns, to check Update returns it as is.
type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("code %d", e.code) }

// step is one write of a transaction under test.
type step struct {
	name string
	do   func(ctx context.Context, tx store.Tx) error
}

// inserted turns an Insert* result into an error when nothing was written.
func inserted(ok bool, err error) error {
	if err == nil && !ok {
		return errNotInserted
	}
	return err
}

func run(ctx context.Context, tx store.Tx, steps []step) error {
	for _, s := range steps {
		if err := s.do(ctx, tx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return nil
}

// writesOfEveryKind inserts, updates and deletes records of every kind in
// projects p (populated) and q (empty), and sets settings.
func writesOfEveryKind() []step {
	changed := fullPattern("p", "pat-1", "split by package")
	changed.SuccessCount, changed.Tags = 99, []string{"changed"}
	criterion := fullCriterion("p", "c-1")
	criterion.HarmfulCount = 99
	maturity := fullMaturity("p", "pat-1")
	maturity.Manual, maturity.HelpfulCount = learning.Proven, 99
	return []step{
		{"insert outcome", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertOutcome(ctx, fullOutcome("p", "o-2")))
		}},
		{"insert outcome in a new project", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertOutcome(ctx, fullOutcome("q", "o-1")))
		}},
		{"insert maturity feedback", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertMaturityFeedback(ctx, fullMaturityFeedback("p", "mf-2")))
		}},
		{"replace criterion", func(ctx context.Context, tx store.Tx) error { return tx.PutCriterion(ctx, criterion) }},
		{"create criterion by locking", func(ctx context.Context, tx store.Tx) error {
			_, err := tx.LockCriterion(ctx, "p", "c-new", at(1))
			return err
		}},
		{"put criterion in a new project", func(ctx context.Context, tx store.Tx) error {
			return tx.PutCriterion(ctx, fullCriterion("q2", "c-1"))
		}},
		{"insert pattern", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertPattern(ctx, fullPattern("p", "pat-3", "split by layer")))
		}},
		{"lock pattern", func(ctx context.Context, tx store.Tx) error {
			_, err := tx.LockPattern(ctx, "p", "pat-1")
			return err
		}},
		{"update pattern and its content key", func(ctx context.Context, tx store.Tx) error {
			return tx.UpdatePattern(ctx, changed)
		}},
		{"delete pattern", func(ctx context.Context, tx store.Tx) error { return tx.DeletePattern(ctx, "p", "pat-2") }},
		{"insert pattern with the deleted one's content", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertPattern(ctx, fullPattern("p", "pat-4", "split by module")))
		}},
		{"insert pattern with the updated one's old content", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertPattern(ctx, fullPattern("p", "pat-5", "split by file")))
		}},
		{"replace maturity", func(ctx context.Context, tx store.Tx) error { return tx.PutMaturity(ctx, maturity) }},
		{"delete maturity", func(ctx context.Context, tx store.Tx) error { return tx.DeleteMaturity(ctx, "p", "pat-2") }},
		{"put maturity", func(ctx context.Context, tx store.Tx) error { return tx.PutMaturity(ctx, fullMaturity("p", "pat-3")) }},
		{"resolve error", func(ctx context.Context, tx store.Tx) error {
			_, err := tx.ResolveError(ctx, "p", "e-1", at(5))
			return err
		}},
		{"insert error", func(ctx context.Context, tx store.Tx) error {
			return inserted(tx.InsertError(ctx, fullError("p", "e-2")))
		}},
		{"overwrite setting", func(ctx context.Context, tx store.Tx) error { return tx.SetMeta(ctx, "k", "v2") }},
		{"add setting", func(ctx context.Context, tx store.Tx) error { return tx.SetMeta(ctx, "k2", "v") }},
	}
}

// seedForWrites is the state writesOfEveryKind changes.
func seedForWrites(b *bundle) {
	b.t.Helper()
	open := fullError("p", "e-1")
	open.Resolved, open.ResolvedAt = false, nil
	b.seed(fullOutcome("p", "o-1"), fullCriterion("p", "c-1"),
		fullPattern("p", "pat-1", "split by file"), fullPattern("p", "pat-2", "split by module"),
		fullMaturity("p", "pat-1"), fullMaturity("p", "pat-2"),
		fullMaturityFeedback("p", "mf-1"), open)
	b.update(func(tx store.Tx) error { return tx.SetMeta(b.ctx, "k", "v1") })
}

var (
	dumpProjects = []string{"p", "q", "q2"}
	dumpMeta     = []string{"k", "k2"}
)

func testTx(t *testing.T, setup setupFunc) {
	t.Run("RollbackOnError", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		seedForWrites(b)
		before := dump(b, dumpProjects, dumpMeta...)

		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			if err := run(b.ctx, tx, writesOfEveryKind()); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Update returned %v, want fn's error %v", err, errBoom)
		}
		requireEqual(t, "state after a failed Update", before, dump(b, dumpProjects, dumpMeta...))

		// The content keys are back where they were: pat-1 holds "split by
		// file" again, "split by package" is free.
		ok := write(b, func(tx store.Tx) (bool, error) {
			return tx.InsertPattern(b.ctx, fullPattern("p", "pat-9", "split by file"))
		})
		if ok {
			t.Error("after a rollback, InsertPattern of pat-1's restored content key reported true, want false")
		}
		err = b.s.Update(b.ctx, func(tx store.Tx) error { // rolled back, to leave the key free
			ok, err = tx.InsertPattern(b.ctx, fullPattern("p", "pat-10", "split by package"))
			if err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) || !ok {
			t.Errorf("after a rollback, InsertPattern of a content key only the rolled back Update used: %v, %v", ok, err)
		}
		// And the same writes commit when fn succeeds.
		b.update(func(tx store.Tx) error { return run(b.ctx, tx, writesOfEveryKind()) })
		after := dump(b, dumpProjects, dumpMeta...)
		if after.Meta["k"] != "v2" || len(after.Data["p"].Outcomes) != 2 || len(after.Data["q"].Outcomes) != 1 {
			t.Errorf("a committed Update did not keep its writes: %+v", after.Meta)
		}
	})

	t.Run("ErrorReturnedUnchanged", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		want := &codeError{code: 42}
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			if _, err := tx.InsertOutcome(b.ctx, fullOutcome("p", "o-1")); err != nil {
				return err
			}
			return fmt.Errorf("wrapped: %w", want)
		})
		var got *codeError
		if !errors.As(err, &got) || got != want {
			t.Errorf("Update returned %v, want fn's error", err)
		}
		_, err = get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		requireNotFound(t, "GetOutcome of an outcome inserted by a failed Update", err)
	})

	t.Run("ReadYourWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		seedForWrites(b)
		var inside, committed state
		b.update(func(tx store.Tx) error {
			if err := run(b.ctx, tx, writesOfEveryKind()); err != nil {
				return err
			}
			var err error
			inside, err = dumpTx(b, tx, dumpProjects, dumpMeta)
			return err
		})
		committed = dump(b, dumpProjects, dumpMeta...)
		requireEqual(t, "state read inside the Update that wrote it vs. after commit", committed, inside)
		if inside.Meta["k2"] != "v" || inside.Data["p"].PatternCount != 4 || len(inside.Data["q2"].Criteria) != 1 {
			t.Errorf("reads inside an Update do not see its writes: %+v", inside)
		}
		for _, id := range keys(inside.Data["p"].Patterns, patternID) {
			if id == "pat-2" {
				t.Error("a pattern deleted in the Update is still listed inside it")
			}
		}
	})

	t.Run("TxAfterEnd", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var fromUpdate, fromView store.Tx
		b.update(func(tx store.Tx) error { fromUpdate = tx; return nil })
		b.view(func(tx store.Tx) error { fromView = tx; return nil })
		if _, err := fromUpdate.InsertOutcome(b.ctx, fullOutcome("p", "o-1")); err == nil {
			t.Error("InsertOutcome on the Tx of a finished Update succeeded, want an error")
		}
		if _, err := fromView.GetOutcome(b.ctx, "p", "o-1"); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetOutcome on the Tx of a finished View returned %v, want a transaction error", err)
		}
		_, err := get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		requireNotFound(t, "GetOutcome of an outcome written through a finished Tx", err)
	})

	t.Run("CancelledContext", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ctx, cancel := context.WithCancel(b.ctx)
		cancel()
		err := b.s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.InsertOutcome(ctx, fullOutcome("p", "o-1"))
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Update with a cancelled context returned %v, want context.Canceled", err)
		}
		_, err = get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		requireNotFound(t, "GetOutcome after an Update with a cancelled context", err)
		err = b.s.View(ctx, func(tx store.Tx) error {
			_, err := tx.GetOutcome(ctx, "p", "o-1")
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("View with a cancelled context returned %v, want context.Canceled", err)
		}
	})
}
