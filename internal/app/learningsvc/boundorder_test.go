package learningsvc

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestBoundOrder: the lazily sorted order is the full sort (descending
// bound, then position), read in any pattern and by concurrent walks.
func TestBoundOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 2, 63, 64, 65, 1000, 20000} {
		bs := make([]bounded, n)
		for i := range bs {
			bs[i] = bounded{int32(i), float64(r.IntN(50)) / 7} // many ties
		}
		want := slices.Clone(bs)
		slices.SortFunc(want, func(a, b bounded) int {
			switch {
			case before(a, b):
				return -1
			case before(b, a):
				return 1
			}
			return 0
		})
		o := newBoundOrder(bs)
		if o.len() != n {
			t.Fatalf("len %d, want %d", o.len(), n)
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n {
					if i%(w+2) == 0 && w%2 == 1 {
						continue
					}
					if got := o.at(i); got != want[i] {
						t.Errorf("n %d: at(%d) = %v, want %v", n, i, got, want[i])
						return
					}
				}
			}()
		}
		wg.Wait()
		if n > 0 && o.at(n-1) != want[n-1] {
			t.Fatalf("n %d: last differs", n)
		}
	}
}
