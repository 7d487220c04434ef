package learning

import (
	"fmt"
	"math"
	"time"
)

// PatternExplanation answers "why is this pattern (not) proven, deprecated
// or inverted" from stored numbers and the thresholds in force.
type PatternExplanation struct {
	Pattern      Pattern            `json:"pattern"`
	Maturity     MaturityEval       `json:"maturity"`
	ManualReason string             `json:"manual_reason,omitempty"`
	Thresholds   map[string]float64 `json:"thresholds"`
	FailureRatio float64            `json:"failure_ratio"`
	Inverted     bool               `json:"inverted"`
	// HelpfulNeeded estimates how many fresh helpful outcomes would make
	// the pattern proven (0 when it is, -1 when it cannot be without reset).
	HelpfulNeeded int      `json:"helpful_needed"`
	Why           []string `json:"why"`
}

// ExplainPattern explains the maturity and inversion state of p, evaluated
// as ev (from Evaluate or EvaluateFromEvents).
func (c Config) ExplainPattern(p Pattern, m Maturity, ev MaturityEval) PatternExplanation {
	mc := c.Maturity
	x := PatternExplanation{
		Pattern: p, Maturity: ev, ManualReason: m.ManualReason,
		Thresholds: map[string]float64{
			"maturity.min_feedback":                mc.MinFeedback,
			"maturity.min_helpful":                 mc.MinHelpful,
			"maturity.max_harmful":                 mc.MaxHarmful,
			"maturity.deprecation_threshold":       mc.DeprecationThreshold,
			"maturity.half_life_days":              mc.HalfLifeDays,
			"maturity.epsilon":                     mc.Epsilon,
			"anti_pattern.min_observations":        float64(c.AntiPattern.MinObservations),
			"anti_pattern.failure_ratio_threshold": c.AntiPattern.FailureRatioThreshold,
		},
		Inverted: p.AntiPatternID != "" || p.Kind == KindAntiPattern,
	}
	if n := p.Observations(); n > 0 {
		x.FailureRatio = float64(p.FailureCount) / float64(n)
	}
	add := func(format string, a ...any) { x.Why = append(x.Why, fmt.Sprintf(format, a...)) }
	date := func(t *time.Time) string {
		if t == nil {
			return "an unknown date"
		}
		return t.UTC().Format(time.RFC3339)
	}
	h, total, ratio := ev.DecayedHelpful, ev.DecayedTotal, ev.HarmfulRatio

	switch {
	case ev.Manual && ev.State == Deprecated:
		add("deprecated manually on %s (%s); a deprecated pattern is excluded (multiplier 0) and cannot be promoted until it is reset", date(m.DeprecatedAt), m.ManualReason)
	case ev.Manual && ev.State == Proven:
		add("promoted to proven manually on %s%s; its feedback alone would make it %s", date(m.PromotedAt), reasonSuffix(m.ManualReason), ev.ComputedState)
	}
	switch ev.ComputedState {
	case Deprecated:
		add("feedback says deprecated: harmful ratio %.3f > %.2f (deprecation_threshold) with decayed total %.3f ≥ %.2f (min_feedback)", ratio, mc.DeprecationThreshold, total, mc.MinFeedback)
	case Candidate:
		add("feedback says candidate: decayed helpful+harmful %.3f < %.2f (min_feedback, tolerance %.2f)", total, mc.MinFeedback, mc.Epsilon)
	case Established:
		if h < mc.MinHelpful-mc.Epsilon {
			add("not proven: decayed helpful %.3f < %.2f (min_helpful)", h, mc.MinHelpful)
		}
		if ratio >= mc.MaxHarmful {
			add("not proven: harmful ratio %.3f ≥ %.2f (max_harmful)", ratio, mc.MaxHarmful)
		}
	case Proven:
		add("feedback says proven: decayed helpful %.3f ≥ %.2f and harmful ratio %.3f < %.2f", h, mc.MinHelpful, ratio, mc.MaxHarmful)
	}
	x.HelpfulNeeded = c.helpfulNeeded(ev)
	if x.Inverted {
		x.HelpfulNeeded = -1 // inversion is sticky: only a reset brings it back
	}
	if x.HelpfulNeeded > 0 {
		add("about %d more helpful outcome(s) recorded now would make it proven", x.HelpfulNeeded)
	} else if x.HelpfulNeeded < 0 {
		add("it cannot return to the ranking without a reset")
	}
	if ev.NeutralCount > 0 {
		add("%d neutral outcome(s) are counted but carry no evidence either way", ev.NeutralCount)
	}
	if !m.LastValidated.IsZero() {
		add("evidence decays with a %.0f-day half-life; newest evidence %s", mc.HalfLifeDays, m.LastValidated.UTC().Format(time.RFC3339))
	}
	if m.ResetAt != nil {
		add("reset on %s: evidence recorded before it no longer counts (generation %d)", date(m.ResetAt), m.Generation)
	}

	n := p.Observations()
	minObs, thr := c.AntiPattern.MinObservations, c.AntiPattern.FailureRatioThreshold
	switch {
	case p.Kind == KindAntiPattern:
		add("this is an anti-pattern of %s: %s", p.SourceID, p.Reason)
	case p.AntiPatternID != "":
		add("inverted into anti-pattern %s: failed %d/%d times (%.0f%%), failure ratio %.3f ≥ %.2f with ≥ %d observations; it stays inverted until reset",
			p.AntiPatternID, p.FailureCount, n, math.Round(x.FailureRatio*100), x.FailureRatio, thr, minObs)
	case n < int64(minObs):
		add("not inverted: %d observation(s) < %d (anti_pattern.min_observations)", n, minObs)
	default:
		add("not inverted: failure ratio %.3f < %.2f (%d/%d failed)", x.FailureRatio, thr, p.FailureCount, n)
	}
	return x
}

