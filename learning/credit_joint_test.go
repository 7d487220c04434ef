package learning_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// The joint credit ranks the good strategy that is always paired with a
// bad one first, above the mediocre pair, in one request (no EM steps):
// the tasks where the bad one ran alone tell its share of the pair's
// coin-flip outcomes. Equal credit (and one step of blame) rank it under
// the pair.
func TestJointCreditRanksTheGoodPartnerOfABadStrategyFirst(t *testing.T) {
	t.Parallel()
	x, now := pairedWorld(200)
	rank := func(credit string) ([]string, map[string]float64) {
		return rankPaired(t, x, now, credit, 1)
	}
	ids, rates := rank(learning.CreditJoint)
	t.Logf("joint: %v %v", ids, rates)
	if len(ids) == 0 || ids[0] != "a" {
		t.Errorf("joint: ranking %v (rates %v), want a first", ids, rates)
	}
	if !(rates["a"] > 0.8 && rates["b"] < 0.2) {
		t.Errorf("joint: a %.3f, b %.3f, want near their own rates 0.9 and 0.1", rates["a"], rates["b"])
	}
	for _, other := range []string{learning.CreditEqual, learning.CreditBlame} {
		if ids, rates := rank(other); len(ids) > 0 && ids[0] == "a" {
			t.Errorf("%s ranks a first (%v, rates %v): the test does not separate the joint credit", other, ids, rates)
		}
	}
}

// A misspelt joint credit is a typed configuration error; "joint" is valid
// with any number of credit steps (the joint fit does not use them).
func TestJointCreditConfig(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"Joint", "joint ", "ridge"} {
		c := learning.DefaultConfig()
		c.Context.Credit = bad
		var ce *learning.ConfigError
		if err := c.Validate(); !errors.As(err, &ce) {
			t.Errorf("credit %q: Validate() = %v, want a *ConfigError", bad, err)
		}
	}
	for _, steps := range []int{0, 1, 20} {
		c := learning.DefaultConfig()
		c.Context.Credit, c.Context.CreditIterations = learning.CreditJoint, steps
		if err := c.Validate(); err != nil {
			t.Errorf("joint, %d steps: %v", steps, err)
		}
	}
}

// BenchmarkRecommendSetCredit: BenchmarkRecommendSet's ranking at 10,000
// patterns with the default credit and the joint one; p99-ms is the 99th
// percentile of a request's time.
func BenchmarkRecommendSetCredit(b *testing.B) {
	set, idx, now := benchSetWorld(10_000)
	req := learning.GuidanceRequest{Task: "Refactor the billing module, one file per subtask"}
	for _, credit := range []string{learning.CreditBlame, learning.CreditJoint} {
		cfg := learning.DefaultConfig()
		cfg.Ranking, cfg.Context.Credit = learning.RankingThompson, credit
		b.Run("credit="+credit, func(b *testing.B) {
			cfg.RecommendSet(req, set, nil, nil, idx, now, 1)
			seed := uint64(0)
			var times []time.Duration
			for b.Loop() {
				seed++
				t0 := time.Now()
				cfg.RecommendSet(req, set, nil, nil, idx, now.Add(time.Duration(seed)*time.Millisecond), seed)
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)*99/100])/1e6, "p99-ms")
		})
	}
}
