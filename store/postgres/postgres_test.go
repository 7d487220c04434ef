package postgres_test

import (
	"context"
	"testing"

	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/store/storetest"
)

func open(t testing.TB) store.Store {
	s, err := postgres.Open(context.Background(), pgtest.DSN(t))
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
