package learning_test

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kaizenhq/kaizen/learning"
)

// The incremental decayed sum equals the per-event recomputation for any
// values, any event order (including out-of-order events) and any half-life,
// whenever it is evaluated at or after the newest event.
func TestDecayedSumMatchesRecomputation(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		half := rapid.Float64Range(0.5, 400).Draw(t, "half_life_days")
		n := rapid.IntRange(0, 300).Draw(t, "events")
		var sum learning.DecayedSum
		var events []learning.Timed
		newest := epoch
		for i := range n {
			v := rapid.Float64Range(0, 1).Draw(t, "value")
			offset := rapid.Int64Range(-3*365*24*3600, 3*365*24*3600).Draw(t, "offset_s")
			at := epoch.Add(time.Duration(offset) * time.Second)
			if i == 0 || at.After(newest) {
				newest = at
			}
			sum = sum.Add(v, at, half)
			events = append(events, learning.Timed{Value: v, At: at})
		}
		now := newest.Add(time.Duration(rapid.Int64Range(0, 4*365*24*3600).Draw(t, "later_s")) * time.Second)
		if n == 0 {
			now = epoch
		}
		if !sum.Exact(now) {
			t.Fatalf("sum must be exact at or after its newest event")
		}
		got, want := sum.At(now, half), learning.RecomputeDecayed(events, now, half)
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Fatalf("incremental %v, recomputed %v (diff %g)", got, want, got-want)
		}
	})
}

func TestDecayedSumInexactBeforeNewest(t *testing.T) {
	t.Parallel()
	var s learning.DecayedSum
	s = s.Add(1, epoch.Add(days(10)), 90)
	if s.Exact(epoch) {
		t.Error("a query before the newest event must be reported inexact so callers recompute")
	}
	if !s.Exact(epoch.Add(days(10))) || !(learning.DecayedSum{}).Exact(epoch) {
		t.Error("exact at the newest event and for an empty sum")
	}
}

func BenchmarkDecayedSumAdd(b *testing.B) {
	var s learning.DecayedSum
	b.ReportAllocs()
	for i := range b.N {
		s = s.Add(0.8, epoch.Add(time.Duration(i)*time.Minute), 90)
	}
	_ = s
}

// BenchmarkDecayedSum compares answering "decayed sum now" for a pattern
// with 10,000 events: O(1) from the incremental sum versus recomputing.
func BenchmarkDecayedSum(b *testing.B) {
	var s learning.DecayedSum
	events := make([]learning.Timed, 10_000)
	for i := range events {
		events[i] = learning.Timed{Value: 0.9, At: epoch.Add(time.Duration(i) * time.Hour)}
		s = s.Add(0.9, events[i].At, 90)
	}
	now := epoch.Add(days(500))
	b.Run("incremental", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = s.At(now, 90)
		}
	})
	b.Run("recompute", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = learning.RecomputeDecayed(events, now, 90)
		}
	})
}
