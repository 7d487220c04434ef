package learning

import (
	"math"
	"sync/atomic"
)

// Drawing fewer posteriors in RecommendSet (issue 17).
//
// Every pattern of a thompson ranking gets a draw, but only the limit
// best can be shown. Two shortcuts keep the output's distribution while
// drawing a number only for the patterns that can enter a list:
//
//   - A group of untouched patterns (equal counts) stops at its first draw
//     that cannot enter its list. That test compares the draw's tail
//     probability with the posterior's tail at the threshold, P(X > τ) =
//     CDF of Beta(β, α) at 1 − τ. cdfBound bounds that CDF from above for
//     a few floating-point operations (the group's log-normaliser is
//     cached in the ChoiceSet per prior strength), and the exact CDF is
//     computed only when the bound cannot decide: the decision is the same.
//
//   - A pattern the indexed outcomes used but none of the similar tasks
//     did has the posterior Beta(κm, κ(1−m)), m its overall mean: with the
//     sum of its parameters fixed at κ, that family is ordered in m (the
//     density ratio of a larger m to a smaller is increasing in x), so its
//     tail above τ is at most the tail of the largest m among a bucket of
//     such patterns. tailDraws visits the buckets from the largest m down
//     and, in each, generates the patterns whose draw exceeds the current
//     threshold τ as independent Bernoulli trials thinned from the bucket's
//     bound p̂ (geometric skips between candidates: one uniform per
//     candidate, not per pattern; a candidate is kept with probability
//     p/p̂, p its own tail at τ), then draws the kept one's value from its
//     posterior above τ (the quantile of a uniform tail in (0, p]). A
//     pattern whose draw does not exceed τ cannot enter the list: at least
//     limit draws already exceed τ, and τ only rises. The draws that enter
//     therefore have the joint distribution of drawing every pattern, which
//     TestRecommendSetSameDistributionManyUsed checks against Recommend.

// famBuckets is the number of buckets of overall means in tailDraws.
const famBuckets = 64

// cdfBound is a number at least b.CDF(x) for x in (0, 1), given logX =
// log x, log1mX = log(1 − x) and lnorm = log α + lbeta(α, β):
// I_x(α, β) = ∫₀ˣ t^(α−1)(1−t)^(β−1) dt / B(α, β) ≤ x^α/α · max(1, (1−x)^(β−1)) / B(α, β).
// It is tight when x is small (the tail of a draw close to 1), and made
// slightly larger to absorb rounding.
func cdfBound(b Beta, lnorm, logX, log1mX float64) float64 {
	e := b.Alpha*logX - lnorm
	if b.Beta < 1 {
		e += (b.Beta - 1) * log1mX
	}
	return math.Exp(e) * (1 + 1e-6)
}

// protoCache is, per group of a ChoiceSet, the posterior every untouched
// member shares and the log-normaliser of its flipped Beta for cdfBound,
// for one prior strength (with or without similar tasks).
type protoCache struct {
	kappa         float64
	withNeighbors bool
	protos        []setScored
	lnorm         []float64
}

// protoState returns the cached posteriors of the set's groups for kappa.
func (s *ChoiceSet) protoState(kappa float64, withNeighbors bool) *protoCache {
	slot := &s.protos[0]
	if withNeighbors {
		slot = &s.protos[1]
	}
	if c := slot.Load(); c != nil && c.kappa == kappa {
		return c
	}
	c := &protoCache{kappa: kappa, withNeighbors: withNeighbors, protos: make([]setScored, len(s.groups)),
		lnorm: make([]float64, len(s.groups))}
	for g, gr := range s.groups {
		c.protos[g] = scoreChoice(&Choice{Successes: gr.successes, Failures: gr.failures}, evidence{}, kappa, withNeighbors)
		c.lnorm[g] = flipLnorm(c.protos[g].post)
	}
	slot.Store(c)
	return c
}

// flipLnorm is cdfBound's lnorm for the flipped posterior Beta(β, α).
func flipLnorm(b Beta) float64 { return math.Log(b.Beta) + lbeta(b.Beta, b.Alpha) }

type protoSlots = [2]atomic.Pointer[protoCache]

// scoreChoice is the posterior of a choice from its evidence (see
// RecommendSet).
func scoreChoice(cd *Choice, e evidence, kappa float64, withNeighbors bool) setScored {
	if e.n == 0 && cd.Successes+cd.Failures > 0 {
		e.s, e.n = float64(cd.Successes), float64(cd.Successes+cd.Failures)
	}
	overall := Beta{Alpha: e.s + 1, Beta: e.n - e.s + 1}
	post := overall
	if withNeighbors {
		m := overall.Mean()
		post = Beta{Alpha: kappa*m + e.ls, Beta: kappa*(1-m) + e.ln - e.ls}
	}
	return setScored{cd: cd, post: post, mean: post.Mean(), local: e.ln, overall: e.n}
}

// tailDraws adds to the recommended list, by push, the draws of the
// family patterns fam (indices into all, each with a posterior
// Beta(κm, κ(1−m)) and m = its overall mean in famM) that exceed the
// list's threshold; the list is full when it is called. See the comment
// at the top of this file.
func tailDraws(rng *Rand, all []setScored, fam []int32, famM []float64, kappa float64, sc *setScratch,
	threshold func() float64, push func(setScored)) {
	// Bucket by m (counting sort, stable in local order).
	var start [famBuckets + 1]int32
	var maxM [famBuckets]float64
	bucketOf := func(m float64) int { return min(famBuckets-1, max(0, int(m*famBuckets))) }
	for k := range fam {
		b := bucketOf(famM[k])
		start[b+1]++
		maxM[b] = max(maxM[b], famM[k])
	}
	for b := range famBuckets {
		start[b+1] += start[b]
	}
	order := growTo(sc.famOrder, len(fam))
	sc.famOrder = order
	next := start
	for k, j := range fam {
		b := bucketOf(famM[k])
		order[next[b]] = j
		next[b]++
	}
	uniform := func() float64 { // in (0, 1)
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return u
	}
	for b := famBuckets - 1; b >= 0; b-- {
		members := order[start[b]:start[b+1]]
		if len(members) == 0 {
			continue
		}
		top := Beta{Alpha: kappa * (1 - maxM[b]), Beta: kappa * maxM[b]} // flipped: its CDF at 1−τ is the tail above τ
		pHi := top.CDF(1-threshold()) * (1 + 1e-9)
		if !(pHi > 0) {
			return // every later bucket's tail is lower still
		}
		for pos := 0; pos < len(members); pos++ {
			if pHi < 1 { // skip the patterns whose trial fails
				skip := math.Floor(math.Log(uniform()) / math.Log1p(-pHi))
				if skip >= float64(len(members)-pos) {
					break
				}
				pos += int(skip)
			}
			s := all[members[pos]]
			flip := Beta{Alpha: s.post.Beta, Beta: s.post.Alpha}
			p := flip.CDF(1 - threshold())
			if uniform()*pHi >= p {
				continue
			}
			s.score = 1 - flip.quantileFine(p*uniform())
			push(s)
			if pHi = top.CDF(1-threshold()) * (1 + 1e-9); !(pHi > 0) {
				return
			}
		}
	}
}
