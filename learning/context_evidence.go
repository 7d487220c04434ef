package learning

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// evidence is a candidate's decayed, credited uses: s successes of n over
// every indexed outcome, ls of ln over the similar ones.
type evidence struct{ s, n, ls, ln float64 }

// evidenceScratch is reusable memory for contextEvidence (nil: allocate).
type evidenceScratch struct {
	ev                []evidence
	decay, seen, rate []float64
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
	local := make(map[int]float64, len(neighbors)) // event index → how much it counts
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
	localOrder := make([]int, 0, len(neighbors))
	for _, n := range neighbors {
		localOrder = append(localOrder, n.Index)
	}
	slices.Sort(localOrder)
	// Per event, once: its age weight.
	decay := growTo(sc.decay, len(events))
	sc.decay = decay
	for k, e := range events {
		decay[k] = 1
		if age := now.Sub(e.At).Hours() / 24; age > 0 && c.HalfLifeDays > 0 {
			decay[k] = math.Exp2(-age / c.HalfLifeDays)
		}
		if cc.ProjectHalfLife > 0 {
			decay[k] *= math.Exp2(-float64(len(events)-1-k) / cc.ProjectHalfLife)
		}
	}
	kappa := cc.PriorStrength
	if kappa == 0 {
		kappa = x.AutoPriorStrength()
	}
	y := func(k int) float64 {
		if events[k].Success {
			return 1
		}
		return 0
	}
	seen := growTo(sc.seen, ncands) // recency weight of the next older use
	sc.seen = seen
	estimate := func(credit func(k, i int) float64) {
		clear(ev)
		for i := range seen {
			seen[i] = 1
		}
		for k := len(events) - 1; k >= 0; k-- {
			for _, i := range pats[k] {
				w := seen[i] * decay[k] * credit(k, i)
				seen[i] *= gamma
				ev[i].n += w
				ev[i].s += w * y(k)
			}
		}
		for i := range seen {
			seen[i] = 1
		}
		for j := len(localOrder) - 1; j >= 0; j-- {
			k := localOrder[j]
			for _, i := range pats[k] {
				w := local[k] * seen[i] * decay[k] * credit(k, i)
				seen[i] *= gamma
				ev[i].ln += w
				ev[i].ls += w * y(k)
			}
		}
	}
	estimate(func(int, int) float64 { return 1 })
	if cc.Credit == "blame" {
		rate := growTo(sc.rate, ncands)
		sc.rate = rate
		for i := range rate {
			rate[i] = (ev[i].s + 1) / (ev[i].n + 2)
			if ev[i].ln > 0 {
				m := rate[i]
				rate[i] = (kappa*m + ev[i].ls) / (kappa + ev[i].ln)
			}
		}
		estimate(func(k, i int) float64 {
			if len(pats[k]) < 2 {
				return 1
			}
			// The outcome came from one of its patterns; each is
			// responsible by its likelihood of that result. Scaled so an
			// outcome carries as much evidence in all as with equal credit.
			lik := func(j int) float64 {
				if events[k].Success {
					return rate[j]
				}
				return 1 - rate[j]
			}
			sum := 0.0
			for _, j := range pats[k] {
				sum += lik(j)
			}
			if sum <= 0 {
				return 1
			}
			return float64(len(pats[k])) * lik(i) / sum
		})
	}
	return ev, kappa
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
