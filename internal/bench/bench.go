// Package bench holds kaizen's performance scenarios, shared by the Go
// benchmarks and the `kaizen bench` command: populating a store with a
// realistic learned state, and measuring outcome recording throughput and
// plan guidance latency with percentiles.
package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Latencies summarises a set of timings.
type Latencies struct {
	N    int           `json:"n"`
	P50  time.Duration `json:"p50"`
	P90  time.Duration `json:"p90"`
	P99  time.Duration `json:"p99"`
	Max  time.Duration `json:"max"`
	Mean time.Duration `json:"mean"`
}

// Summarise computes percentiles (nearest rank).
func Summarise(ds []time.Duration) Latencies {
	if len(ds) == 0 {
		return Latencies{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.5) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latencies{N: len(s), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: s[len(s)-1], Mean: sum / time.Duration(len(s))}
}

func (l Latencies) String() string {
	return fmt.Sprintf("n=%d p50=%s p90=%s p99=%s max=%s", l.N, round(l.P50), round(l.P90), round(l.P99), round(l.Max))
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// PopulateSpec describes a learned state to generate.
type PopulateSpec struct {
	Project  string
	Patterns int // decomposition patterns (with maturity records)
	// Events is the number of maturity feedback events (pattern uses) and
	// also of criterion feedback events (outcomes × criteria) generated,
	// over the last year.
	Events int
	Now    time.Time
	Seed   uint64
}

// Populate writes a consistent learned state directly through the store:
// patterns with their maturity feedback and aggregates, and criterion
// feedback with its aggregates, as recording outcomes would leave them. It
// is much faster than recording the outcomes one by one.
func Populate(ctx context.Context, st store.Store, cfg learning.Config, spec PopulateSpec, progress func(done, total int)) error {
	rng := rand.New(rand.NewPCG(spec.Seed, 7))
	const chunk = 20_000
	year := int64(365 * 24 * time.Hour)
	at := func() time.Time {
		return spec.Now.Add(-time.Duration(rng.Int64N(year))).Truncate(time.Microsecond)
	}
	// Patterns and their maturity, in chunks.
	perPattern := spec.Events / max(1, spec.Patterns)
	total := spec.Patterns + 2*spec.Events // patterns with their maturity events, then criterion events
	done := 0
	for start := 0; start < spec.Patterns; start += chunk / max(1, perPattern+1) {
		end := min(spec.Patterns, start+chunk/max(1, perPattern+1))
		err := st.Update(ctx, func(tx store.Tx) error {
			for i := start; i < end; i++ {
				p := learning.Pattern{ID: fmt.Sprintf("pattern-bench-%07d", i), Project: spec.Project,
					Content: fmt.Sprintf("Benchmark pattern %d: split the work by module %d", i, i%97),
					Kind:    learning.KindPattern, Tags: []string{}, ExampleTasks: []string{}, CreatedAt: spec.Now, UpdatedAt: spec.Now}
				m := learning.Maturity{Project: spec.Project, PatternID: p.ID, UpdatedAt: spec.Now}
				quality := rng.Float64()
				for j := range perPattern {
					success := rng.Float64() < quality
					typ := learning.Harmful
					switch {
					case success && rng.Float64() < 0.8:
						typ = learning.Helpful
					case success:
						typ = learning.Neutral
					}
					f := learning.MaturityFeedback{ID: fmt.Sprintf("mf-bench-%07d-%05d", i, j), Project: spec.Project,
						PatternID: p.ID, Success: success, Type: typ, Weight: 1, TaskID: fmt.Sprintf("bd-%d", rng.IntN(100_000)), Timestamp: at()}
					if _, err := tx.InsertMaturityFeedback(ctx, f); err != nil {
						return err
					}
					p.Observe(f, cfg.MaxExampleTasks)
					m.Apply(f, cfg.Maturity.HalfLifeDays)
				}
				if _, err := tx.InsertPattern(ctx, p); err != nil {
					return err
				}
				if err := tx.PutMaturity(ctx, m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("populate patterns: %w", err)
		}
		done += (end - start) * (1 + perPattern)
		if progress != nil {
			progress(done, total)
		}
	}
	// Criterion feedback: outcomes judged on the default criteria, one
	// feedback event per criterion (events / criteria outcomes).
	criteria := map[string]*learning.Criterion{}
	for _, name := range cfg.DefaultCriteria {
		criteria[name] = &learning.Criterion{Project: spec.Project, Name: name, CreatedAt: spec.Now, UpdatedAt: spec.Now}
	}
	outcomes := spec.Events / max(1, len(cfg.DefaultCriteria))
	for start := 0; start < outcomes; start += chunk {
		end := min(outcomes, start+chunk)
		err := st.Update(ctx, func(tx store.Tx) error {
			for i := start; i < end; i++ {
				dur, errs, retries := int64(rng.IntN(3_000_000)), rng.IntN(4), rng.IntN(3)
				fam := benchFamilies[rng.IntN(len(benchFamilies))]
				var used []string
				if spec.Patterns > 0 { // two patterns per outcome, as agents report them
					used = []string{fmt.Sprintf("pattern-bench-%07d", rng.IntN(spec.Patterns)),
						fmt.Sprintf("pattern-bench-%07d", rng.IntN(spec.Patterns))}
				}
				o := learning.Outcome{ID: fmt.Sprintf("out-bench-%08d", i), Project: spec.Project, TaskID: fmt.Sprintf("bd-%d", i),
					DurationMs: dur, ErrorCount: errs, RetryCount: retries, Success: rng.Float64() < 0.75,
					FilesTouched: []string{}, Timestamp: at(), Patterns: used, Criteria: cfg.DefaultCriteria,
					ErrorCountSource: "input", RecordedAt: spec.Now,
					Task: fmt.Sprintf("%s: %s %d", fam, fam, rng.IntN(500)), Tags: []string{strings.Fields(fam)[0]}}
				o.Score = cfg.ScoreOutcome(o.Signals())
				if _, err := tx.InsertOutcome(ctx, o); err != nil {
					return err
				}
				for _, e := range learning.FeedbackEvents(o) {
					criteria[e.Criterion].Apply(e, cfg.EventWeight(e), cfg.HalfLifeDays)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("populate outcomes: %w", err)
		}
		done += (end - start) * len(cfg.DefaultCriteria)
		if progress != nil {
			progress(done, total)
		}
	}
	return st.Update(ctx, func(tx store.Tx) error {
		for _, c := range criteria {
			if err := tx.PutCriterion(ctx, *c); err != nil {
				return err
			}
		}
		return nil
	})
}

// benchFamilies are the kinds of task of populated outcomes (their tags,
// and the first words of their descriptions).
var benchFamilies = []string{"migrate the orders schema", "fix a flaky test in the billing service",
	"add a settings page to the dashboard", "refactor the auth middleware", "speed up the search endpoint"}

// Guidance measures PlanGuidance latency over n sequential calls.
func Guidance(ctx context.Context, e *kaizen.Engine, project string, n int) (Latencies, error) {
	tasks := []string{"Add OAuth login; we will split by feature and handle shared types first",
		"Refactor the billing module, one file per subtask", "Fix flaky tests"}
	ds := make([]time.Duration, 0, n)
	for i := range n {
		t0 := time.Now()
		if _, err := e.PlanGuidance(ctx, kaizen.PlanInput{Project: project, Task: tasks[i%len(tasks)]}); err != nil {
			return Latencies{}, err
		}
		ds = append(ds, time.Since(t0))
	}
	return Summarise(ds), nil
}

// RecordResult is the outcome of a throughput run.
type RecordResult struct {
	Outcomes  int64     `json:"outcomes"`
	Seconds   float64   `json:"seconds"`
	PerSecond float64   `json:"per_second"`
	Latency   Latencies `json:"latency"`
	Callers   int       `json:"callers"`
	Errors    int64     `json:"errors"`
	PerCommit float64   `json:"outcomes_per_commit,omitempty"`
	// RoundTripsPerOutcome is the PostgreSQL writer's round trips per
	// request (its WriterStats), when the backend counts them.
	RoundTripsPerOutcome float64 `json:"round_trips_per_outcome,omitempty"`
	// GroupsBehind and Groups: SQLite's committed groups that left their
	// outcomes' aggregates staged ([store] aggregates = "behind" or
	// "idle"), of all; IdleFlushes the groups the writer ran on its own
	// to write staged aggregates when idle ("idle").
	GroupsBehind int64 `json:"groups_behind,omitempty"`
	Groups       int64 `json:"groups,omitempty"`
	IdleFlushes  int64 `json:"idle_flushes,omitempty"`
	// Durability says when an outcome is acknowledged; the caller sets it
	// from the backend (see `kaizen bench`).
	Durability string `json:"durability,omitempty"`
	// Jobs is whether the engine's background job runner ran during the
	// scenario, as it does in `kaizen serve` (the caller sets it).
	Jobs bool `json:"jobs"`
	// Samples are the latencies (for merging rounds).
	Samples []time.Duration `json:"-"`
}

// Record runs callers goroutines recording outcomes (4 criteria, 2 of 8
// patterns each) for the given duration and reports throughput and
// per-call latency.
func Record(ctx context.Context, e *kaizen.Engine, project string, callers int, d time.Duration) (RecordResult, error) {
	return RecordRound(ctx, e, project, callers, d, 0)
}

// MergeRecord adds the results of one more round.
func MergeRecord(a, b RecordResult) RecordResult {
	a.Outcomes += b.Outcomes
	a.Seconds += b.Seconds
	a.Errors += b.Errors
	a.Callers = b.Callers
	a.Samples = append(a.Samples, b.Samples...)
	a.Latency = Summarise(a.Samples)
	if a.Seconds > 0 {
		a.PerSecond = float64(a.Outcomes) / a.Seconds
	}
	return a
}

// RecordRound is Record with the task ids of round (rounds on one store
// record distinct tasks).
func RecordRound(ctx context.Context, e *kaizen.Engine, project string, callers int, d time.Duration, round int) (RecordResult, error) {
	patterns := []string{"Split by feature", "Respect dependency chain", "Handle shared types first",
		"Tests alongside implementation", "Split by component", "Separate API routes", "Split by layer", "Tests in separate subtask"}
	var (
		count, errs atomic.Int64
		mu          sync.Mutex
		all         []time.Duration
		wg          sync.WaitGroup
		firstErr    atomic.Value
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			var local []time.Duration
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				dur := int64(60_000 + rng.IntN(2_000_000))
				ec, rc, ok := rng.IntN(4), rng.IntN(3), rng.Float64() < 0.75
				in := kaizen.OutcomeInput{Project: project, TaskID: fmt.Sprintf("bd-%d-%d-%d", round, c, i), DurationMs: &dur,
					ErrorCount: &ec, RetryCount: &rc, Success: &ok,
					Patterns: []string{patterns[rng.IntN(len(patterns))], patterns[rng.IntN(len(patterns))]}}
				t0 := time.Now()
				if _, err := e.RecordOutcome(ctx, in); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				local = append(local, time.Since(t0))
				count.Add(1)
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	res := RecordResult{Outcomes: count.Load(), Seconds: secs, PerSecond: float64(count.Load()) / secs,
		Latency: Summarise(all), Callers: callers, Errors: errs.Load(), Samples: all}
	if err, ok := firstErr.Load().(error); ok {
		return res, err
	}
	return res, nil
}

// Memory reports the process's resident memory from /proc (Linux): the
// current and the peak resident set size, in MiB. ok is false elsewhere.
func Memory() (rssMiB, peakMiB float64, ok bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rssMiB = kb / 1024
		case "VmHWM:":
			peakMiB = kb / 1024
		}
	}
	return rssMiB, peakMiB, rssMiB > 0
}

// Decay compares answering "decayed sum now" for a pattern with n events
// from the O(1) running sum and by recomputation over the events, and
// reports their largest relative difference.
func Decay(n int, now time.Time) (incremental, recompute time.Duration, maxRelDiff float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	events := make([]learning.Timed, n)
	var sum learning.DecayedSum
	for i := range events {
		events[i] = learning.Timed{Value: rng.Float64(), At: now.Add(-time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))}
		sum = sum.Add(events[i].Value, events[i].At, 90)
	}
	const rounds = 200
	var sink float64
	t0 := time.Now()
	for i := range rounds {
		sink += sum.At(now.Add(time.Duration(i)*time.Hour), 90)
	}
	incremental = time.Since(t0) / rounds
	t0 = time.Now()
	for i := range rounds {
		sink -= learning.RecomputeDecayed(events, now.Add(time.Duration(i)*time.Hour), 90)
	}
	recompute = time.Since(t0) / rounds
	for i := range rounds {
		at := now.Add(time.Duration(i) * time.Hour)
		a, b := sum.At(at, 90), learning.RecomputeDecayed(events, at, 90)
		maxRelDiff = max(maxRelDiff, math.Abs(a-b)/math.Max(1, math.Abs(b)))
	}
	_ = sink
	return incremental, recompute, maxRelDiff
}
