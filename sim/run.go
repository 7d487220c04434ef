package sim

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Options configure Run.
type Options struct {
	// Seeds to run; each seed is one task sequence and one set of draws
	// (default 1, 2, 3).
	Seeds []uint64
	// Policies to compare (required).
	Policies []PolicySpec
	// Window is the length of the report's windows and of the rolling
	// success used for recovery and the chart (default 50).
	Window int
	// Tolerance is how close to the oracle's rolling expected success a
	// policy must come to have recovered from a drift (default 0.05).
	Tolerance float64
	// Parallel bounds the runs (seed × policy) executed at once
	// (default GOMAXPROCS).
	Parallel int
	// Progress, when set, receives one line per finished run.
	Progress io.Writer
}

// trace is what one policy did on one seed.
type trace struct {
	success  []bool
	expected []float64
	choices  [][]int
	stats    map[string]float64
	timings  map[string]time.Duration
	wall     time.Duration
}

// Run executes every policy on every seed of the world and reports. Runs
// are independent and execute in parallel; the report does not depend on
// their order.
func Run(ctx context.Context, w *World, opts Options) (*Report, error) {
	if len(opts.Policies) == 0 {
		return nil, &PolicyError{Message: "no policy given"}
	}
	names := map[string]bool{}
	for _, p := range opts.Policies {
		if names[p.Name] {
			return nil, &PolicyError{Spec: p.Name, Message: "is listed twice"}
		}
		names[p.Name] = true
	}
	if len(opts.Seeds) == 0 {
		opts.Seeds = []uint64{1, 2, 3}
	}
	if opts.Window <= 0 {
		opts.Window = 50
	}
	if opts.Tolerance <= 0 {
		opts.Tolerance = 0.05
	}
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	tapes := make([]*tape, len(opts.Seeds))
	for i, s := range opts.Seeds {
		tapes[i] = newTape(w, s)
	}
	traces := make([][]*trace, len(opts.Policies)) // [policy][seed]
	for i := range traces {
		traces[i] = make([]*trace, len(opts.Seeds))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, opts.Parallel)
	for pi, spec := range opts.Policies {
		for si := range opts.Seeds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if ctx.Err() != nil {
					return
				}
				tr, err := runOne(ctx, tapes[si], spec)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("policy %s, seed %d: %w", spec.Name, opts.Seeds[si], err)
					}
					cancel()
					return
				}
				traces[pi][si] = tr
				if opts.Progress != nil {
					fmt.Fprintf(opts.Progress, "  %s seed %d: %.2fs\n", spec.Name, opts.Seeds[si], tr.wall.Seconds())
				}
			}()
		}
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := buildReport(w, opts, tapes, traces)
	rep.Timing = timing(opts, traces, time.Since(start))
	return rep, nil
}

// runOne runs one policy over one seed's tape.
func runOne(ctx context.Context, tp *tape, spec PolicySpec) (*trace, error) {
	t0 := time.Now()
	w := tp.w
	clock := &Clock{}
	clock.Set(w.Start)
	env := Env{World: w, Seed: tp.seed, Rand: policyRand(tp.seed, spec.Name), Clock: clock,
		Rates: func(family, task int) []float64 { return w.RatesAt(family, task) }}
	pol, err := spec.New(ctx, env)
	if err != nil {
		return nil, err
	}
	closed := false
	closeP := func() error {
		if c, ok := pol.(io.Closer); ok && !closed {
			closed = true
			return c.Close()
		}
		return nil
	}
	defer closeP() // on the error paths
	n := w.Tasks
	tr := &trace{success: make([]bool, n), expected: make([]float64, n), choices: make([][]int, n)}
	for t := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		task := tp.tasks[t]
		clock.Set(task.Start)
		choice, err := pol.Choose(ctx, task)
		if err != nil {
			return nil, err
		}
		if err := validChoice(choice, task.K, len(w.Strategies)); err != nil {
			return nil, fmt.Errorf("task %d: %w", task.Number, err)
		}
		choice = slices.Clone(choice)
		res := tp.outcome(t, choice)
		clock.Set(res.ReportedAt)
		if err := pol.Observe(ctx, task, slices.Clone(choice), res); err != nil {
			return nil, err
		}
		tr.success[t], tr.expected[t], tr.choices[t] = res.Success, res.Expected, choice
	}
	if err := closeP(); err != nil {
		return nil, err
	}
	if s, ok := pol.(interface{ Stats() map[string]float64 }); ok {
		tr.stats = s.Stats()
	}
	if s, ok := pol.(interface {
		Timings() map[string]time.Duration
	}); ok {
		tr.timings = s.Timings()
	}
	tr.wall = time.Since(t0)
	return tr, nil
}

// Timing is where a run's time went (measured, not reproducible: it is
// left out of comparisons).
type Timing struct {
	WallSeconds float64 `json:"wall_seconds"`
	Parallel    int     `json:"parallel"`
	// Policies are each policy's run times summed over seeds.
	Policies map[string]float64 `json:"policy_seconds"`
	// Engine is the time the kaizen policies spent in the engine, summed
	// over seeds and policies: plan_guidance and record_outcome calls,
	// read_guidance (turning guidance into advice), open_close (opening
	// and closing the engine and its store).
	Engine map[string]float64 `json:"engine_seconds,omitempty"`
}

func timing(opts Options, traces [][]*trace, wall time.Duration) *Timing {
	t := &Timing{WallSeconds: round(wall.Seconds(), 3), Parallel: opts.Parallel, Policies: map[string]float64{}}
	for pi, spec := range opts.Policies {
		for _, tr := range traces[pi] {
			t.Policies[spec.Name] += tr.wall.Seconds()
			for k, d := range tr.timings {
				if t.Engine == nil {
					t.Engine = map[string]float64{}
				}
				t.Engine[k] += d.Seconds()
			}
		}
		t.Policies[spec.Name] = round(t.Policies[spec.Name], 3)
	}
	for k, v := range t.Engine {
		t.Engine[k] = round(v, 3)
	}
	return t
}
