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

// sortTopKeyed gives sortTop's prefix for an order led by a float key
// (largest first), with many ties on the key.
func TestSortTopKeyed(t *testing.T) {
	type item struct {
		key float64
		id  int
	}
	order := func(a, b item) int { return cmp.Or(cmp.Compare(b.key, a.key), cmp.Compare(a.id, b.id)) }
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 80 {
		for _, levels := range []int{1, 3, 1000} {
			in := make([]item, n)
			for i := range in {
				in[i] = item{float64(r.IntN(levels)), i}
			}
			want := slices.SortedFunc(slices.Values(in), order)
			for m := 0; m <= n+1; m++ {
				got := slices.Clone(in)
				sortTopKeyed(got, m, func(x item) float64 { return x.key }, order)
				k := min(m, n)
				if !slices.Equal(got[:k], want[:k]) {
					t.Fatalf("n %d levels %d m %d: prefix %v, want %v", n, levels, m, got[:k], want[:k])
				}
				if !slices.Equal(slices.SortedFunc(slices.Values(got), order), want) {
					t.Fatalf("n %d m %d: lost elements", n, m)
				}
			}
		}
	}
	for n := 1; n < 50; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(5))
		}
		sorted := slices.Sorted(slices.Values(xs))
		slices.Reverse(sorted)
		for k := 1; k <= n; k++ {
			if got := nthLargest(slices.Clone(xs), k); got != sorted[k-1] {
				t.Fatalf("nthLargest(%v, %d) = %v, want %v", xs, k, got, sorted[k-1])
			}
		}
	}
}
