package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
	"github.com/kaizenhq/kaizen/store/storetest"
)

func open(t testing.TB) store.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "kaizen.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func BenchmarkConformance(b *testing.B) {
	storetest.RunBenchmarks(b, func(b *testing.B) store.Store { return open(b) })
}
