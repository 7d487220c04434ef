package recalleval

import (
	"math"

	"github.com/kaizenhq/kaizen/experience"
)

// Ranked is one heuristic a recall ranked: its topic similarity (the
// cosine) and whether the query's labels call it relevant.
type Ranked struct {
	Topic    float64 `json:"topic"`
	Relevant bool    `json:"relevant"`
	// ID is the heuristic's id.
	ID string `json:"id,omitempty"`
	// TriggerTopic is the cosine of the query and the heuristic's trigger
	// alone (experience.RecallCalibration.MinTriggerTopic); nil when the
	// evaluation did not know the trigger (the check then passes).
	TriggerTopic *float64 `json:"trigger_topic,omitempty"`
}

// QueryResult is one query's ranking, best first.
type QueryResult struct {
	ID     string   `json:"id"`
	Type   string   `json:"type"`
	Answer bool     `json:"answerable"`
	Ranked []Ranked `json:"ranked"`
}

// Simulated is what an abstention would inject over a set of rankings.
type Simulated struct {
	Calibration experience.RecallCalibration `json:"calibration"`
	// InjectedHit: answerable queries with a relevant lesson injected.
	InjectedHit float64 `json:"injected_hit"`
	// InjectedRelevant: the relevant share of injected lessons.
	InjectedRelevant float64 `json:"injected_relevant"`
	// FalseInjection: no-answer queries with anything injected.
	FalseInjection float64 `json:"false_injection"`
}

// Simulate applies an abstention to rankings, injecting at most max
// lessons per query (the filter's max_heuristics), as Engine.Recall does
// without live signals.
func Simulate(results []QueryResult, c experience.RecallCalibration, max int) Simulated {
	s := Simulated{Calibration: c}
	var answerable, noAnswer, hit, falseInj, injected, relevant int
	for _, r := range results {
		best, second := 0.0, 0.0
		for _, it := range r.Ranked {
			if it.Topic > best {
				best, second = it.Topic, best
			} else if it.Topic > second {
				second = it.Topic
			}
		}
		n, rel := 0, 0
		for _, it := range r.Ranked {
			if n == max {
				break
			}
			if c.Passes(it.Topic, 0, best, second, 0) && (it.TriggerTopic == nil || c.TriggerPasses(it.Topic, *it.TriggerTopic)) {
				n++
				if it.Relevant {
					rel++
				}
			}
		}
		injected += n
		relevant += rel
		if r.Answer {
			answerable++
			if rel > 0 {
				hit++
			}
		} else {
			noAnswer++
			if n > 0 {
				falseInj++
			}
		}
	}
	if answerable > 0 {
		s.InjectedHit = float64(hit) / float64(answerable)
	}
	if noAnswer > 0 {
		s.FalseInjection = float64(falseInj) / float64(noAnswer)
	}
	if injected > 0 {
		s.InjectedRelevant = float64(relevant) / float64(injected)
	}
	return s
}

// Calibrate chooses the abstention for a set of rankings (the dev
// splits): on a grid of MinTopic (0.10 … 0.60 by 0.01) and Relative
// (0.50 … 0.80 by 0.05: near 1 only the single closest item of a recall,
// of any kind, would ever be injected, defeating the seed's budget of
// several heuristics and memories), the one with the most answerable queries served
// a relevant lesson among those with false injection at most maxFalse;
// ties go to the higher relevant share, then the lower thresholds. The
// grid and the order are fixed, so the choice is reproducible.
func Calibrate(results []QueryResult, max int, maxFalse float64) Simulated {
	return calibrate(results, max, maxFalse, 0, false)
}

// CalibrateRelevant is Calibrate with a second constraint: the relevant
// share of what is injected must reach minRelevant (issue 18: relevant or
// nothing, at least 0.8 of injected lessons relevant). Ties in coverage go
// to the lower Relative first (it gates skills and memories too, which the
// labelled sets do not measure), then to the higher relevant share. When
// no point of the grid meets both constraints it returns the one
// Calibrate returns (and the caller sees the shortfall in
// InjectedRelevant).
func CalibrateRelevant(results []QueryResult, max int, maxFalse, minRelevant float64) Simulated {
	return calibrate(results, max, maxFalse, minRelevant, false)
}

// MinRelevantDev is the relevant share of injected lessons the
// abstention must reach on the dev splits. The issue asks 0.8 on unseen
// queries; the dev point chosen at 0.8 (0.84 on dev) gave 0.70 on the
// independent holdout, the usual optimism of the best point of a grid, so
// the calibration asks 0.9 of dev to leave a margin.
const MinRelevantDev = 0.9

// TriggerTopicGrid and TriggerCheckBelowGrid are the grids of
// RecallCalibration.MinTriggerTopic (0: the check off) and
// TriggerCheckBelow (0: the check for every topic) that CalibrateTrigger
// searches.
var (
	TriggerTopicGrid      = []float64{0, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50}
	TriggerCheckBelowGrid = []float64{0.60, 0.65, 0.70, 0}
)

// triggerCheck is one point of the trigger check's grids.
type triggerCheck struct{ min, below float64 }

// CalibrateTrigger is CalibrateRelevant with the trigger check
// (RecallCalibration.MinTriggerTopic and TriggerCheckBelow) on the grid
// too: for each point of TriggerTopicGrid × TriggerCheckBelowGrid the best
// point as CalibrateRelevant chooses it, and of those the one serving the
// most answerable queries while meeting both constraints; ties go to the
// earlier point (the check off, then the smaller floor, then the check
// limited to the lower topics). The rankings must carry TriggerTopic.
func CalibrateTrigger(results []QueryResult, max int, maxFalse, minRelevant float64) Simulated {
	var best Simulated
	found := false
	for _, tt := range TriggerTopicGrid {
		for _, below := range TriggerCheckBelowGrid {
			if tt == 0 && below != 0 {
				continue
			}
			s, ok := calibrateGrid(results, max, maxFalse, minRelevant, false, triggerCheck{tt, below})
			if ok && (!found || s.InjectedHit > best.InjectedHit+1e-9) {
				best, found = s, true
			}
		}
	}
	if !found {
		return CalibrateRelevant(results, max, maxFalse, minRelevant)
	}
	return best
}

// CalibrateTriggerAt is CalibrateRelevant with the trigger check fixed
// (the zero Simulated when no grid point meets both constraints).
func CalibrateTriggerAt(results []QueryResult, max int, maxFalse, minRelevant, minTriggerTopic, below float64) Simulated {
	s, _ := calibrateGrid(results, max, maxFalse, minRelevant, false, triggerCheck{minTriggerTopic, below})
	return s
}

// CalibrateLead is Calibrate with the stand-out rule on the grid too
// (RecallCalibration.Lead: off, then 0.20 … 0.08 by 0.01; LeadFloor 0.40 …
// 0.25 by 0.05); ties go to the lead rule off, then the larger lead and
// floor. It was measured, not adopted: on the dev splits it served 0.42
// of answerable queries against 0.27 at false injection 0.05, but on the
// holdout splits false injection rose above 0.1 (docs/experience.md).
func CalibrateLead(results []QueryResult, max int, maxFalse float64) Simulated {
	return calibrate(results, max, maxFalse, 0, true)
}

func calibrate(results []QueryResult, max int, maxFalse, minRelevant float64, lead bool) Simulated {
	if minRelevant > 0 {
		if s, ok := calibrateGrid(results, max, maxFalse, minRelevant, lead, triggerCheck{}); ok {
			return s
		}
	}
	s, _ := calibrateGrid(results, max, maxFalse, 0, lead, triggerCheck{})
	return s
}

func calibrateGrid(results []QueryResult, max int, maxFalse, minRelevant float64, lead bool, check triggerCheck) (Simulated, bool) {
	var best Simulated
	found := false
	leads := []int{0}
	for l := 20; lead && l >= 8; l-- {
		leads = append(leads, l)
	}
	for _, ld := range leads {
		floors := []int{40, 35, 30, 25}
		if ld == 0 {
			floors = []int{0}
		}
		for _, fl := range floors {
			for mt := 10; mt <= 60; mt++ {
				for rl := 50; rl <= 80; rl += 5 {
					c := experience.RecallCalibration{MinTopic: float64(mt) / 100, Relative: float64(rl) / 100,
						Lead: float64(ld) / 100, LeadFloor: float64(fl) / 100,
						MinTriggerTopic: check.min, TriggerCheckBelow: check.below}
					s := Simulate(results, c, max)
					if s.FalseInjection > maxFalse+1e-9 || s.InjectedRelevant < minRelevant-1e-9 {
						continue
					}
					tie := math.Abs(s.InjectedHit-best.InjectedHit) <= 1e-9
					switch {
					case !found || s.InjectedHit > best.InjectedHit+1e-9:
						best, found = s, true
					case tie && minRelevant > 0 && c.Relative < best.Calibration.Relative-1e-9:
						// relative also gates skills and memories, which
						// the sets do not measure: raise it only for
						// more coverage
						best = s
					case tie && (minRelevant == 0 || math.Abs(c.Relative-best.Calibration.Relative) <= 1e-9) &&
						s.InjectedRelevant > best.InjectedRelevant+1e-9:
						best = s
					}
				}
			}
		}
	}
	return best, found
}

// PairSimilarity is one dedup pair's label, the cosine of its two
// lessons' heuristic texts and whether their kinds match (the writer
// appends only within a kind).
type PairSimilarity struct {
	Label    string
	Cosine   float64
	SameKind bool
}

// DecideMerge is the writer's decision for the second lesson of a pair.
func DecideMerge(p PairSimilarity, t experience.MergeCalibration) experience.EvidenceAction {
	d := experience.DecideMerge(p.Cosine, "first", t)
	if d.Action == experience.EvidenceAppend && !p.SameKind {
		return experience.EvidenceCreated
	}
	return d.Action
}

// FoldCost is how many right decisions one unrelated pair merged or
// appended costs in CalibrateMerge: folding a distinct lesson into another
// loses it from recall, which is far worse than keeping a duplicate apart.
const FoldCost = 5

// CalibrateMerge chooses merge thresholds for pair similarities (the dev
// splits): on a grid of Update and Append (0.10 … 0.95 by 0.01), the most
// right decisions (Right) less FoldCost per unrelated pair folded; ties go
// to the higher thresholds. The grid and the order are fixed, so the
// choice is reproducible.
func CalibrateMerge(pairs []PairSimilarity) (experience.MergeCalibration, int, int) {
	var best experience.MergeCalibration
	bestRight, bestFolded, bestGain := -1, 0, math.MinInt
	for u := 95; u >= 10; u-- {
		for a := u; a >= 10; a-- {
			t := experience.MergeCalibration{Update: float64(u) / 100, Append: float64(a) / 100}
			right, folded := 0, 0
			for _, p := range pairs {
				act := DecideMerge(p, t)
				if Right(p.Label, act) {
					right++
				}
				if p.Label == "unrelated" && act != experience.EvidenceCreated {
					folded++
				}
			}
			if gain := right - FoldCost*folded; gain > bestGain {
				best, bestRight, bestFolded, bestGain = t, right, folded, gain
			}
		}
	}
	return best, bestRight, bestFolded
}
