package learning

import (
	"math"
	"time"
)

const dayMicros = float64(24 * time.Hour / time.Microsecond)

// DecayFactor is the seed's confidence decay 0.5^(age_days/half_life) of an
// event at time at, evaluated at now. The age is clamped at zero: an event
// is never worth more than its raw value.
func DecayFactor(at, now time.Time, halfLifeDays float64) float64 {
	age := float64(now.Sub(at).Microseconds())
	if age <= 0 {
		return 1
	}
	return math.Exp2(-age / dayMicros / halfLifeDays)
}

// DecayedSum is a sum of exponentially decayed values maintained in O(1)
// per event and per query. Value is the sum evaluated at Ref, the newest
// event time seen. Because 0.5^(a+b) = 0.5^a·0.5^b, rebasing the running sum
// to a later reference time is exact, and an out-of-order (older) event is
// added with its own decay relative to Ref.
type DecayedSum struct {
	Value float64   `json:"value"`
	Ref   time.Time `json:"ref"`
}

// Add returns the sum with value v observed at time at.
func (d DecayedSum) Add(v float64, at time.Time, halfLifeDays float64) DecayedSum {
	if d.Ref.IsZero() {
		return DecayedSum{Value: v, Ref: at}
	}
	if at.After(d.Ref) {
		return DecayedSum{Value: d.Value*DecayFactor(d.Ref, at, halfLifeDays) + v, Ref: at}
	}
	return DecayedSum{Value: d.Value + v*DecayFactor(at, d.Ref, halfLifeDays), Ref: d.Ref}
}

// Exact reports whether At(now) equals the per-event recomputation: true
// unless now is earlier than the newest event (time travel into the past,
// where per-event age clamping cannot be expressed by one factor).
func (d DecayedSum) Exact(now time.Time) bool { return d.Ref.IsZero() || !now.Before(d.Ref) }

// At evaluates the sum at now. When now is before Ref the value at Ref is
// returned; use Exact to detect that case and recompute from the events.
func (d DecayedSum) At(now time.Time, halfLifeDays float64) float64 {
	if d.Ref.IsZero() {
		return 0
	}
	return d.Value * DecayFactor(d.Ref, now, halfLifeDays)
}

// Timed is a value observed at a time, the input of a full recomputation.
type Timed struct {
	Value float64
	At    time.Time
}

// RecomputeDecayed sums every value decayed from its own time to now, with
// age clamped at zero. It is the O(n) reference that DecayedSum must equal,
// and the fallback when a query asks for a time before the newest event.
func RecomputeDecayed(events []Timed, now time.Time, halfLifeDays float64) float64 {
	var s float64
	for _, e := range events {
		s += e.Value * DecayFactor(e.At, now, halfLifeDays)
	}
	return s
}
