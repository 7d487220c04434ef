package learning

import "slices"

// sortTop reorders s so that s[:m] holds its m first elements by cmp, in
// order (the rest follow in no particular order): a quickselect, then a
// sort of the prefix — O(n + m log m) against O(n log n) for a full sort,
// which matters when a project has thousands of patterns and guidance
// shows ten. The standard library has no partial sort; cmp must be a
// total order for the result to be deterministic.
func sortTop[T any](s []T, m int, cmp func(a, b T) int) {
	if m >= len(s) {
		slices.SortFunc(s, cmp)
		return
	}
	if m <= 0 {
		return
	}
	lo, hi := 0, len(s)-1
	for lo < hi {
		// Median of three as the pivot, moved to hi.
		mid := lo + (hi-lo)/2
		if cmp(s[mid], s[lo]) < 0 {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if cmp(s[hi], s[lo]) < 0 {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if cmp(s[mid], s[hi]) < 0 {
			s[mid], s[hi] = s[hi], s[mid]
		}
		p := s[hi]
		i := lo
		for j := lo; j < hi; j++ {
			if cmp(s[j], p) < 0 {
				s[i], s[j] = s[j], s[i]
				i++
			}
		}
		s[i], s[hi] = s[hi], s[i]
		switch {
		case i == m-1 || i == m:
			lo = hi // the prefix [0, m) is settled
		case i < m:
			lo = i + 1
		default:
			hi = i - 1
		}
	}
	slices.SortFunc(s[:m], cmp)
}

// sortTopKeyed is sortTop for an order whose first criterion is a float
// key, largest first (cmp must agree: key(a) > key(b) ⇒ cmp(a, b) < 0).
// It selects on the keys alone — a float quickselect, much cheaper than
// calling cmp — keeps the elements whose key reaches the m-th largest, and
// orders only those with cmp. Ties at that key are all kept, so the result
// is sortTop's.
func sortTopKeyed[T any](s []T, m int, key func(T) float64, cmp func(a, b T) int) {
	if m >= len(s) || m <= 0 {
		sortTop(s, m, cmp)
		return
	}
	keys := make([]float64, len(s))
	for i, x := range s {
		keys[i] = key(x)
	}
	thr := nthLargest(slices.Clone(keys), m)
	// Move the elements with key >= thr to the front, keeping keys in step.
	n := 0
	for i := range s {
		if keys[i] >= thr {
			s[n], s[i] = s[i], s[n]
			keys[n], keys[i] = keys[i], keys[n]
			n++
		}
	}
	sortTop(s[:n], m, cmp)
}

// nthLargest returns the k-th largest of xs (1-based; xs is reordered).
func nthLargest(xs []float64, k int) float64 {
	lo, hi, want := 0, len(xs)-1, k-1 // index in descending order
	for lo < hi {
		p := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] > p {
				i++
			}
			for xs[j] < p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return xs[want]
		}
	}
	return xs[want]
}
