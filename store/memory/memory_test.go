package memory_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/memory"
	"github.com/kaizenhq/kaizen/store/storetest"
)

func open(tb testing.TB) store.Store {
	s := memory.New()
	tb.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.RunBenchmarks(b, func(b *testing.B) store.Store { return open(b) })
}

func TestUpdatePanicRollsBack(t *testing.T) {
	s := memory.New()
	ctx := t.Context()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic in fn did not reach Update's caller")
			}
		}()
		_ = s.Update(ctx, func(tx store.Tx) error {
			if _, err := tx.InsertOutcome(ctx, learning.Outcome{ID: "o-1", Project: "p"}); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	// The write lock was released and the insert undone.
	err := s.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetOutcome(ctx, "p", "o-1")
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetOutcome after a panicking Update: %v, want store.ErrNotFound", err)
	}
}

func TestViewIsReadOnly(t *testing.T) {
	s := memory.New()
	ctx := t.Context()
	writes := map[string]func(tx store.Tx) error{
		"InsertOutcome": func(tx store.Tx) error {
			_, err := tx.InsertOutcome(ctx, learning.Outcome{ID: "o-1", Project: "p"})
			return err
		},
		"LockCriterion": func(tx store.Tx) error {
			_, err := tx.LockCriterion(ctx, "p", "c", time.Now())
			return err
		},
		"LockPattern": func(tx store.Tx) error {
			_, err := tx.LockPattern(ctx, "p", "pat-1")
			return err
		},
		"SetMeta": func(tx store.Tx) error { return tx.SetMeta(ctx, "k", "v") },
	}
	for name, write := range writes {
		if err := s.View(ctx, write); !errors.Is(err, memory.ErrReadOnly) {
			t.Errorf("%s in View: %v, want memory.ErrReadOnly", name, err)
		}
	}
	err := s.View(ctx, func(tx store.Tx) error {
		projects, err := tx.Projects(ctx)
		if err == nil && len(projects) != 0 {
			err = fmt.Errorf("projects %v after refused writes", projects)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

func TestTxDone(t *testing.T) {
	s := memory.New()
	ctx := t.Context()
	var leaked store.Tx
	if err := s.Update(ctx, func(tx store.Tx) error { leaked = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := leaked.InsertOutcome(ctx, learning.Outcome{ID: "o-1", Project: "p"}); !errors.Is(err, memory.ErrTxDone) {
		t.Errorf("InsertOutcome on a finished Tx: %v, want memory.ErrTxDone", err)
	}
}
