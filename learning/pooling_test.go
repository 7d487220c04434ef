package learning

import (
	"math/rand/v2"
	"testing"
)

// poolingEvents draws n outcomes of patterns 0…len(rate[0])-1 in
// len(rate) kinds of task, with success rates rate[kind][pattern].
func poolingEvents(seed uint64, n int, rate [][]float64) ([]ContextEvent, [][]int) {
	r := rand.New(rand.NewPCG(seed, 1))
	var events []ContextEvent
	var pats [][]int
	for i := range n {
		k := i % len(rate)
		p := r.IntN(len(rate[k]))
		events = append(events, ContextEvent{Success: r.Float64() < rate[k][p], kind: TaskKinds[k]})
		pats = append(pats, []int{p})
	}
	return events, pats
}

func TestAutoPriorStrength(t *testing.T) {
	alike := [][]float64{{0.8, 0.3, 0.5, 0.6}, {0.8, 0.3, 0.5, 0.6}, {0.8, 0.3, 0.5, 0.6}, {0.8, 0.3, 0.5, 0.6}}
	opposite := [][]float64{{0.9, 0.1, 0.5, 0.2}, {0.1, 0.9, 0.2, 0.5}, {0.5, 0.2, 0.9, 0.1}, {0.2, 0.5, 0.1, 0.9}}
	for seed := range uint64(5) {
		// The same rates in every kind: the outcomes favour pooling.
		ev, pats := poolingEvents(seed, 800, alike)
		if k := autoPriorStrength(ev, pats, 4, 2); k < 8 {
			t.Errorf("seed %d, kinds alike: κ = %v, want >= 8 (pool)", seed, k)
		}
		// Opposite best patterns: no pooling.
		ev, pats = poolingEvents(seed, 800, opposite)
		if k := autoPriorStrength(ev, pats, 4, 2); k > 2 {
			t.Errorf("seed %d, kinds opposite: κ = %v, want <= 2 (local)", seed, k)
		}
	}
	// A few outcomes cannot tell: the least pooling.
	ev, pats := poolingEvents(1, 24, alike)
	if k := autoPriorStrength(ev, pats, 4, 2); k != autoGrid[0] {
		t.Errorf("24 outcomes: κ = %v, want %v", k, autoGrid[0])
	}
	// One kind of task, or none: the fixed strength.
	ev, pats = poolingEvents(1, 800, alike)
	for i := range ev {
		ev[i].kind = KindMigration
	}
	if k := autoPriorStrength(ev, pats, 4, 2); k != 2 {
		t.Errorf("one kind: κ = %v, want the fallback 2", k)
	}
	if k := autoPriorStrength(nil, nil, 4, 2); k != 2 {
		t.Errorf("no outcomes: κ = %v, want 2", k)
	}
	// Tags decide the kind of an event before the inferred kind.
	ev, pats = poolingEvents(2, 800, opposite)
	for i := range ev {
		ev[i].tags = []string{"same"}
	}
	if k := autoPriorStrength(ev, pats, 4, 2); k != 2 {
		t.Errorf("one tag on every event: κ = %v, want the fallback 2", k)
	}
}
