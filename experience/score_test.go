package experience

import (
	"math"
	"testing"
	"time"
)

func TestQualityWeightTable(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig()
	now := lifecycleNow
	recent := now.Add(-time.Hour)
	old := now.Add(-30 * 24 * time.Hour)
	for _, tc := range []struct {
		status    HeuristicStatus
		support   int64
		validated *time.Time
		want      float64
	}{
		{StatusCandidate, 0, nil, 0.5},
		{StatusCandidate, 2, nil, 0.5},
		{StatusCandidate, 3, nil, 0.65},
		{StatusCandidate, 4, &old, 0.65},
		{StatusCandidate, 5, nil, 0.75},
		{StatusCandidate, 1, &recent, 0.55},
		{StatusCandidate, 5, &recent, 0.8},
		{StatusActive, 1, nil, 0.7},
		{StatusRefined, 2, nil, 0.7},
		{StatusActive, 2, &recent, 0.75},
		{StatusActive, 3, nil, 0.85},
		{StatusActive, 3, &recent, 0.9},
		{StatusRefined, 5, nil, 0.95},
		{StatusRefined, 5, &recent, 1.0}, // 0.5+0.2+0.15+0.10+0.05, exactly 1
		{StatusActive, 500, &recent, 1.0},
		{StatusStale, 5, &recent, 0.8},
		{StatusArchived, 3, nil, 0.65},
	} {
		h := lifecycleTestHeuristic(tc.status, tc.support, 0)
		h.LastValidatedAt = tc.validated
		if got := QualityWeight(h, now, l); got != tc.want {
			t.Errorf("%s support %d validated %v: %v, want exactly %v", tc.status, tc.support, tc.validated, got, tc.want)
		}
	}
}

func TestQualityWeightValidationWindow(t *testing.T) {
	t.Parallel()
	l := lifecycleTestConfig() // 7 days
	now := lifecycleNow
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	week := 7 * 24 * time.Hour
	for _, tc := range []struct {
		name      string
		validated *time.Time
		days      float64
		want      float64
	}{
		{"exactly 7 days ago is within", at(-week), 7, 0.55},
		{"7 days and 1ns ago is not", at(-week - 1), 7, 0.5},
		{"just now", at(0), 7, 0.55},
		{"in the future counts as now", at(time.Hour), 7, 0.55},
		{"far future", at(100 * 365 * 24 * time.Hour), 7, 0.55},
		{"never validated", nil, 7, 0.5},
		{"zero window, now", at(0), 0, 0.55},
		{"zero window, 1ns ago", at(-1), 0, 0.5},
		{"fractional window", at(-36 * time.Hour), 1.5, 0.55},
		{"fractional window, past", at(-36*time.Hour - time.Second), 1.5, 0.5},
		{"negative window", at(0), -1, 0.5},
		{"NaN window", at(0), math.NaN(), 0.5},
		{"huge window", at(-200 * 365 * 24 * time.Hour), 1e12, 0.55},
		{"infinite window", at(-200 * 365 * 24 * time.Hour), math.Inf(1), 0.55},
	} {
		l.ValidatedWithinDays = tc.days
		h := lifecycleTestHeuristic(StatusCandidate, 1, 1)
		h.LastValidatedAt = tc.validated
		if got := QualityWeight(h, now, l); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Far in the past: Sub saturates, never wraps round to "recent".
	ancient := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	h := lifecycleTestHeuristic(StatusCandidate, 1, 1)
	h.LastValidatedAt = &ancient
	if got := QualityWeight(h, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), lifecycleTestConfig()); got != 0.5 {
		t.Errorf("ancient validation: %v", got)
	}
}

func TestScoreHeuristic(t *testing.T) {
	t.Parallel()
	w := DefaultConfig().Weights
	for _, tc := range []struct {
		topic, trigger, quality float64
		want                    HeuristicScore
	}{
		{1, 1, 1, HeuristicScore{1, 1, 1, 1}},
		{0.8, 0.5, 0.7, HeuristicScore{0.8, 0.5, 0.7, 0.675}},
		{0, 0, 0.5, HeuristicScore{0, 0, 0.5, 0.1}},
		{0.6, 0, 1, HeuristicScore{0.6, 0, 1, 0.47000000000000003}},
		{0.1, 0.2, 0.3, HeuristicScore{0.1, 0.2, 0.3, 0.175}},
		{0.3, 0.3, 0.3, HeuristicScore{0.3, 0.3, 0.3, 0.3}},
		// Clamping: a negative cosine is 0, above 1 is 1, NaN is 0.
		{-0.4, 1.5, 0.5, HeuristicScore{0, 1, 0.5, 0.44999999999999996}},
		{math.NaN(), math.Inf(1), math.Inf(-1), HeuristicScore{0, 1, 0, 0.35}},
		{0, 0, 0, HeuristicScore{}},
	} {
		got := ScoreHeuristic(w, tc.topic, tc.trigger, tc.quality)
		if got != tc.want {
			t.Errorf("ScoreHeuristic(%v, %v, %v) = %+v, want exactly %+v", tc.topic, tc.trigger, tc.quality, got, tc.want)
		}
	}
	// Other weights are used as given.
	if got := ScoreHeuristic(Weights{Topic: 1}, 0.25, 1, 1).Score; got != 0.25 {
		t.Errorf("topic-only weights: %v", got)
	}
}

func BenchmarkScoreHeuristic(b *testing.B) {
	w := DefaultConfig().Weights
	h := lifecycleTestHeuristic(StatusActive, 4, 6)
	h.LastValidatedAt = &lifecycleT0
	l := lifecycleTestConfig()
	for b.Loop() {
		ScoreHeuristic(w, 0.62, 0.4, QualityWeight(h, lifecycleNow, l))
	}
}
