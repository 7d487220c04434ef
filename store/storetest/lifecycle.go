package storetest

import (
	"errors"
	"testing"

	"github.com/kaizenhq/kaizen/store"
)

func testStore(t *testing.T, setup setupFunc) {
	t.Run("Backend", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if b.s.Backend() == "" {
			t.Error("Backend() is empty, want the implementation's name")
		}
	})

	t.Run("Close", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullOutcome("p", "o-1"))
		if err := b.s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		called := false
		fn := func(store.Tx) error { called = true; return nil }
		if err := b.s.Update(b.ctx, fn); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Update after Close returned %v, want store.ErrClosed", err)
		}
		if err := b.s.View(b.ctx, fn); !errors.Is(err, store.ErrClosed) {
			t.Errorf("View after Close returned %v, want store.ErrClosed", err)
		}
		if called {
			t.Error("Update or View after Close ran its function")
		}
	})

	t.Run("CloseTwice", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if err := b.s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		// "Further calls return ErrClosed": Close included, as os.File does.
		if err := b.s.Close(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("second Close returned %v, want store.ErrClosed", err)
		}
	})
}
