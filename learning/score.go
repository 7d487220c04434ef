package learning

import (
	"fmt"
	"strings"
	"time"
)

// FeedbackType classifies a scored outcome.
type FeedbackType string

// Feedback types of the seed.
const (
	Helpful FeedbackType = "helpful"
	Neutral FeedbackType = "neutral"
	Harmful FeedbackType = "harmful"
)

// Valid reports whether t is one of the three feedback types.
func (t FeedbackType) Valid() bool { return t == Helpful || t == Neutral || t == Harmful }

// Signals are the implicit signals of a finished task that the score is
// computed from.
type Signals struct {
	DurationMs int64
	ErrorCount int
	RetryCount int
	Success    bool
}

// Signal weights of the seed's rawScore.
const (
	successWeight  = 0.4
	durationWeight = 0.2
	errorsWeight   = 0.2
	retriesWeight  = 0.2
)

// Score is an outcome's implicit feedback: the four bucket scores, the
// weighted raw score, its classification and a human reason.
type Score struct {
	Duration  float64      `json:"duration"`
	Errors    float64      `json:"errors"`
	Retries   float64      `json:"retries"`
	Success   float64      `json:"success"`
	Raw       float64      `json:"raw_score"`
	Type      FeedbackType `json:"type"`
	Reasoning string       `json:"reasoning"`
}

// DurationBucket returns the duration signal: 1.0 strictly below the fast
// threshold, 0.2 strictly above the slow threshold, 0.6 otherwise (both
// thresholds themselves are medium).
func (c Config) DurationBucket(ms int64) float64 {
	switch {
	case ms < c.FastCompletionThresholdMs:
		return 1.0
	case ms > c.SlowCompletionThresholdMs:
		return 0.2
	default:
		return 0.6
	}
}

// ErrorsBucket returns the error signal: 1.0 for none, 0.6 up to
// MaxErrorsForHelpful, 0.2 beyond.
func (c Config) ErrorsBucket(n int) float64 {
	switch {
	case n <= 0:
		return 1.0
	case n <= c.MaxErrorsForHelpful:
		return 0.6
	default:
		return 0.2
	}
}

// RetriesBucket returns the retry signal: 1.0 for none, 0.7 for one, 0.3 for more.
func RetriesBucket(n int) float64 {
	switch {
	case n <= 0:
		return 1.0
	case n == 1:
		return 0.7
	default:
		return 0.3
	}
}

// RawScore is the seed's weighted sum, evaluated left to right with every
// product rounded to float64 before it is added. The explicit conversions
// forbid the compiler from fusing a multiply and an add (FMA), which on some
// architectures would turn the 0.7 boundary cases into 0.6999… and flip
// helpful outcomes to neutral.
func RawScore(success, duration, errors, retries float64) float64 {
	s := float64(success * successWeight)
	d := float64(duration * durationWeight)
	e := float64(errors * errorsWeight)
	r := float64(retries * retriesWeight)
	return float64(float64(float64(s+d)+e) + r)
}

// Classify maps a raw score to its feedback type: helpful at or above the
// helpful threshold, harmful at or below the harmful threshold.
func (c Config) Classify(raw float64) FeedbackType {
	switch {
	case raw >= c.HelpfulThreshold:
		return Helpful
	case raw <= c.HarmfulThreshold:
		return Harmful
	default:
		return Neutral
	}
}

// ScoreOutcome computes the implicit feedback of a finished task. Negative
// counts are treated as zero; callers validate input before scoring.
func (c Config) ScoreOutcome(s Signals) Score {
	sc := Score{
		Duration: c.DurationBucket(s.DurationMs),
		Errors:   c.ErrorsBucket(s.ErrorCount),
		Retries:  RetriesBucket(s.RetryCount),
	}
	if s.Success {
		sc.Success = 1
	}
	sc.Raw = RawScore(sc.Success, sc.Duration, sc.Errors, sc.Retries)
	sc.Type = c.Classify(sc.Raw)
	sc.Reasoning = c.reasoning(s, sc)
	return sc
}

// reasoning explains a score from its actual components (the peer prints
// "Fast completion" for every helpful score, even slow ones).
func (c Config) reasoning(s Signals, sc Score) string {
	var parts []string
	if s.Success {
		parts = append(parts, "succeeded")
	} else {
		parts = append(parts, "failed")
	}
	dur := time.Duration(s.DurationMs) * time.Millisecond
	switch sc.Duration {
	case 1.0:
		parts = append(parts, fmt.Sprintf("fast (%s)", dur))
	case 0.2:
		parts = append(parts, fmt.Sprintf("slow (%s)", dur))
	default:
		parts = append(parts, fmt.Sprintf("medium duration (%s)", dur))
	}
	parts = append(parts, plural(s.ErrorCount, "error"), plural(s.RetryCount, "retry"))
	return fmt.Sprintf("%s: %s; raw score %.2f", sc.Type, strings.Join(parts, ", "), sc.Raw)
}

func plural(n int, noun string) string {
	if n < 0 {
		n = 0
	}
	if n == 1 {
		return "1 " + noun
	}
	if noun == "retry" {
		return fmt.Sprintf("%d retries", n)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
