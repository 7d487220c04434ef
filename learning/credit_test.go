package learning_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// pairedWorld draws n outcomes of pairs of strategies whose success is the
// mean of their own rates: the good a (0.9) is always used with the bad b
// (0.1), a pair as good as a coin; the mediocre c and d (0.76 each) are used
// together, a better pair; b is also used on its own, which is what tells
// a's share of the coin from b's.
func pairedWorld(n int) (*learning.ContextIndex, time.Time) {
	r := rand.New(rand.NewPCG(11, 26))
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rate := map[string]float64{"a": 0.9, "b": 0.1, "c": 0.76, "d": 0.76}
	pairs := [][]string{{"a", "b"}, {"c", "d"}, {"c", "d"}, {"b"}}
	var events []learning.ContextEvent
	for i := range n {
		pair := pairs[i%len(pairs)]
		p := 0.0
		for _, s := range pair {
			p += rate[s] / float64(len(pair))
		}
		events = append(events, learning.ContextEvent{OutcomeID: fmt.Sprint(i), Patterns: pair, Success: r.Float64() < p, At: now})
		now = now.Add(time.Hour)
	}
	return learning.NewContextIndex(events), now
}

// rankPaired ranks the strategies of a pairedWorld with the Bayes ranking
// and the given credit and number of credit steps: the recommended ids in
// order, and the rate of every strategy ranked or avoided.
func rankPaired(t *testing.T, x *learning.ContextIndex, now time.Time, credit string, steps int) ([]string, map[string]float64) {
	t.Helper()
	c := learning.DefaultConfig()
	c.Ranking, c.Context.Credit, c.Context.CreditIterations = learning.RankingBayes, credit, steps
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	rates := map[string]float64{}
	rec := c.Recommend(learning.GuidanceRequest{}, choices, x, now, 1)
	for _, it := range rec.Recommended {
		ids = append(ids, it.ID)
		rates[it.ID] = it.Rate
	}
	for _, it := range rec.Avoid { // b, likely to fail
		rates[it.ID] = it.Rate
	}
	return ids, rates
}

// The good strategy always paired with a bad one is ranked first, above
// the mediocre pair, after 200 outcomes when the credit is re-estimated
// (context.credit_iterations = 6); a single step of blame (the default, and
// main's only behaviour) leaves it under the pair (its rate 0.71, the
// pair's 0.74), and equal credit too (its pair's rate is 0.5).
func TestIteratedCreditRanksTheGoodPartnerOfABadStrategyFirst(t *testing.T) {
	t.Parallel()
	x, now := pairedWorld(200)
	rank := func(credit string, steps int) ([]string, map[string]float64) {
		return rankPaired(t, x, now, credit, steps)
	}
	ids6, rates6 := rank(learning.CreditBlame, 6)
	if len(ids6) == 0 || ids6[0] != "a" {
		t.Errorf("blame, 6 steps: ranking %v (rates %v), want a first", ids6, rates6)
	}
	ids1, rates1 := rank(learning.CreditBlame, 1)
	t.Logf("6 steps: %v %v; 1 step: %v %v", ids6, rates6, ids1, rates1)
	if !(rates6["a"] > rates1["a"] && rates6["b"] < rates1["b"]) {
		t.Errorf("6 steps: a %.3f, b %.3f; 1 step: a %.3f, b %.3f: more steps must move a up and b down (toward 0.9 and 0.1)",
			rates6["a"], rates6["b"], rates1["a"], rates1["b"])
	}
	if len(ids1) > 0 && ids1[0] == "a" {
		t.Errorf("blame, 1 step ranks a first (%v, rates %v): the world no longer separates one step from six", ids1, rates1)
	}
	if ids, rates := rank(learning.CreditEqual, 6); len(ids) > 0 && ids[0] == "a" {
		t.Errorf("equal credit ranks a first (%v, rates %v): the test does not separate credit rules", ids, rates)
	}
}

// Bad credit settings are typed configuration errors.
func TestCreditConfigErrors(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(*learning.Config){
		func(c *learning.Config) { c.Context.Credit = "shared" },
		func(c *learning.Config) { c.Context.CreditIterations = -1 },
		func(c *learning.Config) { c.Context.CreditIterations = 21 },
	} {
		c := learning.DefaultConfig()
		mut(&c)
		var ce *learning.ConfigError
		if err := c.Validate(); !errors.As(err, &ce) {
			t.Errorf("%+v: Validate() = %v, want a *ConfigError", c.Context, err)
		}
	}
	for _, credit := range learning.Credits {
		c := learning.DefaultConfig()
		c.Context.Credit = credit
		if err := c.Validate(); err != nil {
			t.Errorf("credit %q: %v", credit, err)
		}
	}
}

// Every credit rule gives rates in [0, 1] and ranks the four strategies,
// with several steps too.
func TestCreditRulesGiveRates(t *testing.T) {
	t.Parallel()
	x, now := pairedWorld(120)
	for _, credit := range learning.Credits {
		for _, steps := range []int{0, 1, 4} {
			c := learning.DefaultConfig()
			c.Ranking, c.Context.Credit, c.Context.CreditIterations = learning.RankingBayes, credit, steps
			rec := c.Recommend(learning.GuidanceRequest{}, choices, x, now, 1)
			all := append(rec.Recommended, rec.Avoid...)
			if len(all) != len(choices) {
				t.Errorf("%s/%d: %d recommended or avoided, want %d", credit, steps, len(all), len(choices))
			}
			for _, it := range all {
				if !(it.Rate >= 0 && it.Rate <= 1) {
					t.Errorf("%s/%d: %s rate %v", credit, steps, it.ID, it.Rate)
				}
			}
		}
	}
}
