package learning

// The joint credit (context.credit = "joint"): instead of sharing each
// outcome among its patterns one task at a time, fit every pattern's own
// rate at once by a ridge regression of the outcomes on the patterns used,
//
//	y_k ≈ (1/K_k) Σ_{i ∈ S_k} w_i,
//
// each outcome weighted by its age weight (and, for the similar tasks, its
// similarity), with a ridge prior of strength jointRidge centred on the
// rates equal credit gives (jointRidgeLocal, centred on the overall fit,
// for the similar tasks). One use in a task of K patterns says 1/K² as
// much about a pattern as a use on its own, so a pattern's effect is told
// from its partners' by the tasks where they were not together. Each use
// also counts by its recency among the pattern's uses (gamma per newer
// use, as in the evidence; without it the drifting world lost 4 points),
// so the fit solves one weighted normal equation per pattern rather than
// one least-squares objective; jointSweeps Gauss-Seidel sweeps from the
// prior solve them (K is small and the design sparse). The fitted rates, clipped to [0, 1],
// become the success counts of the evidence: s = w·n over the same uses n
// equal credit counts, so the Beta posterior, Thompson sampling and the
// anti-pattern rules downstream are unchanged. The mean model is a first
// approximation of how patterns combine, not an assumption that they
// average: it is the first-order term of any smooth rule.

const (
	// CreditJoint fits all patterns' rates jointly (see above).
	CreditJoint = "joint"
	// jointRidge is the prior's weight over every outcome, in uses on
	// their own: enough to split the effects of patterns always used
	// together (by their equal-credit rates), not to hold a rate that the
	// outcomes pull away (0.1 measured better than 1 in kaizen sim, and
	// within the noise of 0.01; docs/learning.md).
	jointRidge = 0.1
	// jointRidgeLocal is the prior's weight (the overall fit) over the
	// similar tasks: barely any, as the ranking already shrinks their
	// rate toward the overall one with the prior strength.
	jointRidgeLocal = 0.01
	// jointSweeps is the number of Gauss-Seidel sweeps.
	jointSweeps = 8
)

// jointScratch is the joint fit's reusable memory.
type jointScratch struct {
	w, prior, pred, omega []float64
	start                 []int
	list                  []int32
}

// jointCredit replaces ev's success counts (s over n, ls over ln) with
// the joint fit's rates: over every event with age weights decay, and over
// the similar events (local[k] > 0, in order) with weights local·decay and
// the overall fit as prior. A use's weight is also its recency among the
// pattern's uses, gamma per newer use, as in the evidence.
func (sc *evidenceScratch) jointCredit(events []ContextEvent, pats [][]int, ev []evidence, decay, local []float64, order []int, gamma float64) {
	js := &sc.joint
	n := len(ev)
	prior := growTo(js.prior, n)
	js.prior = prior
	for i := range ev {
		prior[i] = (ev[i].s + 1) / (ev[i].n + 2)
	}
	omega := growTo(js.omega, len(events))
	js.omega = omega
	copy(omega, decay)
	w := js.fit(pats, nil, omega, events, prior, gamma, jointRidge)
	for i := range ev {
		ev[i].s = min(max(w[i], 0), 1) * ev[i].n
		prior[i] = min(max(w[i], 0), 1)
	}
	if len(order) == 0 {
		return
	}
	for _, k := range order {
		omega[k] = local[k] * decay[k]
	}
	w = js.fit(pats, order, omega, events, prior, gamma, jointRidgeLocal)
	for i := range ev {
		ev[i].ls = min(max(w[i], 0), 1) * ev[i].ln
	}
}

// fit solves the ridge regression over the events listed in order (nil:
// all) with weights omega and prior means prior; it returns the rates (in
// js.w, valid until the next fit).
func (js *jointScratch) fit(pats [][]int, order []int, omega []float64, events []ContextEvent, prior []float64, gamma, ridge float64) []float64 {
	n := len(prior)
	nev := len(pats)
	if order != nil {
		nev = len(order)
	}
	ev := func(j int) int {
		if order != nil {
			return order[j]
		}
		return j
	}
	// Inverted lists: start[i]..start[i+1] in list are the events (their
	// positions j) that used pattern i.
	start := growTo(js.start, n+1)
	js.start = start
	clear(start)
	for j := range nev {
		for _, i := range pats[ev(j)] {
			start[i+1]++
		}
	}
	for i := range n {
		start[i+1] += start[i]
	}
	list := growTo(js.list, start[n])
	js.list = list
	fill := growTo(js.pred, n) // next free slot per pattern, then reused
	for i := range n {
		fill[i] = float64(start[i])
	}
	for j := range nev {
		for _, i := range pats[ev(j)] {
			list[int(fill[i])] = int32(j)
			fill[i]++
		}
	}
	w := growTo(js.w, n)
	js.w = w
	copy(w, prior)
	// pred[j] = Σ_{i ∈ S} w_i of event j.
	pred := growTo(fill, max(nev, n))
	js.pred = pred
	for j := range nev {
		s := 0.0
		for _, i := range pats[ev(j)] {
			s += w[i]
		}
		pred[j] = s
	}
	for range jointSweeps {
		for i := range n {
			lo, hi := start[i], start[i+1]
			if lo == hi {
				continue
			}
			num, den := ridge*prior[i], ridge
			r := 1.0 // the use's recency among i's uses, newest first
			for t := hi - 1; t >= lo; t-- {
				j := list[t]
				k := int(j)
				if order != nil {
					k = order[j]
				}
				K := float64(len(pats[k]))
				a := r * omega[k] / (K * K)
				r *= gamma
				num += a * (K*b2f(events[k].Success) - (pred[j] - w[i]))
				den += a
			}
			nw := num / den
			if d := nw - w[i]; d != 0 {
				for _, j := range list[lo:hi] {
					pred[j] += d
				}
				w[i] = nw
			}
		}
	}
	return w
}
