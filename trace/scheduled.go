package trace

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Period is the half-open interval [Start, End).
type Period struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Contains reports whether t is in the period.
func (p Period) Contains(t time.Time) bool { return !t.Before(p.Start) && t.Before(p.End) }

// Periods returns the period of the given length that ends at end, and the
// one just before it (e.g. end = today 00:00 and 24h for a daily review,
// 7·24h for a weekly one).
func Periods(end time.Time, length time.Duration) (current, previous Period) {
	current = Period{Start: end.Add(-length), End: end}
	previous = Period{Start: end.Add(-2 * length), End: end.Add(-length)}
	return current, previous
}

// ScheduleConfig configures the scheduled review.
type ScheduleConfig struct {
	// MinTraces in both periods for a trend to have a direction
	// (default 3).
	MinTraces int `toml:"min_traces" json:"min_traces"`
	// TrendDelta: a change of the success rate at least this large is
	// "up" or "down" (default 0.1).
	TrendDelta float64 `toml:"trend_delta" json:"trend_delta"`
	// TopPatterns listed (default 10).
	TopPatterns int `toml:"top_patterns" json:"top_patterns"`
}

// DefaultScheduleConfig returns the defaults documented on ScheduleConfig.
func DefaultScheduleConfig() ScheduleConfig {
	return ScheduleConfig{MinTraces: 3, TrendDelta: 0.1, TopPatterns: 10}
}

// Validate checks the ranges.
func (c ScheduleConfig) Validate() error {
	switch {
	case c.MinTraces < 1:
		return invalid(ErrInvalidConfig, "schedule", "min_traces", "is %d, want ≥ 1", c.MinTraces)
	case math.IsNaN(c.TrendDelta) || c.TrendDelta < 0 || c.TrendDelta > 1:
		return invalid(ErrInvalidConfig, "schedule", "trend_delta", "is %v, want 0..1", c.TrendDelta)
	case c.TopPatterns < 1:
		return invalid(ErrInvalidConfig, "schedule", "top_patterns", "is %d, want ≥ 1", c.TopPatterns)
	}
	return nil
}

// Trend directions.
const (
	TrendUp           = "up"
	TrendDown         = "down"
	TrendFlat         = "flat"
	TrendInsufficient = "insufficient" // too few traces to tell
)

// Trend is the success rate of a skill, artifact or methodology in the
// current period against the previous one.
type Trend struct {
	ID        string  `json:"id"`
	Current   Rate    `json:"current"`
	Previous  Rate    `json:"previous"`
	Delta     float64 `json:"delta"`
	Direction string  `json:"direction"`
	// Weight is the smoothed success rate of the current period,
	// (successes+1)/(total+2): the new weight of the skill or methodology
	// (seed: 更新 Skill/Methodology 权重).
	Weight float64 `json:"weight"`
	// Recovered chains and mean attempts per trace in the current period
	// (skills and methodologies).
	Recovered    int     `json:"recovered,omitempty"`
	MeanAttempts float64 `json:"mean_attempts,omitempty"`
}

// PatternFrequency is a failure pattern and how often it occurred in the
// current period.
type PatternFrequency struct {
	PatternID    string `json:"pattern_id"`
	SkillID      string `json:"skill_id"`
	ErrorType    string `json:"error_type"`
	Condition    string `json:"condition"`
	SuggestedFix string `json:"suggested_fix,omitempty"`
	Count        int    `json:"count"`
	Total        int    `json:"total"`
}

// ErrorFrequency is a failure that no pattern covers yet (it never led to a
// recovered chain), by error type and signature.
type ErrorFrequency struct {
	SkillID   string `json:"skill_id"`
	ErrorType string `json:"error_type"`
	Signature string `json:"signature"`
	Example   string `json:"example"`
	Count     int    `json:"count"`
}

// Suggestion is an improvement the review proposes.
type Suggestion struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Text   string `json:"text"`
}

// Suggestion kinds.
const (
	SuggestSkillDeclining       = "skill_declining"
	SuggestNeedsPerson          = "needs_person"
	SuggestFrequentPattern      = "frequent_pattern"
	SuggestUnlearnedFailure     = "unlearned_failure"
	SuggestMethodologyEffective = "methodology_effective"
	SuggestMethodologyWeak      = "methodology_weak"
	SuggestArtifactDeclining    = "artifact_declining"
)

// Totals counts the current period's closed traces.
type Totals struct {
	Traces    int `json:"traces"`
	Succeeded int `json:"succeeded"`
	Recovered int `json:"recovered"`
	GaveUp    int `json:"gave_up"`
	Attempts  int `json:"attempts"`
}

// ScheduledReviewResult is the outcome of a scheduled review.
type ScheduledReviewResult struct {
	Current       Period             `json:"current"`
	Previous      Period             `json:"previous"`
	Totals        Totals             `json:"totals"`
	Skills        []Trend            `json:"skills"`
	Artifacts     []Trend            `json:"artifacts"`
	Methodologies []Trend            `json:"methodologies"`
	Patterns      []PatternFrequency `json:"patterns"`
	Unlearned     []ErrorFrequency   `json:"unlearned"`
	NeedsPerson   []string           `json:"needs_person"`
	Suggestions   []Suggestion       `json:"suggestions"`
}

