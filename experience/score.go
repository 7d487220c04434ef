package experience

import (
	"math"
	"time"
)

// The quality weight's table (seed 001), in hundredths so that the sum is
// exact: 50 + 20 + 15 + 10 + 5 = 100 is 1.0, not 0.9999999999999999.
const (
	qualityBase            = 50 // every heuristic
	qualityEstablished     = 20 // status active or refined
	qualitySupport3        = 15 // SupportTasks ≥ 3
	qualitySupport5        = 10 // SupportTasks ≥ 5 (on top of the previous)
	qualityRecentlyChecked = 5  // LastValidatedAt within ValidatedWithinDays
	qualityMax             = 100
)

// QualityWeight is the seed's quality weight of a heuristic, in [0.5, 1]:
//
//	base 0.5
//	+ 0.2  if the status is active or refined
//	+ 0.15 if SupportTasks ≥ 3
//	+ 0.10 if SupportTasks ≥ 5
//	+ 0.05 if LastValidatedAt is within l.ValidatedWithinDays of now
//	= min(1.0, total)
//
// "Within" is inclusive: validated exactly ValidatedWithinDays (7) days
// before now still counts, a nanosecond more does not. A LastValidatedAt
// in the future counts as now; a nil one, or a window that is negative or
// NaN, never counts. The sum is computed in integer hundredths and divided
// once, so every result is the double nearest to its decimal value
// (0.5, 0.55, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1): exact and the same
// on every platform.
func QualityWeight(h Heuristic, now time.Time, l Lifecycle) float64 {
	n := qualityBase
	if h.Status == StatusActive || h.Status == StatusRefined {
		n += qualityEstablished
	}
	if h.SupportTasks >= 3 {
		n += qualitySupport3
	}
	if h.SupportTasks >= 5 {
		n += qualitySupport5
	}
	if scoreValidatedWithin(h.LastValidatedAt, now, l.ValidatedWithinDays) {
		n += qualityRecentlyChecked
	}
	return float64(min(n, qualityMax)) / 100
}

// scoreValidatedWithin reports whether at is at most days days before now
// (inclusive; a future at counts as now).
func scoreValidatedWithin(at *time.Time, now time.Time, days float64) bool {
	if at == nil || math.IsNaN(days) || days < 0 {
		return false
	}
	age := now.Sub(*at) // saturates at the extremes of time.Duration
	if age <= 0 {
		return true
	}
	limit := days * float64(24*time.Hour)
	if limit >= float64(math.MaxInt64) {
		return true
	}
	return age <= time.Duration(limit)
}

// HeuristicScore is a heuristic's recall score with its three factors,
// each clamped to [0, 1].
type HeuristicScore struct {
	Topic, Trigger, Quality, Score float64
}

// ScoreHeuristic is the seed's recall score:
//
//	score = w.Topic·topic + w.Trigger·trigger + w.Quality·quality
//
// with topic the cosine similarity of the query and the heuristic, trigger
// the match of the live interaction signals with its trigger, and quality
// its QualityWeight. Each input is clamped to [0, 1] first (a negative
// cosine is 0, NaN is 0). The products are rounded before they are added,
// left to right (explicit float64 conversions, which the Go specification
// guarantees are never fused into multiply-add instructions), so the score
// is the same on every architecture.
func ScoreHeuristic(w Weights, topic, trigger, quality float64) HeuristicScore {
	topic, trigger, quality = scoreUnit(topic), scoreUnit(trigger), scoreUnit(quality)
	t := float64(w.Topic * topic)
	g := float64(w.Trigger * trigger)
	q := float64(w.Quality * quality)
	return HeuristicScore{Topic: topic, Trigger: trigger, Quality: quality, Score: float64(float64(t+g) + q)}
}

// scoreUnit clamps v to [0, 1]; NaN is 0.
func scoreUnit(v float64) float64 {
	switch {
	case math.IsNaN(v), v <= 0:
		return 0
	case v >= 1:
		return 1
	}
	return v
}
