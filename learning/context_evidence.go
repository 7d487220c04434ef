package learning

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// evidence is a candidate's decayed, credited uses: s successes of n over
// every indexed outcome, ls of ln over the similar ones.
type evidence struct{ s, n, ls, ln float64 }

// evidenceScratch is reusable memory for contextEvidence (nil: allocate).
type evidenceScratch struct {
	ev                       []evidence
	decay, seen, rate, local []float64
	localOrder               []int
	credit, creditS          []float64
	creditStart              []int
	change                   changeScratch
	joint                    jointScratch
}

// evidenceScratches pools Recommend's evidenceScratch (RecommendSet keeps
// one in its own scratch).
var evidenceScratches = sync.Pool{New: func() any { return new(evidenceScratch) }}

// decayBase is, per indexed event, its age weight at the newest event's
// time ref (times its project-recency weight): at any later instant t the
// age weight is 2^(−(t−ref)/half-life) times that, so a request multiplies
// instead of computing an exponential per event. Cached per index and
// half-lives.
type decayBase struct {
	halfLife, projectHalfLife float64
	ref                       time.Time
	base                      []float64
}

func (c Config) decayBase(x *ContextIndex, events []ContextEvent) *decayBase {
	// Cached only for the index's own events.
	own := x != nil && len(x.events) == len(events) && (len(events) == 0 || &x.events[0] == &events[0])
	if own {
		if d := x.decay.Load(); d != nil && d.halfLife == c.HalfLifeDays && d.projectHalfLife == c.Context.ProjectHalfLife {
			return d
		}
	}
	d := &decayBase{halfLife: c.HalfLifeDays, projectHalfLife: c.Context.ProjectHalfLife, base: make([]float64, len(events))}
	for _, e := range events {
		if e.At.After(d.ref) {
			d.ref = e.At
		}
	}
	for k, e := range events {
		d.base[k] = 1
		if age := d.ref.Sub(e.At).Hours() / 24; age > 0 && c.HalfLifeDays > 0 {
			d.base[k] = math.Exp2(-age / c.HalfLifeDays)
		}
		if d.projectHalfLife > 0 {
			d.base[k] *= math.Exp2(-float64(len(events)-1-k) / d.projectHalfLife)
		}
	}
	if own {
		x.decay.Store(d)
	}
	return d
}

// contextEvidence is the evidence of ncands candidates from the indexed
// events (pats[k]: the candidates event k used) and the neighbors of the
// task, with the prior strength: the part of Recommend shared with
// RecommendSet.
func (c Config) contextEvidence(events []ContextEvent, pats [][]int, ncands int, neighbors []Neighbor,
	x *ContextIndex, now time.Time, sc *evidenceScratch) ([]evidence, float64) {
	if sc == nil {
		sc = &evidenceScratch{}
	}
	cc := c.Context
	// local[k] is how much event k counts (0: not similar).
	local := growTo(sc.local, len(events))
	sc.local = local
	clear(local)
	for _, n := range neighbors {
		local[n.Index] = n.Similarity
	}
	// Evidence per candidate: overall (every event) and local (similar
	// events), each use weighted by its recency among the pattern's uses
	// and by the age of the outcome.
	ev := growTo(sc.ev, ncands)
	sc.ev = ev
	gamma := 1.0
	if cc.UseHalfLife > 0 {
		gamma = math.Exp2(-1 / cc.UseHalfLife)
	}
	// A first pass with equal credit estimates each pattern's rate; the
	// second shares each outcome among its patterns by those estimates.
	// Recency counts uses: the project's uses for the overall evidence, the
	// similar tasks' uses for the local one (so that a pattern used often
	// elsewhere keeps its weight in this context).
	localOrder := sc.localOrder[:0]
	for _, n := range neighbors {
		localOrder = append(localOrder, n.Index)
	}
	slices.Sort(localOrder)
	sc.localOrder = localOrder
	// Per event, once: its age weight (from the index's cached weights at
	// its newest event when now is not before it).
	decay := growTo(sc.decay, len(events))
	sc.decay = decay
	if db := c.decayBase(x, events); !now.Before(db.ref) {
		f := 1.0
		if age := now.Sub(db.ref).Hours() / 24; age > 0 && c.HalfLifeDays > 0 {
			f = math.Exp2(-age / c.HalfLifeDays)
		}
		for k := range events {
			decay[k] = db.base[k] * f
		}
	} else {
		for k, e := range events {
			decay[k] = 1
			if age := now.Sub(e.At).Hours() / 24; age > 0 && c.HalfLifeDays > 0 {
				decay[k] = math.Exp2(-age / c.HalfLifeDays)
			}
			if cc.ProjectHalfLife > 0 {
				decay[k] *= math.Exp2(-float64(len(events)-1-k) / cc.ProjectHalfLife)
			}
		}
	}
	kappa := cc.PriorStrength
	if kappa == 0 {
		kappa = x.AutoPriorStrength()
	}
	// cut[i]: candidate i's uses in events older than cut[i] precede a
	// detected change of its rate and are discounted (context_change.go).
	cut := cc.changeCuts(events, pats, ncands, &sc.change)
	discount := cc.ChangeDiscount
	seen := growTo(sc.seen, ncands) // recency weight of the next older use
	sc.seen = seen
	// credit[u] is the share of the u-th use (in the order of pats,
	// flattened) of its outcome; nil: equal credit. With sc.creditS (the
	// "and" credit) the use's success weight is creditS[u] instead of its
	// outcome (credit.go).
	estimate := func(credit []float64) {
		var creditS []float64
		if credit != nil && len(sc.creditS) == len(credit) {
			creditS = sc.creditS
		}
		clear(ev)
		for i := range seen {
			seen[i] = 1
		}
		u := len(credit)
		for k := len(events) - 1; k >= 0; k-- {
			d, ok := decay[k], events[k].Success
			ps := pats[k]
			u -= len(ps)
			for j, i := range ps {
				w := seen[i] * d
				if credit != nil {
					w *= credit[u+j]
				}
				if k < cut[i] {
					w *= discount
				}
				seen[i] *= gamma
				ev[i].n += w
				if creditS != nil {
					ev[i].s += w * creditS[u+j]
				} else if ok {
					ev[i].s += w
				}
			}
		}
		for i := range seen {
			seen[i] = 1
		}
		for j := len(localOrder) - 1; j >= 0; j-- {
			k := localOrder[j]
			lw, d, ok := local[k], decay[k], events[k].Success
			var cr, crS []float64
			if credit != nil {
				at := sc.creditAt(pats, k)
				cr = credit[at:]
				if creditS != nil {
					crS = creditS[at:]
				}
			}
			for jj, i := range pats[k] {
				w := lw * seen[i] * d
				if cr != nil {
					w *= cr[jj]
				}
				if k < cut[i] {
					w *= discount
				}
				seen[i] *= gamma
				ev[i].ln += w
				if crS != nil {
					ev[i].ls += w * crS[jj]
				} else if ok {
					ev[i].ls += w
				}
			}
		}
	}
	estimate(nil)
	if cc.Credit == CreditJoint {
		sc.jointCredit(events, pats, ev, decay, local, localOrder, gamma)
	} else if cc.Credit != CreditEqual {
		for range max(cc.CreditIterations, 1) {
			sc.creditFromRates(cc.Credit, events, pats, ev, kappa)
			estimate(sc.credit)
		}
	}
	return ev, kappa
}

