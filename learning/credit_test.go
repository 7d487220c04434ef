package learning_test

import (
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

// The good strategy always paired with a bad one is ranked first, above
// the mediocre pair, after 200 outcomes under the default credit
// assignment; equal credit ranks it under them (its pair's rate is 0.5).
func TestDefaultCreditRanksTheGoodPartnerOfABadStrategyFirst(t *testing.T) {
	t.Parallel()
	x, now := pairedWorld(200)
	rank := func(c learning.Config) ([]string, map[string]float64) {
		c.Ranking = learning.RankingBayes
		var ids []string
		rates := map[string]float64{}
		for _, it := range c.Recommend(learning.GuidanceRequest{}, choices, x, now, 1).Recommended {
			ids = append(ids, it.ID)
			rates[it.ID] = it.Rate
		}
		return ids, rates
	}
	def := learning.DefaultConfig()
	if ids, rates := rank(def); len(ids) == 0 || ids[0] != "a" {
		t.Errorf("default credit (%s, %d steps): ranking %v (rates %v), want a first", def.Context.Credit, def.Context.CreditIterations, ids, rates)
	}
	eq := learning.DefaultConfig()
	eq.Context.Credit = learning.CreditEqual
	if ids, rates := rank(eq); len(ids) > 0 && ids[0] == "a" {
		t.Errorf("equal credit ranks a first (%v, rates %v): the test does not separate credit rules", ids, rates)
	}
}
