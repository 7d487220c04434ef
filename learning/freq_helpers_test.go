package learning_test

import (
	"math"
	"testing"
)

// sameFrequencies fails t where two tables of selection counts over seeds
// draws (a policy's and its reference's) differ for some key by more than
// five standard errors of the difference of two independent frequencies,
// plus a floor of 0.002 for rare events.
func sameFrequencies(t *testing.T, task, name string, old, new map[string]float64, seeds float64) {
	t.Helper()
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	for k := range keys {
		p, q := old[k]/seeds, new[k]/seeds
		m := (p + q) / 2
		tol := 5*math.Sqrt(2*m*(1-m)/seeds) + 0.002
		if math.Abs(p-q) > tol {
			t.Errorf("task %q: %s %s: %.4f with Recommend, %.4f with RecommendSet (tolerance %.4f)", task, name, k, p, q, tol)
		}
	}
}

// sameRates fails t where a rate both rankings report differs.
func sameRates(t *testing.T, task string, old, new map[string]float64) {
	t.Helper()
	for id, r := range new {
		if o, ok := old[id]; ok && o != r {
			t.Errorf("task %q: rate of %s: %v with Recommend, %v with RecommendSet", task, id, o, r)
		}
	}
}
