package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
)

func mustBuiltin(t testing.TB, name string) *World {
	t.Helper()
	w, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A seed gives the same tape every time, and different seeds differ.
func TestTapeIsDeterministic(t *testing.T) {
	t.Parallel()
	w := mustBuiltin(t, "task-dependent")
	a, b, c := newTape(w, 7), newTape(w, 7), newTape(w, 8)
	if !reflect.DeepEqual(a.tasks, b.tasks) || !reflect.DeepEqual(a.u, b.u) || !reflect.DeepEqual(a.oracle, b.oracle) {
		t.Fatal("two tapes of seed 7 differ")
	}
	if reflect.DeepEqual(a.tasks, c.tasks) {
		t.Fatal("seeds 7 and 8 give the same tasks")
	}
	// The clock advances by 30-120 minutes per task, and every report
	// falls before the next task starts.
	for i := 1; i < len(a.tasks); i++ {
		gap := a.tasks[i].Start.Sub(a.tasks[i-1].Start).Minutes()
		if gap < 30 || gap > 120 {
			t.Fatalf("task %d starts %.1f minutes after the previous one", i+1, gap)
		}
		if r := a.oracle[i-1].ReportedAt; r.Before(a.tasks[i-1].Start) || !r.Before(a.tasks[i].Start) {
			t.Fatalf("task %d reported at %v, outside [%v, %v)", i, r, a.tasks[i-1].Start, a.tasks[i].Start)
		}
	}
}

// Common random numbers: the outcome of a task depends only on the set of
// strategies chosen, and for the min and mean rules a choice with a higher
// success probability succeeds whenever a lower one does.
func TestOutcomesUseCommonRandomNumbers(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"task-dependent", "many-per-task", "sparse-families"} {
		w := mustBuiltin(t, name)
		tp := newTape(w, 3)
		rng := rand.New(rand.NewPCG(1, 2))
		for ti := range w.Tasks {
			a := rng.Perm(len(w.Strategies))[:w.K]
			b := slices.Clone(a)
			slices.Reverse(b)
			ra, rb := tp.outcome(ti, a), tp.outcome(ti, b)
			if ra != rb {
				t.Fatalf("%s task %d: %v and %v (same set) give %+v and %+v", name, ti+1, a, b, ra, rb)
			}
			if w.Combine == CombineProduct {
				continue
			}
			c := rng.Perm(len(w.Strategies))[:w.K]
			rc := tp.outcome(ti, c)
			lo, hi := ra, rc
			if lo.Expected > hi.Expected {
				lo, hi = hi, lo
			}
			if lo.Success && !hi.Success {
				t.Fatalf("%s task %d: the better choice failed where the worse succeeded", name, ti+1)
			}
		}
	}
}

// The draws reproduce the hidden rates: over many tasks the oracle's
// success rate matches its expected success.
func TestSuccessMatchesHiddenRates(t *testing.T) {
	t.Parallel()
	for _, name := range BuiltinNames() {
		w, err := mustBuiltin(t, name).WithTasks(20000)
		if err != nil {
			t.Fatal(err)
		}
		tp := newTape(w, 11)
		var got, want float64
		for ti := range w.Tasks {
			got += b2f(tp.oracle[ti].Success)
			want += tp.best[ti]
		}
		got, want = got/float64(w.Tasks), want/float64(w.Tasks)
		// Noise shifts are zero-mean but clamped to [0, 1]: allow a little.
		if math.Abs(got-want) > 0.02 {
			t.Errorf("%s: oracle success %.3f, expected %.3f", name, got, want)
		}
	}
}

// Duration, errors and retries follow success, so that kaizen's implicit
// scoring sees realistic outcomes: successes are mostly helpful, failures
// mostly harmful, and a failure takes longer than a success on the same
// draws.
func TestOutcomeModelFollowsSuccess(t *testing.T) {
	t.Parallel()
	w := mustBuiltin(t, "stable-global")
	w.Tasks = 5000
	tp := newTape(w, 5)
	lc := learning.DefaultConfig()
	var n [2]int
	var kind [2]map[learning.FeedbackType]int
	kind[0], kind[1] = map[learning.FeedbackType]int{}, map[learning.FeedbackType]int{}
	var dur, errs [2]float64
	for ti := range w.Tasks {
		r := tp.outcome(ti, tp.bestSet[ti])
		i := int(b2f(r.Success))
		n[i]++
		sc := lc.ScoreOutcome(learning.Signals{DurationMs: r.DurationMs, ErrorCount: r.Errors, RetryCount: r.Retries, Success: r.Success})
		kind[i][sc.Type]++
		dur[i] += float64(r.DurationMs)
		errs[i] += float64(r.Errors)
	}
	if share := float64(kind[1][learning.Helpful]) / float64(n[1]); share < 0.8 {
		t.Errorf("%.0f%% of successes scored helpful, want most", share*100)
	}
	if share := float64(kind[0][learning.Harmful]) / float64(n[0]); share < 0.6 || share > 0.95 {
		t.Errorf("%.0f%% of failures scored harmful, want most but not all", share*100)
	}
	if kind[0][learning.Helpful] != 0 {
		t.Errorf("a failure scored helpful")
	}
	if dur[0]/float64(n[0]) < 1.5*dur[1]/float64(n[1]) || errs[0]/float64(n[0]) < 1.5 {
		t.Errorf("failures: mean %.0f ms and %.1f errors; successes: %.0f ms", dur[0]/float64(n[0]), errs[0]/float64(n[0]), dur[1]/float64(n[1]))
	}
}

func TestQuantiles(t *testing.T) {
	t.Parallel()
	for _, mean := range []float64{0, 0.15, 1.2, 3, 20} {
		s, n := 0.0, 20000
		for i := range n {
			s += float64(poissonQuantile(mean, (float64(i)+0.5)/float64(n)))
		}
		if got := s / float64(n); math.Abs(got-mean) > 0.01*max(1, mean) {
			t.Errorf("Poisson(%v) mean over the quantiles %v", mean, got)
		}
	}
	if poissonQuantile(3, 0.999999999) >= 1000 || poissonQuantile(0, 0.5) != 0 {
		t.Error("Poisson quantile bounds")
	}
	for _, c := range []struct{ u, z float64 }{{0.5, 0}, {0.975, 1.959963984540054}, {0.025, -1.959963984540054}} {
		if got := normalQuantile(c.u); math.Abs(got-c.z) > 1e-9 {
			t.Errorf("normalQuantile(%v) = %v, want %v", c.u, got, c.z)
		}
	}
}

func TestCombine(t *testing.T) {
	t.Parallel()
	r := []float64{0.9, 0.5, 0.8}
	for _, c := range []struct {
		c    Combine
		want float64
	}{{CombineProduct, 0.36}, {CombineMin, 0.5}, {CombineMean, 2.2 / 3}} {
		if got := c.c.Of(r); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.c, got, c.want)
		}
	}
	// The oracle's top-K is optimal under each rule.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		rates := make([]float64, 6)
		for i := range rates {
			rates[i] = rng.Float64()
		}
		for _, c := range Combines {
			best := c.Of(pick(rates, topK(rates, 3)))
			for range 20 {
				if other := c.Of(pick(rates, rng.Perm(6)[:3])); other > best+1e-12 {
					t.Fatalf("%s: a random set (%v) beats the top 3 (%v)", c, other, best)
				}
			}
		}
	}
}
