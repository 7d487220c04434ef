package learningsvc

import (
	"sync"
	"sync/atomic"
)

// boundOrder is a guidance index's walk order: patterns by descending
// bound, ties by position. A request walks only its top (until the bound
// falls below the limit-th best value), so the order is not sorted at
// build time (a sort of 100,000 bounds was a quarter of building the
// index): the bounds are kept in a max-heap (built in linear time) and
// the sorted prefix is extended by popping it, under a lock, when a walk
// reaches its end. The prefix is published with an atomic length, so
// concurrent walks read it without the lock.
type boundOrder struct {
	mu     sync.Mutex
	heap   []bounded // the bounds not in the prefix
	sorted []bounded // sorted[:n] is the prefix (capacity: every bound)
	n      atomic.Int64
}

// before is the order: higher bound first, then lower position.
func before(a, b bounded) bool {
	if a.bound != b.bound {
		return a.bound > b.bound
	}
	return a.pos < b.pos
}

// newBoundOrder takes ownership of bs.
func newBoundOrder(bs []bounded) *boundOrder {
	o := &boundOrder{heap: bs, sorted: make([]bounded, len(bs))}
	for i := len(bs)/2 - 1; i >= 0; i-- {
		o.down(i)
	}
	return o
}

func (o *boundOrder) down(i int) {
	h := o.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && before(h[r], h[l]) {
			c = r
		}
		if !before(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// len is the number of bounds.
func (o *boundOrder) len() int { return len(o.sorted) }

// at returns the i-th bound of the order (i < len).
func (o *boundOrder) at(i int) bounded {
	if int64(i) < o.n.Load() {
		return o.sorted[i]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	n := int(o.n.Load())
	want := min(len(o.sorted), max(i+1, 2*n, 64)) // doubling: amortised O(log n) per walked bound
	for ; n < want; n++ {
		h := o.heap
		o.sorted[n] = h[0]
		last := len(h) - 1
		h[0] = h[last]
		o.heap = h[:last]
		o.down(0)
	}
	o.n.Store(int64(n))
	return o.sorted[i]
}
