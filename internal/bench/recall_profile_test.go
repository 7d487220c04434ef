package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/store/postgres"
)

// TestRecallProfile is a manual tool, skipped unless
// KAIZEN_RECALL_PROFILE_DIR is set: it populates a recall store there once
// (KAIZEN_RECALL_PROFILE_N heuristics and as many memories, default
// 100,000), then on every run opens it, times a first recall, and profiles
// KAIZEN_RECALL_PROFILE_RECALLS recalls (default 300) into
// <dir>/recall.pprof, so that profiling recall does not repay the
// population each time.
func TestRecallProfile(t *testing.T) {
	dir := os.Getenv("KAIZEN_RECALL_PROFILE_DIR")
	if dir == "" {
		t.Skip("KAIZEN_RECALL_PROFILE_DIR not set")
	}
	n := envInt("KAIZEN_RECALL_PROFILE_N", 100_000)
	recalls := envInt("KAIZEN_RECALL_PROFILE_RECALLS", 300)
	ctx := context.Background()
	cfg := kaizen.DefaultConfig()
	cfg.Home = dir
	cfg.DB = os.Getenv("KAIZEN_RECALL_PROFILE_DB")
	if cfg.DB == "" {
		cfg.DB = filepath.Join(dir, "bench.db")
	}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return now }
	marker := filepath.Join(dir, "populated")
	const project = "bench-recall"
	if _, err := os.Stat(marker); err != nil {
		e, err := kaizen.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if err := PopulateExperience(ctx, e, ExperienceSpec{Project: project, Heuristics: n, Memories: n, Now: now, Seed: 1}, nil); err != nil {
			t.Fatal(err)
		}
		t.Logf("populated in %s", time.Since(t0))
		if _, err := e.Recall(ctx, kaizen.RecallInput{Project: project, Query: "edit generated files", DryRun: true}); err != nil {
			t.Fatal(err)
		}
		e.Close()
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The open and the first recall are profiled into <dir>/first.pprof.
	ff, err := os.Create(filepath.Join(dir, "first.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(ff); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	opened := time.Since(t0)
	t0 = time.Now()
	if _, err := e.Recall(ctx, kaizen.RecallInput{Project: project, Query: "edit generated files", DryRun: true}); err != nil {
		t.Fatal(err)
	}
	t.Logf("open %s, first recall after open: %s", opened, time.Since(t0))
	pprof.StopCPUProfile()
	ff.Close()
	f, err := os.Create(filepath.Join(dir, "recall.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	cpu0 := cpuTime()
	res, err := Recall(ctx, e, project, recalls)
	e.SettleRecalls()
	cpuWarm := (cpuTime() - cpu0) / time.Duration(recalls+1)
	pprof.StopCPUProfile()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recall: cold %s, warm %s, %.3f injected per recall", res.Cold, fmt.Sprintf("p50 %s p90 %s p99 %s", res.Warm.P50, res.Warm.P90, res.Warm.P99), res.Injected)
	reads, _ := e.Store().(interface{ ReadStats() postgres.ReadStats })
	var reads0 postgres.ReadStats
	if reads != nil {
		reads0 = reads.ReadStats()
	}
	// The same queries as dry runs: no recall event written.
	cpu0 = cpuTime()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var ds []time.Duration
	rng := rand.New(rand.NewPCG(5, 6)) // bench.Recall's queries
	for i := range recalls {
		subject, action, _ := benchSentence(rng, i)
		t0 := time.Now()
		if _, err := e.Recall(ctx, kaizen.RecallInput{Project: project, Query: fmt.Sprintf("I need to %s %s without breaking the build", action, subject), DryRun: true}); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	dry := Summarise(ds)
	cpuDry := (cpuTime() - cpu0) / time.Duration(recalls)
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	t.Logf("dry runs: %.0f KiB allocated per recall, %d GC cycles in %d recalls", float64(ms1.TotalAlloc-ms0.TotalAlloc)/1024/float64(recalls),
		ms1.NumGC-ms0.NumGC, recalls)
	t.Logf("dry-run recall: p50 %s p90 %s p99 %s", dry.P50, dry.P90, dry.P99)
	if reads != nil {
		r := reads.ReadStats()
		t.Logf("PostgreSQL read transactions per dry run %.2f, round trips %.2f", float64(r.Transactions-reads0.Transactions)/float64(recalls),
			float64(r.RoundTrips-reads0.RoundTrips)/float64(recalls))
	}
	t.Logf("CPU per recall (process user+system): %s stored, %s dry run", cpuWarm, cpuDry)
	rss, peak, _ := Memory()
	t.Logf("RSS %.0f MiB (peak %.0f)", rss, peak)
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
