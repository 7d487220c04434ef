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
