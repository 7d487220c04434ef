package learning_test

import (
	"math"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// seedGrid is every duration × errors × success × retries combination of
// the seed, with the raw score computed independently (IEEE doubles, left to
// right, each product rounded) and its classification. The five successes
// landing on 0.7 must be helpful on every architecture: the implementation
// forbids fused multiply-add.
var seedGrid = []struct {
	durationMs      int64
	errors, retries int
	success         bool
	raw             float64
	typ             learning.FeedbackType
}{
	{180000, 0, 0, true, 1.0, learning.Helpful},
	{180000, 0, 1, true, 0.9400000000000001, learning.Helpful},
	{180000, 0, 2, true, 0.8600000000000001, learning.Helpful},
	{180000, 0, 0, false, 0.6000000000000001, learning.Neutral},
	{180000, 0, 1, false, 0.54, learning.Neutral},
	{180000, 0, 2, false, 0.46, learning.Neutral},
	{180000, 2, 0, true, 0.9200000000000002, learning.Helpful},
	{180000, 2, 1, true, 0.8600000000000001, learning.Helpful},
	{180000, 2, 2, true, 0.78, learning.Helpful},
	{180000, 2, 0, false, 0.52, learning.Neutral},
	{180000, 2, 1, false, 0.45999999999999996, learning.Neutral},
	{180000, 2, 2, false, 0.38, learning.Harmful},
	{180000, 3, 0, true, 0.8400000000000001, learning.Helpful},
	{180000, 3, 1, true, 0.7800000000000001, learning.Helpful},
	{180000, 3, 2, true, 0.7000000000000002, learning.Helpful},
	{180000, 3, 0, false, 0.44000000000000006, learning.Neutral},
	{180000, 3, 1, false, 0.38, learning.Harmful},
	{180000, 3, 2, false, 0.30000000000000004, learning.Harmful},
	{300000, 0, 0, true, 0.9199999999999999, learning.Helpful},
	{300000, 0, 1, true, 0.86, learning.Helpful},
	{300000, 0, 2, true, 0.78, learning.Helpful},
	{300000, 0, 0, false, 0.52, learning.Neutral},
	{300000, 0, 1, false, 0.45999999999999996, learning.Neutral},
	{300000, 0, 2, false, 0.38, learning.Harmful},
	{300000, 2, 0, true, 0.8400000000000001, learning.Helpful},
	{300000, 2, 1, true, 0.78, learning.Helpful},
	{300000, 2, 2, true, 0.7, learning.Helpful},
	{300000, 2, 0, false, 0.44, learning.Neutral},
	{300000, 2, 1, false, 0.38, learning.Harmful},
	{300000, 2, 2, false, 0.3, learning.Harmful},
	{300000, 3, 0, true, 0.76, learning.Helpful},
	{300000, 3, 1, true, 0.7000000000000001, learning.Helpful},
	{300000, 3, 2, true, 0.6200000000000001, learning.Neutral},
	{300000, 3, 0, false, 0.36, learning.Harmful},
	{300000, 3, 1, false, 0.3, learning.Harmful},
	{300000, 3, 2, false, 0.22, learning.Harmful},
	{1800001, 0, 0, true, 0.8400000000000001, learning.Helpful},
	{1800001, 0, 1, true, 0.7800000000000001, learning.Helpful},
	{1800001, 0, 2, true, 0.7000000000000002, learning.Helpful},
	{1800001, 0, 0, false, 0.44000000000000006, learning.Neutral},
	{1800001, 0, 1, false, 0.38, learning.Harmful},
	{1800001, 0, 2, false, 0.30000000000000004, learning.Harmful},
	{1800001, 2, 0, true, 0.76, learning.Helpful},
	{1800001, 2, 1, true, 0.7000000000000001, learning.Helpful},
	{1800001, 2, 2, true, 0.6200000000000001, learning.Neutral},
	{1800001, 2, 0, false, 0.36, learning.Harmful},
	{1800001, 2, 1, false, 0.3, learning.Harmful},
	{1800001, 2, 2, false, 0.22, learning.Harmful},
	{1800001, 3, 0, true, 0.6800000000000002, learning.Neutral},
	{1800001, 3, 1, true, 0.6200000000000001, learning.Neutral},
	{1800001, 3, 2, true, 0.54, learning.Neutral},
	{1800001, 3, 0, false, 0.28, learning.Harmful},
	{1800001, 3, 1, false, 0.22, learning.Harmful},
	{1800001, 3, 2, false, 0.14, learning.Harmful}}

func TestScoreOutcomeSeedGrid(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	counts := map[learning.FeedbackType]int{}
	for _, c := range seedGrid {
		s := cfg.ScoreOutcome(learning.Signals{DurationMs: c.durationMs, ErrorCount: c.errors, RetryCount: c.retries, Success: c.success})
		if s.Raw != c.raw || s.Type != c.typ {
			t.Errorf("duration=%d errors=%d retries=%d success=%v: got %v %s (bits %x), want %v %s (bits %x)",
				c.durationMs, c.errors, c.retries, c.success, s.Raw, s.Type, math.Float64bits(s.Raw), c.raw, c.typ, math.Float64bits(c.raw))
		}
		counts[s.Type]++
	}
	if counts[learning.Helpful] != 22 || counts[learning.Neutral] != 15 || counts[learning.Harmful] != 17 {
		t.Errorf("type counts %v, want 22 helpful, 15 neutral, 17 harmful", counts)
	}
}

func TestScoreBuckets(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	durations := []struct {
		ms   int64
		want float64
	}{{0, 1}, {299_999, 1}, {300_000, 0.6}, {1_800_000, 0.6}, {1_800_001, 0.2}}
	for _, d := range durations {
		if got := cfg.DurationBucket(d.ms); got != d.want {
			t.Errorf("DurationBucket(%d) = %v, want %v", d.ms, got, d.want)
		}
	}
	errs := []struct {
		n    int
		want float64
	}{{0, 1}, {1, 0.6}, {2, 0.6}, {3, 0.2}, {1000, 0.2}}
	for _, e := range errs {
		if got := cfg.ErrorsBucket(e.n); got != e.want {
			t.Errorf("ErrorsBucket(%d) = %v, want %v", e.n, got, e.want)
		}
	}
	retries := []struct {
		n    int
		want float64
	}{{0, 1}, {1, 0.7}, {2, 0.3}, {9, 0.3}}
	for _, r := range retries {
		if got := learning.RetriesBucket(r.n); got != r.want {
			t.Errorf("RetriesBucket(%d) = %v, want %v", r.n, got, r.want)
		}
	}
	// max_errors_for_helpful moves the middle bucket's upper bound.
	cfg.MaxErrorsForHelpful = 4
	if cfg.ErrorsBucket(4) != 0.6 || cfg.ErrorsBucket(5) != 0.2 {
		t.Error("max_errors_for_helpful=4 must keep 4 errors in the middle bucket")
	}
}

func TestClassifyBoundaries(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	cases := []struct {
		raw  float64
		want learning.FeedbackType
	}{
		{0.7, learning.Helpful},
		{math.Nextafter(0.7, 0), learning.Neutral},
		{0.4, learning.Harmful},
		{math.Nextafter(0.4, 1), learning.Neutral},
		{0.6000000000000001, learning.Neutral},
		{1, learning.Helpful},
		{0, learning.Harmful},
	}
	for _, c := range cases {
		if got := cfg.Classify(c.raw); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.raw, got, c.want)
		}
	}
}

