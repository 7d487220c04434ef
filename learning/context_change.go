package learning

import "math"

// Change detection per pattern. A strategy whose success rate drifts
// keeps, for tens of uses, the weight of its old results: with
// use_half_life 20, the 20 uses before the drift weigh as much as the 20
// after it. When a pattern's recent results are improbable under the rate
// of its older ones, the older ones are discounted (context.change_discount)
// for that pattern only, so the ranking follows the new rate at once; a
// pattern whose results are steady keeps its whole history.
//
// The test is the generalised likelihood ratio of a Bernoulli sequence
// with one change point against none (a two-sided CUSUM): over the
// pattern's uses, newest first, x_1 … x_m, for every split j (at least
// changeMinSegment uses on each side)
//
//	LLR(j) = LL(x_1..x_j) + LL(x_j+1..x_m) − LL(x_1..x_m)
//
// where LL is the log-likelihood of a segment at its own success rate.
// The split of the largest LLR, when it exceeds context.change_threshold
// (in nats), is taken as the change: uses older than it are discounted.
// Every use counts one (the test does not weigh by recency or credit, so
// that it sees the raw sequence of results).

// changeMinSegment is the least number of uses on each side of a change.
const changeMinSegment = 5

// bernoulliLL is the log-likelihood of s successes in n at rate s/n.
func bernoulliLL(s, n float64) float64 {
	if n <= 0 || s <= 0 || s >= n {
		return 0
	}
	p := s / n
	return s*math.Log(p) + (n-s)*math.Log(1-p)
}

// changeScratch is reusable memory for changeCuts.
type changeScratch struct {
	count, off, fill []int
	uses             []int32 // event index of each use, per candidate, newest first
	cut              []int
}

// changeCuts returns, per candidate, the index of the oldest event before
// which its uses are discounted: events with index < cut[i] are older than
// the detected change of candidate i (-1: no change, nothing discounted).
// events are oldest first; pats[k] are the candidates event k used.
func (c ContextConfig) changeCuts(events []ContextEvent, pats [][]int, ncands int, sc *changeScratch) []int {
	cut := growTo(sc.cut, ncands)
	sc.cut = cut
	for i := range cut {
		cut[i] = -1
	}
	if c.ChangeThreshold <= 0 {
		return cut
	}
	count := growTo(sc.count, ncands)
	sc.count = count
	clear(count)
	total := 0
	for _, ps := range pats {
		for _, i := range ps {
			count[i]++
			total++
		}
	}
	off := growTo(sc.off, ncands+1)
	sc.off = off
	off[0] = 0
	for i := range ncands {
		off[i+1] = off[i] + count[i]
	}
	fill := growTo(sc.fill, ncands)
	sc.fill = fill
	copy(fill, off[:ncands])
	uses := growTo(sc.uses, total)
	sc.uses = uses
	for k := len(events) - 1; k >= 0; k-- {
		for _, i := range pats[k] {
			uses[fill[i]] = int32(k)
			fill[i]++
		}
	}
	for i := range ncands {
		u := uses[off[i]:off[i+1]]
		m := len(u)
		if m < 2*changeMinSegment {
			continue
		}
		sm := 0.0
		for _, k := range u {
			if events[k].Success {
				sm++
			}
		}
		all := bernoulliLL(sm, float64(m))
		best, at := c.ChangeThreshold, -1
		sj := 0.0
		for j := 1; j <= m-changeMinSegment; j++ {
			if events[u[j-1]].Success {
				sj++
			}
			if j < changeMinSegment {
				continue
			}
			llr := bernoulliLL(sj, float64(j)) + bernoulliLL(sm-sj, float64(m-j)) - all
			if llr > best {
				best, at = llr, j
			}
		}
		if at > 0 {
			// u[at-1] is the oldest use after the change; older events
			// are discounted.
			cut[i] = int(u[at-1])
		}
	}
	return cut
}
