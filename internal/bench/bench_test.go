package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/bench"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
)

func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// BenchmarkPlanGuidance: guidance over a populated SQLite store. Sizes come
// from KAIZEN_BENCH_PATTERNS and KAIZEN_BENCH_EVENTS (defaults are small so
// `go test -bench .` stays quick; docs/BENCHMARKS.md uses 10,000 and 1,000,000).
func BenchmarkPlanGuidance(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Home, cfg.Project = filepath.Join(b.TempDir(), "k.db"), b.TempDir(), "bench"
	cfg.Now = func() time.Time { return now }
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	spec := bench.PopulateSpec{Project: "bench", Patterns: env("KAIZEN_BENCH_PATTERNS", 1000), Events: env("KAIZEN_BENCH_EVENTS", 20_000), Now: now, Seed: 1}
	if err := bench.Populate(ctx, e.Store(), cfg.Learning, spec, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := e.PlanGuidance(ctx, kaizen.PlanInput{Task: "split by feature"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordScenario runs the `kaizen bench` record scenario for a
// fixed time (KAIZEN_BENCH_SECONDS, default 3) once, for profiling.
func BenchmarkRecordScenario(b *testing.B) {
	ctx := context.Background()
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Home = filepath.Join(b.TempDir(), "k.db"), b.TempDir()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for range b.N {
		res, err := bench.Record(ctx, e, "bench", 16, time.Duration(env("KAIZEN_BENCH_SECONDS", 3))*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.PerSecond, "outcomes/s")
	}
}