// helpfulNeeded is the smallest k such that k fresh helpful events (weight
// 1) make the computed state proven: decayed helpful h+k ≥ min_helpful and
// harmful/(h+k+x) < max_harmful.
func (c Config) helpfulNeeded(ev MaturityEval) int {
	mc := c.Maturity
	if ev.ComputedState == Proven {
		return 0
	}
	if ev.Manual && ev.State == Deprecated {
		return -1
	}
	if mc.MaxHarmful <= 0 && ev.DecayedHarmful > 0 {
		return -1
	}
	for k := 1; k <= 10_000; k++ {
		h := ev.DecayedHelpful + float64(k)
		if mc.StateFor(h, ev.DecayedHarmful) == Proven {
			return k
		}
	}
	return -1
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// CriterionExplanation answers "why is this weight what it is".
type CriterionExplanation struct {
	Weight     CriterionWeight    `json:"weight"`
	Thresholds map[string]float64 `json:"thresholds"`
	Why        []string           `json:"why"`
}

// ExplainCriterion explains a criterion weight.
func (c Config) ExplainCriterion(w CriterionWeight) CriterionExplanation {
	x := CriterionExplanation{Weight: w, Thresholds: map[string]float64{
		"half_life_days":              c.HalfLifeDays,
		"weight_floor":                WeightFloor,
		"min_feedback_for_adjustment": float64(c.MinFeedbackForAdjustment),
		"max_harmful_ratio":           c.MaxHarmfulRatio,
	}}
	add := func(format string, a ...any) { x.Why = append(x.Why, fmt.Sprintf(format, a...)) }
	total := w.HelpfulSum + w.HarmfulSum
	switch {
	case total <= 0:
		add("no helpful or harmful feedback yet: weight 1.0")
	case w.HelpfulSum/total < WeightFloor:
		add("weight = max(%.1f, %.3f / (%.3f + %.3f)) = %.1f: the floor applies", WeightFloor, w.HelpfulSum, w.HelpfulSum, w.HarmfulSum, WeightFloor)
	default:
		add("weight = max(%.1f, %.3f / (%.3f + %.3f)) = %.3f (decayed helpful over decayed helpful+harmful evidence)", WeightFloor, w.HelpfulSum, w.HelpfulSum, w.HarmfulSum, w.RawWeight)
	}
	add("helpful events add their raw score, harmful events add 1 − raw score, each decayed by 0.5^(age/%.0f days)", c.HalfLifeDays)
	n := w.HelpfulCount + w.HarmfulCount
	switch {
	case w.Deprecated:
		add("deprecated: harmful %d/%d = %.3f > %.2f (max_harmful_ratio) with ≥ %d events, so its effective weight is 0",
			w.HarmfulCount, n, w.HarmfulRatio, c.MaxHarmfulRatio, c.MinFeedbackForAdjustment)
	case n < int64(c.MinFeedbackForAdjustment):
		add("cannot be deprecated yet: %d helpful+harmful event(s) < %d", n, c.MinFeedbackForAdjustment)
	default:
		add("not deprecated: harmful ratio %.3f ≤ %.2f", w.HarmfulRatio, c.MaxHarmfulRatio)
	}
	if w.NeutralCount > 0 {
		add("%d neutral event(s) are counted but carry no evidence", w.NeutralCount)
	}
	if w.LastValidated != nil {
		add("last validated %s (the newest helpful or harmful event)", w.LastValidated.UTC().Format(time.RFC3339))
	}
	return x
}
