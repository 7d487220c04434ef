package sqlstore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBestMatchesSort checks the bounded selection against a full sort,
// with many ties (the order breaks them).
func TestBestMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	order := func(a, b string) int { return strings.Compare(b, a) } // newest (largest) first
	for it := range 200 {
		m := map[string]float64{}
		size := rng.IntN(300)
		for i := range size {
			m[fmt.Sprintf("ref-%04d", rng.IntN(1000)+i*1000)] = float64(rng.IntN(8)) / 4
		}
		all := make([]string, 0, len(m))
		for k := range m {
			all = append(all, k)
		}
		slices.SortFunc(all, func(x, y string) int { return cmp.Or(cmp.Compare(m[y], m[x]), order(x, y)) })
		for _, n := range []int{0, 1, 7, 100, size, size + 5} {
			want := all
			if n > 0 && n < len(all) {
				want = all[:n]
			}
			if got := best(m, n, order); !slices.Equal(got, want) {
				t.Fatalf("case %d, n %d: got %v, want %v", it, n, got, want)
			}
		}
	}
}