type rateAcc struct {
	ok, total, recovered, attempts int
}

func (a *rateAcc) add(ok bool, recovered bool, attempts int) {
	a.total++
	if ok {
		a.ok++
	}
	if recovered {
		a.recovered++
	}
	a.attempts += attempts
}

// ReviewPeriod runs the scheduled review (seed: 定时复盘) over traces:
// success-rate trends per skill, per artifact (attempts that activated it)
// and per methodology (the decomposition strategies attached to traces),
// the most frequent failure patterns of the current period, failures no
// pattern covers, skills that need a person, and suggestions. Traces belong
// to the period of their CreatedAt; open traces are left out. The result is
// a pure function of its inputs, ordered deterministically: reviewing the
// same period twice gives the same result.
func ReviewPeriod(traces []ExecutionTrace, patterns []FailurePattern, current, previous Period, cfg ScheduleConfig) (ScheduledReviewResult, error) {
	if err := cfg.Validate(); err != nil {
		return ScheduledReviewResult{}, err
	}
	for name, p := range map[string]Period{"current": current, "previous": previous} {
		if !p.End.After(p.Start) {
			return ScheduledReviewResult{}, invalid(ErrInvalidPeriod, "review", name, "end %s is not after start %s", p.End.Format(time.RFC3339), p.Start.Format(time.RFC3339))
		}
	}
	for i := range traces {
		if err := traces[i].Validate(); err != nil {
			return ScheduledReviewResult{}, err
		}
	}
	ix := NewPatternIndex(patterns)
	res := ScheduledReviewResult{Current: current, Previous: previous}
	skills := [2]map[string]*rateAcc{{}, {}}
	arts := [2]map[string]*rateAcc{{}, {}}
	meths := [2]map[string]*rateAcc{{}, {}}
	get := func(m map[string]*rateAcc, k string) *rateAcc {
		a := m[k]
		if a == nil {
			a = &rateAcc{}
			m[k] = a
		}
		return a
	}
	patternCount := map[string]int{}
	unlearned := map[string]*ErrorFrequency{}
	needs := map[string]bool{}
	for i := range traces {
		t := &traces[i]
		if t.Open {
			continue
		}
		p := -1
		switch {
		case current.Contains(t.CreatedAt):
			p = 0
		case previous.Contains(t.CreatedAt):
			p = 1
		default:
			continue
		}
		get(skills[p], t.SkillID).add(t.FinalSuccess, t.Recovered(), len(t.Attempts))
		for _, s := range t.Strategies {
			get(meths[p], s).add(t.FinalSuccess, t.Recovered(), len(t.Attempts))
		}
		for _, a := range t.Attempts {
			for _, art := range a.ActivatedArtifacts {
				get(arts[p], art).add(a.Success, false, 1)
			}
		}
		if p != 0 {
			continue
		}
		res.Totals.Traces++
		res.Totals.Attempts += len(t.Attempts)
		if t.FinalSuccess {
			res.Totals.Succeeded++
		} else {
			res.Totals.GaveUp++
			needs[t.SkillID] = true
		}
		if t.Recovered() {
			res.Totals.Recovered++
		}
		// failures of the period, by pattern (once per trace and pattern)
		counted := map[string]bool{}
		for _, a := range t.Attempts {
			if a.Success {
				continue
			}
			sigs, typ, _ := errorIdentity(a)
			matched := false
			for _, fp := range ix.BySignature(sigs) {
				if fp.SkillID != t.SkillID {
					continue
				}
				matched = true
				if !counted[fp.ID] {
					counted[fp.ID] = true
					patternCount[fp.ID]++
				}
			}
			if !matched {
				key := t.SkillID + "\x00" + primarySignature(sigs)
				if !counted[key] {
					counted[key] = true
					u := unlearned[key]
					if u == nil {
						u = &ErrorFrequency{SkillID: t.SkillID, ErrorType: typ, Signature: primarySignature(sigs), Example: firstLine(a.Error, 300)}
						unlearned[key] = u
					}
					u.Count++
				}
			}
		}
	}
	res.Skills = trends(skills, cfg)
	res.Artifacts = trends(arts, cfg)
	res.Methodologies = trends(meths, cfg)
	for id, n := range patternCount {
		for _, fp := range ix.patterns {
			if fp.ID == id {
				res.Patterns = append(res.Patterns, PatternFrequency{PatternID: fp.ID, SkillID: fp.SkillID, ErrorType: fp.ErrorType,
					Condition: fp.Condition, SuggestedFix: fp.SuggestedFix, Count: n, Total: fp.Frequency})
				break
			}
		}
	}
	sort.Slice(res.Patterns, func(i, j int) bool {
		a, b := res.Patterns[i], res.Patterns[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.PatternID < b.PatternID
	})
	if len(res.Patterns) > cfg.TopPatterns {
		res.Patterns = res.Patterns[:cfg.TopPatterns]
	}
	for _, k := range sortedKeys(unlearned) {
		res.Unlearned = append(res.Unlearned, *unlearned[k])
	}
	sort.SliceStable(res.Unlearned, func(i, j int) bool { return res.Unlearned[i].Count > res.Unlearned[j].Count })
	if len(res.Unlearned) > cfg.TopPatterns {
		res.Unlearned = res.Unlearned[:cfg.TopPatterns]
	}
	res.NeedsPerson = sortedKeys(needs)
	res.Suggestions = suggestions(&res, cfg)
	return res, nil
}

func trends(acc [2]map[string]*rateAcc, cfg ScheduleConfig) []Trend {
	ids := map[string]bool{}
	for _, m := range acc {
		for k := range m {
			ids[k] = true
		}
	}
	var out []Trend
	for _, id := range sortedKeys(ids) {
		cur, prev := acc[0][id], acc[1][id]
		if cur == nil {
			cur = &rateAcc{}
		}
		if prev == nil {
			prev = &rateAcc{}
		}
		t := Trend{ID: id, Current: NewRate(cur.ok, cur.total), Previous: NewRate(prev.ok, prev.total),
			Weight: float64(cur.ok+1) / float64(cur.total+2), Recovered: cur.recovered}
		if cur.total > 0 {
			t.MeanAttempts = math.Round(float64(cur.attempts)/float64(cur.total)*100) / 100
		}
		t.Delta = math.Round((t.Current.Rate-t.Previous.Rate)*1e6) / 1e6
		switch {
		case cur.total < cfg.MinTraces || prev.total < cfg.MinTraces:
			t.Direction = TrendInsufficient
		case t.Delta >= cfg.TrendDelta:
			t.Direction = TrendUp
		case t.Delta <= -cfg.TrendDelta:
			t.Direction = TrendDown
		default:
			t.Direction = TrendFlat
		}
		out = append(out, t)
	}
	return out
}

func suggestions(r *ScheduledReviewResult, cfg ScheduleConfig) []Suggestion {
	var out []Suggestion
	for _, t := range r.Skills {
		if t.Direction == TrendDown {
			out = append(out, Suggestion{Kind: SuggestSkillDeclining, Target: t.ID,
				Text: fmt.Sprintf("Success rate of %s fell from %.0f%% to %.0f%%: review its instructions and recent failures", t.ID, 100*t.Previous.Rate, 100*t.Current.Rate)})
		}
	}
	for _, id := range r.NeedsPerson {
		out = append(out, Suggestion{Kind: SuggestNeedsPerson, Target: id, Text: fmt.Sprintf("%s had chains that failed every attempt: a person should look", id)})
	}
	for _, p := range r.Patterns {
		if p.Count < 2 {
			continue
		}
		text := fmt.Sprintf("%s occurred %d times this period (%d in all)", p.Condition, p.Count, p.Total)
		if p.SuggestedFix != "" {
			text += "; add the fix to the skill's instructions: " + p.SuggestedFix
		}
		out = append(out, Suggestion{Kind: SuggestFrequentPattern, Target: p.PatternID, Text: text})
	}
	for _, u := range r.Unlearned {
		if u.Count < 2 {
			continue
		}
		out = append(out, Suggestion{Kind: SuggestUnlearnedFailure, Target: u.SkillID,
			Text: fmt.Sprintf("%s failed %d times with %s and no known fix: %s", u.SkillID, u.Count, u.ErrorType, u.Example)})
	}
	for _, m := range r.Methodologies {
		if m.Current.Total < cfg.MinTraces {
			continue
		}
		switch {
		case m.Current.Low >= 0.6:
			out = append(out, Suggestion{Kind: SuggestMethodologyEffective, Target: m.ID,
				Text: fmt.Sprintf("%s works: %d/%d traces succeeded (95%% CI %.0f–%.0f%%); raise its weight to %.2f", m.ID, m.Current.Successes, m.Current.Total, 100*m.Current.Low, 100*m.Current.High, m.Weight)})
		case m.Current.High <= 0.4:
			out = append(out, Suggestion{Kind: SuggestMethodologyWeak, Target: m.ID,
				Text: fmt.Sprintf("%s struggles: %d/%d traces succeeded (95%% CI %.0f–%.0f%%); lower its weight to %.2f", m.ID, m.Current.Successes, m.Current.Total, 100*m.Current.Low, 100*m.Current.High, m.Weight)})
		}
	}
	for _, a := range r.Artifacts {
		if a.Direction == TrendDown {
			out = append(out, Suggestion{Kind: SuggestArtifactDeclining, Target: a.ID,
				Text: fmt.Sprintf("Artifact %s succeeds less: %.0f%% → %.0f%%", a.ID, 100*a.Previous.Rate, 100*a.Current.Rate)})
		}
	}
	return out
}
