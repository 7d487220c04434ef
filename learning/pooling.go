package learning

import (
	"math"
	"strings"
)

// Empirical-Bayes pooling. How much a strategy's rate in similar tasks
// should be shrunk toward its project-wide rate depends on how much rates
// really differ between kinds of task: in a project where a strategy works
// about as well for migrations as for UI work, tasks of every kind are
// evidence for each other; where the best strategies are opposite, only
// similar tasks are. context.prior_strength = 0 ("auto", the default)
// estimates the strength from the project's own outcomes instead of
// fixing it.

// autoGrid are the strengths the estimate chooses from.
var autoGrid = []float64{1, 2, 4, 8, 16, 32}

// autoSlack is how much more likely (in log-likelihood) more pooling must
// make the outcomes before it is chosen: ln 100, a Bayes factor of 100,
// "decisive" on Jeffreys' scale. Pooling too early is a trap: a strategy
// ranked by the project's overall rate is rarely tried where it is poor
// or where another is better, so the evidence that kinds of task differ
// never accrues.
var autoSlack = math.Log(100)

// contextKey is the kind of task an event belongs to for pooling: its
// tags when it has any, else its inferred kind ("" when neither).
func (e *ContextEvent) contextKey() string {
	if len(e.tags) > 0 {
		return strings.Join(e.tags, ",")
	}
	return e.kind
}

// autoPriorStrength estimates κ by type-II maximum likelihood with a
// preference for less pooling. The uses of each pattern are split into
// cells by the kind of task (contextKey); under strength κ a cell's
// successes are Beta-Binomial with mean the pattern's rate over all its
// cells and strength κ. Of autoGrid, the smallest κ whose log-likelihood
// is within autoSlack of the best is chosen. pats[k] are the candidate
// indexes event k used; with fewer than two kinds of task (or no pattern
// used in two), fallback is returned.
func autoPriorStrength(events []ContextEvent, pats [][]int, ncands int, fallback float64) float64 {
	type cell struct{ s, n float64 }
	cells := map[[2]int]*cell{}
	keys := map[string]int{}
	for k := range events {
		key := events[k].contextKey()
		if key == "" {
			continue
		}
		kid, ok := keys[key]
		if !ok {
			kid = len(keys)
			keys[key] = kid
		}
		for _, i := range pats[k] {
			c := cells[[2]int{i, kid}]
			if c == nil {
				c = &cell{}
				cells[[2]int{i, kid}] = c
			}
			c.n++
			if events[k].Success {
				c.s++
			}
		}
	}
	if len(keys) < 2 {
		return fallback
	}
	tot := make([]cell, ncands) // per pattern, over its cells
	per := make([]int, ncands)  // cells per pattern
	for key, c := range cells {
		tot[key[0]].s += c.s
		tot[key[0]].n += c.n
		per[key[0]]++
	}
	lls := make([]float64, len(autoGrid))
	best, used := math.Inf(-1), false
	for g, kappa := range autoGrid {
		for key, c := range cells {
			i := key[0]
			if per[i] < 2 {
				continue // one kind of task: says nothing of differences
			}
			used = true
			m := (tot[i].s + 1) / (tot[i].n + 2)
			a, b := kappa*m, kappa*(1-m)
			lls[g] += lbeta(a+c.s, b+c.n-c.s) - lbeta(a, b)
		}
		best = max(best, lls[g])
	}
	if !used {
		return fallback
	}
	for g, ll := range lls {
		if ll >= best-autoSlack {
			return autoGrid[g]
		}
	}
	return fallback
}

// AutoPriorStrength is autoPriorStrength of the index's events, computed
// once per version of the index (a plan request between two outcomes
// reuses it). Patterns are told apart by id.
func (x *ContextIndex) AutoPriorStrength() float64 {
	x.autoOnce.Do(func() {
		ids := map[string]int{}
		pats := make([][]int, len(x.events))
		for k, e := range x.events {
			for _, p := range e.Patterns {
				i, ok := ids[p]
				if !ok {
					i = len(ids)
					ids[p] = i
				}
				pats[k] = append(pats[k], i)
			}
		}
		x.auto = autoPriorStrength(x.events, pats, len(ids), fixedPriorStrength)
	})
	return x.auto
}

// lbeta is the log of the beta function.
func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}