func TestScoreReasoningDescribesComponents(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	s := cfg.ScoreOutcome(learning.Signals{DurationMs: 2_000_000, ErrorCount: 0, RetryCount: 2, Success: true})
	if s.Type != learning.Helpful {
		t.Fatalf("type %s", s.Type)
	}
	// The peer says "Fast completion" for every helpful outcome; a slow one must say slow.
	for _, want := range []string{"helpful", "succeeded", "slow", "0 errors", "2 retries", "0.70"} {
		if !contains(s.Reasoning, want) {
			t.Errorf("reasoning %q lacks %q", s.Reasoning, want)
		}
	}
}

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func days(n float64) time.Duration { return time.Duration(n * float64(24*time.Hour)) }

func TestDecayTimeline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		age  float64
		want float64
	}{{0, 1}, {90, 0.5}, {180, 0.25}, {270, 0.125}}
	for _, c := range cases {
		if got := learning.DecayFactor(epoch, epoch.Add(days(c.age)), 90); got != c.want {
			t.Errorf("decay after %v days = %v, want %v", c.age, got, c.want)
		}
	}
	if got := learning.DecayFactor(epoch.Add(time.Hour), epoch, 90); got != 1 {
		t.Errorf("an event in the future of now must not exceed its raw value, got %v", got)
	}
	if got := learning.DecayFactor(epoch, epoch.Add(days(45)), 45); got != 0.5 {
		t.Errorf("half-life 45: %v", got)
	}
}
