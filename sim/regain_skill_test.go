package sim

import (
	"math"
	"testing"
)

// randomExpected is the mean of the combined rate over every k-subset,
// enumerated here.
func TestRandomExpected(t *testing.T) {
	rates := []float64{0.9, 0.8, 0.5, 0.45, 0.3, 0.1}
	var subsets [][]int
	var rec func(from int, cur []int)
	rec = func(from int, cur []int) {
		if len(cur) == 3 {
			subsets = append(subsets, append([]int(nil), cur...))
			return
		}
		for i := from; i < len(rates); i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	for _, c := range Combines {
		want := 0.0
		for _, s := range subsets {
			ps := []float64{rates[s[0]], rates[s[1]], rates[s[2]]}
			want += c.Of(ps)
		}
		want /= float64(len(subsets))
		if got := randomExpected(c, rates, 3); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: randomExpected %.6f, enumerated %.6f", c, got, want)
		}
	}
	if got := randomExpected(CombineMean, rates, 7); got != 0 {
		t.Errorf("k > n: %v, want 0", got)
	}
}

// A drift at task 41 that widens the oracle's lead (oracle 0.8 → 1.0,
// random 0.5 → 0.4): a policy that keeps its skill (half-way from random
// to the oracle: 0.65, then 0.7) falls from 81 % to 70 % of the oracle
// and never regains its share, but regains its skill at once; random
// choice itself has skill 0 and regains at once. A policy whose skill
// dips for 20 tasks regains it once a window holds at most one dipped task.
func TestSkillRegain(t *testing.T) {
	const n, d, win = 120, 41, 10
	step := func(before, after float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = before
			if i >= d-1 {
				xs[i] = after
			}
		}
		return xs
	}
	best, rnd := step(0.8, 1), step(0.5, 0.4)
	half := step(0.65, 0.7)
	if _, ok := regain(half, best, d, n, win, 0.05); ok {
		t.Error("share of the oracle: regained 70 % after 81 %")
	}
	one := func(x []float64) [][]float64 { return [][]float64{x} }
	if k, ok := skillRegain(one(half), one(best), one(rnd), d, n, win, 0.05); !ok || k != 0 {
		t.Errorf("skill kept: regain %d %v, want 0 true", k, ok)
	}
	if k, ok := skillRegain(one(rnd), one(best), one(rnd), d, n, win, 0.05); !ok || k != 0 {
		t.Errorf("random choice: regain %d %v, want 0 true", k, ok)
	}
	dip := step(0.65, 0.7)
	for i := d - 1; i < d-1+20; i++ {
		dip[i] = 0.4 // random's level: skill 0
	}
	// A window with one dipped task has skill 0.45, the tolerance: r = 19.
	if k, ok := skillRegain(one(dip), one(best), one(rnd), d, n, win, 0.05); !ok || k != 19 {
		t.Errorf("dip of 20 tasks: regain %d %v, want 19 true", k, ok)
	}
	if _, ok := skillRegain(one(half), one(best), one(rnd), 5, n, win, 0.05); ok {
		t.Error("no full window before the drift: judged")
	}
	if _, ok := skillRegain(one(rnd), one(rnd), one(rnd), d, n, win, 0.05); ok {
		t.Error("oracle no better than random: judged")
	}
}
