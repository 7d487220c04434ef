package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Task is one task of a run as a policy sees it.
type Task struct {
	// Number is the task's place in the run, from 1.
	Number int
	// ID is the task's bead id, unique within a run.
	ID string
	// Family is the task family's index and Name its name. Context-aware
	// baselines (the per-family bandit) use them; the kaizen policy sees
	// only the description, like a real agent.
	Family     int
	FamilyName string
	// Description is the task as an agent would receive it.
	Description string
	// Start is the simulated time the task starts (the agent plans);
	// Deadline is the last instant it can report its outcome, just before
	// the next task starts.
	Start, Deadline time.Time
	// K is the number of strategies to choose.
	K int
}

// Result is the outcome of a task under a choice of strategies.
type Result struct {
	Success bool
	// Expected is the success probability of the choice from the hidden
	// rates (without the task's noise): what regret is measured on.
	Expected   float64
	DurationMs int64
	Errors     int
	Retries    int
	// ReportedAt is when the agent reports the outcome: the task's start
	// plus its duration, but not after its deadline.
	ReportedAt time.Time
}

// tape holds the draws of one seed: the task sequence and every uniform
// variate an outcome needs, drawn before any policy runs, so that every
// policy meets the same tasks and two policies choosing the same
// strategies for a task get the same outcome (common random numbers).
type tape struct {
	w     *World
	seed  uint64
	tasks []Task
	// per task: one uniform per strategy (product rule), one for the
	// task (min and mean rules), the noise shift, and the uniforms of
	// duration, errors and retries.
	u                  [][]float64
	v, shift           []float64
	uDur, uErr, uRetry []float64
	rates              [][]float64 // hidden rates of the task's family at the task
	best               []float64   // the oracle's expected success per task
	bestSet            [][]int
	oracle             []Result
}

// newTape draws a seed's tasks. The stream is a PCG seeded by the seed
// alone, read in a fixed order, so a seed gives the same tape for any
// set of policies.
func newTape(w *World, seed uint64) *tape {
	rng := rand.New(rand.NewPCG(seed, 0x6b61697a656e2d73)) // "kaizen-s"
	n, ns := w.Tasks, len(w.Strategies)
	tp := &tape{w: w, seed: seed, tasks: make([]Task, n), u: make([][]float64, n),
		v: make([]float64, n), shift: make([]float64, n), uDur: make([]float64, n),
		uErr: make([]float64, n), uRetry: make([]float64, n), rates: make([][]float64, n),
		best: make([]float64, n), bestSet: make([][]int, n), oracle: make([]Result, n)}
	total := 0.0
	for _, f := range w.Families {
		total += f.Weight
	}
	at := w.Start
	for t := range n {
		x := rng.Float64() * total
		fam := len(w.Families) - 1
		for i, f := range w.Families {
			if x < f.Weight {
				fam = i
				break
			}
			x -= f.Weight
		}
		descs := w.Families[fam].Descriptions
		desc := descs[rng.IntN(len(descs))]
		lo, hi := w.MinutesPerTask[0], w.MinutesPerTask[1]
		gap := time.Duration((lo + rng.Float64()*(hi-lo)) * float64(time.Minute)).Truncate(time.Second)
		tp.u[t] = make([]float64, ns)
		for s := range ns {
			tp.u[t][s] = rng.Float64()
		}
		tp.v[t] = rng.Float64()
		tp.shift[t] = w.Noise * normalQuantile(open01(rng.Float64()))
		tp.uDur[t], tp.uErr[t], tp.uRetry[t] = open01(rng.Float64()), rng.Float64(), rng.Float64()
		tp.tasks[t] = Task{Number: t + 1, ID: fmt.Sprintf("sim-%d-%d", seed, t+1), Family: fam,
			FamilyName: w.Families[fam].Name, Description: desc, Start: at, Deadline: at.Add(gap - time.Second), K: w.K}
		at = at.Add(gap)
		tp.rates[t] = w.RatesAt(fam, t+1)
		tp.bestSet[t] = topK(tp.rates[t], w.K)
		tp.oracle[t] = tp.outcome(t, tp.bestSet[t])
		tp.best[t] = tp.oracle[t].Expected
	}
	return tp
}

// outcome is the result of task t (0-based) under a choice.
func (tp *tape) outcome(t int, choice []int) Result {
	w := tp.w
	ps := make([]float64, len(choice))
	for i, s := range choice {
		ps[i] = tp.rates[t][s]
	}
	r := Result{Expected: w.Combine.Of(ps)}
	shift := tp.shift[t]
	switch w.Combine {
	case CombineProduct:
		r.Success = true
		for i, s := range choice {
			if tp.u[t][s] >= clamp01(ps[i]+shift) {
				r.Success = false
			}
		}
	default:
		r.Success = tp.v[t] < clamp01(r.Expected+shift)
	}
	shape := w.Outcome.Failure
	if r.Success {
		shape = w.Outcome.Success
	}
	minutes := shape.DurationMinutes * math.Exp(shape.DurationSpread*normalQuantile(tp.uDur[t]))
	minutes = min(max(minutes, 1.0/60), 24*60)
	r.DurationMs = int64(minutes * 60_000)
	r.Errors = poissonQuantile(shape.Errors, tp.uErr[t])
	r.Retries = poissonQuantile(shape.Retries, tp.uRetry[t])
	task := tp.tasks[t]
	r.ReportedAt = task.Start.Add(time.Duration(r.DurationMs) * time.Millisecond)
	if r.ReportedAt.After(task.Deadline) {
		r.ReportedAt = task.Deadline
	}
	return r
}

// topK returns the indexes of the k largest rates, best first (ties by
// lower index): the oracle's choice, optimal under every Combine rule.
func topK(rates []float64, k int) []int {
	idx := make([]int, len(rates))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case rates[a] > rates[b]:
			return -1
		case rates[a] < rates[b]:
			return 1
		}
		return 0
	})
	return idx[:k]
}

// normalQuantile is the standard normal inverse CDF of u in (0, 1).
func normalQuantile(u float64) float64 { return math.Sqrt2 * math.Erfinv(2*u-1) }

// poissonQuantile is the smallest n with P(X <= n) > u for X ~ Poisson(mean).
func poissonQuantile(mean, u float64) int {
	if mean <= 0 {
		return 0
	}
	p := math.Exp(-mean)
	cdf := p
	n := 0
	for cdf <= u && n < 1000 {
		n++
		p *= mean / float64(n)
		cdf += p
	}
	return n
}

// open01 maps [0, 1) into (0, 1).
func open01(u float64) float64 {
	const eps = 1e-12
	return min(max(u, eps), 1-eps)
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }
