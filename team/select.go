package team

import (
	"cmp"
	"slices"
	"strings"
)

// SelectPatterns applies the seed's selectCollaborationPattern rules:
//
//	CP-1 always (the base)
//	riskLevel high                        → CP-4
//	complexity High and taskType feature  → CP-6
//	taskType review or test               → CP-2
//	hasExpert and complexity not Low      → CP-8
//	CP-10 always (last)
//
// Values compare case-insensitively (the seed writes 'High' for complexity
// and 'high' for risk). teamSize is part of the seed's context but no rule
// uses it; it is kept for the learned recommendation.
func SelectPatterns(taskType, complexity, riskLevel string, teamSize int, hasExpert bool) []PatternID {
	_ = teamSize
	eq := strings.EqualFold
	out := []PatternID{CP1}
	if eq(riskLevel, "high") {
		out = append(out, CP4)
	}
	if eq(complexity, "high") && eq(taskType, "feature") {
		out = append(out, CP6)
	}
	if eq(taskType, "review") || eq(taskType, "test") {
		out = append(out, CP2)
	}
	if hasExpert && !eq(complexity, "low") {
		out = append(out, CP8)
	}
	return append(out, CP10)
}

// PatternStats is the past outcomes of one pattern in a context.
type PatternStats struct {
	Pattern   PatternID `json:"pattern"`
	Runs      int       `json:"runs"`
	Successes int       `json:"successes"` // outcome success (degraded counts half, see RankPatterns)
	Degraded  int       `json:"degraded"`
}

// Ranked is one pattern of a learned ranking.
type Ranked struct {
	Pattern PatternID `json:"pattern"`
	Score   float64   `json:"score"`
	Runs    int       `json:"runs"`
}

// Recommender ranks patterns from their past outcomes. It is the hook for a
// learned recommendation; RankPatterns is the default. A service may plug in
// a bandit (Thompson sampling over the same counts).
type Recommender func(stats []PatternStats) []Ranked

// RankPatterns is the default Recommender: the posterior mean of a
// Beta(1,1) prior updated with the outcomes, where a degraded run counts as
// half a success: (successes + degraded/2 + 1) / (runs + 2). Unseen
// patterns score 0.5. Ties go to the pattern with more runs, then to the
// lower pattern number. Deterministic.
func RankPatterns(stats []PatternStats) []Ranked {
	out := make([]Ranked, 0, len(stats))
	for _, s := range stats {
		if s.Runs < 0 || s.Successes < 0 || s.Degraded < 0 || s.Successes+s.Degraded > s.Runs {
			continue
		}
		score := (float64(s.Successes) + float64(s.Degraded)/2 + 1) / (float64(s.Runs) + 2)
		out = append(out, Ranked{Pattern: s.Pattern, Score: score, Runs: s.Runs})
	}
	slices.SortFunc(out, func(a, b Ranked) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Runs, a.Runs); c != 0 {
			return c
		}
		return cmp.Compare(slices.Index(Patterns, a.Pattern), slices.Index(Patterns, b.Pattern))
	})
	return out
}

// Selection is the seed's rule-based selection with a learned ranking beside it.
type Selection struct {
	Patterns []PatternID `json:"patterns"` // the seed's rules: authoritative
	Ranking  []Ranked    `json:"ranking"`  // advisory: past outcomes of every pattern
}

// Select runs SelectPatterns and ranks all patterns with rec (RankPatterns
// when nil). The ranking is advice shown next to the rules' choice; it never
// removes CP-1 or CP-10.
func Select(taskType, complexity, riskLevel string, teamSize int, hasExpert bool, stats []PatternStats, rec Recommender) Selection {
	if rec == nil {
		rec = RankPatterns
	}
	return Selection{Patterns: SelectPatterns(taskType, complexity, riskLevel, teamSize, hasExpert), Ranking: rec(stats)}
}
