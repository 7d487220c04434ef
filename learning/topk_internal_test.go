package learning

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortTop leaves the m smallest elements first, in order, for every m and
// for inputs with ties, sorted and reversed runs.
func TestSortTop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]int{{}, {5}, {2, 1}, {3, 3, 3, 3}}
	for n := range 60 {
		a := make([]int, n)
		for i := range a {
			a[i] = r.IntN(8) // many ties
		}
		inputs = append(inputs, a)
		b := make([]int, n)
		for i := range b {
			b[i] = n - i
		}
		inputs = append(inputs, b)
	}
	for _, in := range inputs {
		want := slices.Sorted(slices.Values(in))
		for m := 0; m <= len(in)+1; m++ {
			got := slices.Clone(in)
			sortTop(got, m, cmp.Compare[int])
			k := min(m, len(in))
			if !slices.Equal(got[:k], want[:k]) {
				t.Fatalf("sortTop(%v, %d) = %v, want prefix %v", in, m, got, want[:k])
			}
			if !slices.Equal(slices.Sorted(slices.Values(got)), want) {
				t.Fatalf("sortTop(%v, %d) lost elements: %v", in, m, got)
			}
		}
	}
}
