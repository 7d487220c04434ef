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
	"github.com/kaizenhq/kaizen/learning"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
)

func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// BenchmarkPlanGuidance: guidance over a populated SQLite store, under
// each ranking policy (seed is the baseline of the same run). Sizes come
// from KAIZEN_BENCH_PATTERNS and KAIZEN_BENCH_EVENTS (defaults are small so
// `go test -bench .` stays quick; docs/BENCHMARKS.md uses 10,000 and 100,000).
func BenchmarkPlanGuidance(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, home := filepath.Join(b.TempDir(), "k.db"), b.TempDir()
	open := func(ranking string) *kaizen.Engine {
		cfg := kaizen.DefaultConfig()
		cfg.DB, cfg.Home, cfg.Project = db, home, "bench"
		cfg.Now = func() time.Time { return now }
		cfg.Learning.Ranking = ranking
		e, err := kaizen.Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	e := open(learning.RankingSeed)
	spec := bench.PopulateSpec{Project: "bench", Patterns: env("KAIZEN_BENCH_PATTERNS", 1000), Events: env("KAIZEN_BENCH_EVENTS", 20_000), Now: now, Seed: 1}
	if err := bench.Populate(ctx, e.Store(), e.Config().Learning, spec, nil); err != nil {
		b.Fatal(err)
	}
	e.Close()
	for _, ranking := range learning.Rankings {
		b.Run(ranking, func(b *testing.B) {
			e := open(ranking)
			defer e.Close()
			in := kaizen.PlanInput{Task: "fix a flaky test in the payments service", Tags: []string{"fix"}}
			if _, err := e.PlanGuidance(ctx, in); err != nil { // loads the caches
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := e.PlanGuidance(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
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