// creditAt is the position of event k's first use in the flattened
// credits (computed once per estimate from the pattern counts).
func (sc *evidenceScratch) creditAt(pats [][]int, k int) int {
	if len(sc.creditStart) != len(pats)+1 {
		sc.creditStart = growTo(sc.creditStart, len(pats)+1)
		sc.creditStart[0] = 0
		for j, ps := range pats {
			sc.creditStart[j+1] = sc.creditStart[j] + len(ps)
		}
	}
	return sc.creditStart[k]
}

// similarPast finds the past tasks similar to the request's (none when it
// names no task, tags or kind) and the task kind they were matched on
// ("" unless kinds are inferred or the request names one).
func (c Config) similarPast(req GuidanceRequest, x *ContextIndex) (string, []Neighbor) {
	cc := c.Context
	if strings.TrimSpace(req.Task) == "" && len(req.Tags) == 0 && req.Kind == "" {
		return "", nil
	}
	o := SimilarOptions{K: cc.Neighbors, MinSim: cc.MinSimilarity, Sharpness: cc.Sharpness, CrossKind: 1}
	var kind string
	if cc.InferKind || req.Kind != "" {
		kind = cmp.Or(req.Kind, InferKind(req.Task))
		o.Kind, o.KindWeight, o.CrossKind = kind, cc.KindWeight, cc.CrossKind
	}
	return kind, x.Similar(req.Task, req.Tags, o)
}

// drawnFirstReason says why thompson sampling put a less proven pattern
// first (the recommendation's explore item).
func drawnFirstReason(inverted bool) string {
	if inverted {
		return "an anti-pattern project-wide whose evidence has aged and is uncertain again: re-testing it tells whether it still fails"
	}
	return "drawn first from its uncertain rate: trying it teaches the most"
}

// appendSimilarTasks lists the past tasks behind a ranking, at most 10.
func appendSimilarTasks(out []SimilarTask, neighbors []Neighbor, events []ContextEvent) []SimilarTask {
	for _, n := range neighbors {
		if len(out) == 10 {
			break
		}
		e := events[n.Index]
		out = append(out, SimilarTask{OutcomeID: e.OutcomeID, TaskID: e.TaskID,
			Task: excerptLine(e.Task, 160), Similarity: round4(n.Similarity), Success: e.Success, Patterns: slices.Clone(e.Patterns)})
	}
	return out
}
