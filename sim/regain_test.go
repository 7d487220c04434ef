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

// TestPooledRegain: two seeds with the same level after a drift at task
// 41 (80 % of the oracle) and levels of 100 % and 60 % in the window
// before it. Per seed, the first never regains (its window before the
// drift was lucky) and the second regains at once; pooled, the level
// before is 80 % and is regained at once. A dip after the drift delays
// the pooled regain as it does a seed's.
func TestPooledRegain(t *testing.T) {
	const n, d, win = 120, 41, 10
	best := make([]float64, n)
	for i := range best {
		best[i] = 1
	}
	level := func(before, after float64, dip int) []float64 {
		e := make([]float64, n)
		for i := range e {
			switch {
			case i < d-1:
				e[i] = before
			case i < d-1+dip:
				e[i] = 0.2
			default:
				e[i] = after
			}
		}
		return e
	}
	lucky, unlucky := level(1, 0.8, 0), level(0.6, 0.8, 0)
	if _, ok := regain(lucky, best, d, n, win, 0.05); ok {
		t.Error("lucky seed: regained 80 % after 100 % before")
	}
	if k, ok := regain(unlucky, best, d, n, win, 0.05); !ok || k != 0 {
		t.Errorf("unlucky seed: regain %d %v, want 0 true", k, ok)
	}
	both := [][]float64{lucky, unlucky}
	if k, ok := pooledRegain(both, [][]float64{best, best}, d, n, win, 0.05); !ok || k != 0 {
		t.Errorf("pooled: regain %d %v, want 0 true", k, ok)
	}
	dipped := [][]float64{level(1, 0.8, 20), level(0.6, 0.8, 20)}
	// A window of 10 tasks with k dipped ones is at (0.2·k + 0.8·(10−k))/10,
	// within 5 points of 0.8 only for k = 0 (k = 1 gives 0.74): from r = 20.
	if k, ok := pooledRegain(dipped, [][]float64{best, best}, d, n, win, 0.05); !ok || k != 20 {
		t.Errorf("pooled with a dip of 20 tasks: regain %d %v, want 20 true", k, ok)
	}
	if _, ok := pooledRegain(nil, nil, d, n, win, 0.05); ok {
		t.Error("no seed: regained")
	}
}
