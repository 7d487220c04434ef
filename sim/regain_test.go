package sim

import "testing"

// TestRegain: a policy at 80 % of the oracle before a drift at task 41
// that falls to 40 % for 20 tasks and then returns to 80 % regains its
// level once the window ahead holds at most one dipped task (10 tasks,
// share 0.76, within 5 points of 0.8); one that stays at 40 % never does,
// and a drift without a full window before it cannot be judged.
func TestRegain(t *testing.T) {
	const n, d, win = 120, 41, 10
	best := make([]float64, n)
	for i := range best {
		best[i] = 1
	}
	curve := func(dip int) []float64 {
		e := make([]float64, n)
		for i := range e {
			e[i] = 0.8
			if i >= d-1 && i < d-1+dip {
				e[i] = 0.4
			}
		}
		return e
	}
	if k, ok := regain(curve(20), best, d, n, win, 0.05); !ok || k != 19 {
		t.Errorf("dip of 20 tasks: regain %d %v, want 19 true", k, ok)
	}
	if k, ok := regain(curve(20), best, d, n, win, 0.03); !ok || k != 20 {
		t.Errorf("dip of 20 tasks, tolerance 3 points: regain %d %v, want 20 true", k, ok)
	}
	if k, ok := regain(curve(2), best, d, n, win, 0.05); !ok || k != 1 {
		t.Errorf("dip of 2 tasks: regain %d %v, want 1", k, ok)
	}
	if _, ok := regain(curve(n), best, d, n, win, 0.05); ok {
		t.Error("never back: regained")
	}
	if _, ok := regain(curve(0), best, 5, n, win, 0.05); ok {
		t.Error("no full window before the drift: regained")
	}
	if k, ok := regain(curve(0), best, d, n, win, 0.05); !ok || k != 0 {
		t.Errorf("no dip: regain %d %v, want 0", k, ok)
	}
}
