package learning_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// turnedBad is a history where strategy a succeeded on its 50 uses and
// then succeeded on 3 of its next 12, while b succeeded steadily 55 % of
// the time (11 of every 20 uses), one outcome per strategy and task, all at
// the same instant (no decay in days).
func turnedBad() (*learning.ContextIndex, time.Time) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var events []learning.ContextEvent
	for i := range 62 {
		okA := i < 50 || (i-50)%4 == 0
		events = append(events,
			learning.ContextEvent{OutcomeID: fmt.Sprint("a", i), Patterns: []string{"a"}, Success: okA, At: now},
			learning.ContextEvent{OutcomeID: fmt.Sprint("b", i), Patterns: []string{"b"}, Success: i%20 < 11, At: now})
	}
	return learning.NewContextIndex(events), now
}

func rates(c learning.Config, x *learning.ContextIndex, now time.Time) (map[string]float64, string) {
	rec := c.Recommend(learning.GuidanceRequest{}, choices[:2], x, now, 1)
	out := map[string]float64{}
	for _, it := range rec.Recommended {
		out[it.ID] = it.Rate
	}
	return out, rec.Recommended[0].ID
}

// A strategy that turned bad 12 uses ago is ranked under a steady 55 %
// one once its change is detected: its 50 older successes are discounted.
// Without change detection (change_threshold 0) those successes still
// outweigh the 12 recent uses at use_half_life 20 and a stays first.
func TestChangeDetectionRecoversAStrategyThatTurnedBad(t *testing.T) {
	t.Parallel()
	x, now := turnedBad()
	c := learning.DefaultConfig()
	c.Ranking = learning.RankingBayes // posterior means: no draw
	c.Context.ChangeThreshold = 0
	off, firstOff := rates(c, x, now)
	if firstOff != "a" {
		t.Fatalf("without change detection: %v ranks %s first; the test needs a first (history too short?)", off, firstOff)
	}
	c.Context.ChangeThreshold, c.Context.ChangeDiscount = 6, 0.1
	on, firstOn := rates(c, x, now)
	if firstOn != "b" {
		t.Errorf("with change detection: %v ranks %s first, want b", on, firstOn)
	}
	if !(on["a"] < 0.45) {
		t.Errorf("with change detection a's rate is %.3f, want near its recent 3 of 12 (< 0.45)", on["a"])
	}
	// b is not cut (its rate moves only through the prior pooled over
	// strategies, which a's change lowers).
	if d := on["b"] - off["b"]; d > 0.05 || d < -0.05 {
		t.Errorf("b's results are steady: its rate moved from %.4f to %.4f", off["b"], on["b"])
	}
	// The thompson default ranks by draws; with the change detected b is
	// drawn first on most seeds.
	c.Ranking = learning.RankingThompson
	wins := 0
	for seed := range uint64(40) {
		rec := c.Recommend(learning.GuidanceRequest{}, choices[:2], x, now, seed)
		if rec.Recommended[0].ID == "b" {
			wins++
		}
	}
	if wins < 30 {
		t.Errorf("thompson with change detection ranks b first on %d of 40 seeds, want at least 30", wins)
	}
}

// A strategy whose results are steady is not cut: the same ranking with
// and without detection.
func TestChangeDetectionLeavesSteadyStrategies(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var events []learning.ContextEvent
	for i := range 300 {
		events = append(events,
			learning.ContextEvent{OutcomeID: fmt.Sprint("a", i), Patterns: []string{"a"}, Success: i%3 != 0, At: now},
			learning.ContextEvent{OutcomeID: fmt.Sprint("b", i), Patterns: []string{"b", "c"}, Success: i%5 < 2, At: now})
	}
	x := learning.NewContextIndex(events)
	c := learning.DefaultConfig()
	c.Ranking = learning.RankingBayes
	c.Context.ChangeThreshold = 0
	off, _ := rates(c, x, now)
	c.Context.ChangeThreshold = 6
	on, _ := rates(c, x, now)
	for id, r := range off {
		if d := on[id] - r; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: rate %.4f without detection, %.4f with: a steady strategy was cut", id, r, on[id])
		}
	}
}

func TestChangeConfigValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		threshold, discount float64
		ok                  bool
	}{{0, 0.1, true}, {6, 0, true}, {6, 1, true}, {-1, 0.1, false}, {6, 1.5, false}, {6, -0.1, false}} {
		c := learning.DefaultConfig()
		c.Context.ChangeThreshold, c.Context.ChangeDiscount = tc.threshold, tc.discount
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("threshold %v discount %v: error %v, want ok=%v", tc.threshold, tc.discount, err, tc.ok)
		}
	}
}

// BenchmarkRecommendSetChange: BenchmarkRecommendSet's ranking at 10,000
// patterns with change detection off (the default) and on.
func BenchmarkRecommendSetChange(b *testing.B) {
	set, idx, now := benchSetWorld(10_000)
	req := learning.GuidanceRequest{Task: "Refactor the billing module, one file per subtask"}
	for _, th := range []float64{0, 6} {
		cfg := learning.DefaultConfig()
		cfg.Context.ChangeThreshold = th
		b.Run(fmt.Sprintf("change_threshold=%g", th), func(b *testing.B) {
			cfg.RecommendSet(req, set, nil, nil, idx, now, 1)
			seed := uint64(0)
			for b.Loop() {
				seed++
				cfg.RecommendSet(req, set, nil, nil, idx, now.Add(time.Duration(seed)*time.Millisecond), seed)
			}
		})
	}
}
