package sim

import (
	"math"
	"slices"
)

// Regain measured above random choice. The share of the oracle that
// regain compares before and after a drift moves with the world as well
// as with the policy: when a drift widens the gap between the best
// strategies and the rest, a policy that cannot learn at all (random
// choice) falls to a lower share and "does not regain", although it
// forgot nothing. The skill of a policy over some tasks, (policy −
// random) / (oracle − random) on their expected successes, is 0 for
// random choice and 1 for the oracle in every world; skillRegain is
// regain on that skill, with the seeds pooled.

// randomExpected is the expected success of K strategies drawn uniformly
// without replacement from rates, under the combine rule.
func randomExpected(c Combine, rates []float64, k int) float64 {
	n := len(rates)
	if k <= 0 || n == 0 || k > n {
		return 0
	}
	switch c {
	case CombineMean:
		s := 0.0
		for _, r := range rates {
			s += r
		}
		return s / float64(n)
	case CombineMin:
		// P(the minimum is the i-th smallest) = C(n−1−i, k−1) / C(n, k).
		r := slices.Clone(rates)
		slices.Sort(r)
		e := 0.0
		for i, x := range r {
			e += x * math.Exp(logChoose(n-1-i, k-1)-logChoose(n, k))
		}
		return e
	default:
		// The mean product over k-subsets: the elementary symmetric
		// polynomial e_k(rates) / C(n, k), by the usual recurrence.
		es := make([]float64, k+1)
		es[0] = 1
		for _, x := range rates {
			for j := k; j >= 1; j-- {
				es[j] += es[j-1] * x
			}
		}
		return es[k] / math.Exp(logChoose(n, k))
	}
}

// logChoose is log C(n, k), −Inf when k < 0 or k > n.
func logChoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// skillRegain is regain (report.go) on skill: the smallest r >= 0 such
// that the policy's skill over tasks d+r … d+r+win-1, pooled over the
// seeds (Σ(policy − random) / Σ(oracle − random) over those tasks of every
// seed), is at least its pooled skill over the win tasks before the drift
// minus tol. expected, best and rnd are per seed and task: the policy's,
// the oracle's and random choice's expected success. Not judged (false)
// when there is no full window before the drift, or the oracle is no
// better than random over it; a window after the drift where it is no
// better is skipped.
func skillRegain(expected, best, rnd [][]float64, d, end, win int, tol float64) (int, bool) {
	if len(expected) == 0 {
		return 0, false
	}
	return regain(pooled(expected, rnd), pooled(best, rnd), d, end, win, tol)
}
