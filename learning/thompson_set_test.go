package learning_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// setWorld is a project where a few patterns were used by indexed
// outcomes and many were not (their only evidence is their own counts, in
// a few groups of equal counts, one of them likely to fail), so both parts
// of RecommendSet are exercised.
func setWorld() ([]learning.Choice, *learning.ContextIndex, time.Time) {
	r := rand.New(rand.NewPCG(3, 4))
	var cands []learning.Choice
	for i := range 6 { // used by outcomes
		cands = append(cands, learning.Choice{ID: fmt.Sprintf("used-%d", i), Content: fmt.Sprintf("Used %d", i)})
	}
	counts := [][2]int64{{0, 0}, {3, 1}, {1, 9}, {12, 2}, {0, 0}}
	for g, c := range counts {
		for k := range 5 + 3*g {
			cands = append(cands, learning.Choice{ID: fmt.Sprintf("g%d-%02d", g, k), Content: fmt.Sprintf("Group %d member %d", g, k),
				Successes: c[0], Failures: c[1], Inverted: k == 1})
		}
	}
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	var events []learning.ContextEvent
	rates := []float64{0.9, 0.7, 0.5, 0.3, 0.2, 0.6}
	for i := range 60 {
		a, b := r.IntN(6), r.IntN(6)
		fam := []string{"migration", "ui"}[i%2]
		events = append(events, learning.ContextEvent{OutcomeID: fmt.Sprint(i), Task: fam + " task " + fmt.Sprint(i%7),
			Tags: []string{fam}, Patterns: []string{cands[a].ID, cands[b].ID}, Success: r.Float64() < (rates[a]+rates[b])/2,
			At: now.Add(time.Duration(i-60) * time.Hour)})
	}
	return cands, learning.NewContextIndex(events), now
}

// TestRecommendSetSameDistribution: RecommendSet's output has the
// distribution of Recommend's. Over the same many seeds (a fixed list, so
// the test is deterministic), the frequency with which each choice is
// recommended first, is among the recommended, is to avoid, and is the
// one to explore agree within five standard errors of a difference of two
// independent frequencies (plus a small floor for rare events); the
// posterior means and intervals shown are equal.
func TestRecommendSetSameDistribution(t *testing.T) {
	cands, idx, now := setWorld()
	cfg := learning.DefaultConfig()
	cfg.Ranking = learning.RankingThompson
	set := learning.NewChoiceSet(cands)
	const seeds = 6000
	for _, req := range []learning.GuidanceRequest{
		{Task: "migration task 3", Tags: []string{"migration"}, Limit: 3},
		{Limit: 8}, // no task: no neighbours
	} {
		type freq map[string]float64
		// group is the group of a choice ("used" for those outcomes used).
		group := func(id string) string { return id[:len(id)-3] }
		count := func(recommend func(seed uint64) learning.Recommendation) (first, in, avoid, explore, hist freq, rates map[string]float64) {
			first, in, avoid, explore, hist, rates = freq{}, freq{}, freq{}, freq{}, freq{}, map[string]float64{}
			// Seeds from another generator: seeds that differ by the
			// generator's own increment would give shifted copies of one
			// stream, not independent draws.
			sr := rand.New(rand.NewPCG(11, 12))
			for range seeds {
				rec := recommend(sr.Uint64())
				// how many of each group are recommended: tells whether
				// the later draws of a group are spaced right
				per := map[string]int{}
				for _, r := range rec.Recommended {
					per[group(r.ID)]++
				}
				for g, n := range per {
					hist[fmt.Sprintf("%s×%d", g, n)]++
				}
				if len(rec.Recommended) > 0 {
					first[rec.Recommended[0].ID]++
				}
				for _, r := range rec.Recommended {
					in[r.ID]++
					rates[r.ID] = r.Rate
				}
				for _, r := range rec.Avoid {
					avoid[r.ID]++
				}
				if rec.Explore != nil {
					explore[rec.Explore.ID]++
				}
			}
			return
		}
		of, oi, oa, oe, oh, orates := count(func(seed uint64) learning.Recommendation {
			return cfg.Recommend(req, cands, idx, now, seed)
		})
		nf, ni, na, ne, nh, nrates := count(func(seed uint64) learning.Recommendation {
			return cfg.RecommendSet(req, set, nil, nil, idx, now, seed)
		})
		for _, c := range []struct {
			name     string
			old, new freq
		}{{"first", of, nf}, {"recommended", oi, ni}, {"avoid", oa, na}, {"explore", oe, ne}, {"group count", oh, nh}} {
			sameFrequencies(t, req.Task, c.name, c.old, c.new, seeds)
		}
		sameRates(t, req.Task, orates, nrates)
		if len(na) == 0 || len(ne) == 0 {
			t.Errorf("task %q: the world should have patterns to avoid and to explore (avoid %v, explore %v)", req.Task, na, ne)
		}
	}
}

// TestRecommendSetIndependentOfTheSplit: the same choices split
// differently between the set and the extra ones (a set built before some
// patterns changed, with the changed ones dropped and passed as extra)
// give the same recommendation for the same seed, as a cache refreshed
// incrementally must answer like a fresh one.
func TestRecommendSetIndependentOfTheSplit(t *testing.T) {
	cands, idx, now := setWorld()
	cfg := learning.DefaultConfig()
	cfg.Ranking = learning.RankingThompson
	whole := learning.NewChoiceSet(cands)
	// The old set had other versions of some choices (other counts, other
	// content) and lacked the last ones.
	old := slices.Clone(cands[:len(cands)-4])
	changed := map[string]bool{}
	var extra []learning.Choice
	for i := range old {
		if i%5 == 2 {
			changed[old[i].ID] = true
			extra = append(extra, cands[i])
			old[i].Successes += 7
			old[i].Content += " (older)"
		}
	}
	extra = append(extra, cands[len(cands)-4:]...)
	part := learning.NewChoiceSet(old)
	req := learning.GuidanceRequest{Task: "ui task 2", Tags: []string{"ui"}, Limit: 5}
	for seed := range uint64(200) {
		a, _ := json.Marshal(cfg.RecommendSet(req, whole, nil, nil, idx, now, seed))
		b, _ := json.Marshal(cfg.RecommendSet(req, part, changed, extra, idx, now, seed))
		if string(a) != string(b) {
			t.Fatalf("seed %d: the split changed the recommendation:\nwhole %s\nsplit %s", seed, a, b)
		}
	}
}

// TestRecommendSetOtherRankings: under bayes RecommendSet is Recommend.
func TestRecommendSetOtherRankings(t *testing.T) {
	cands, idx, now := setWorld()
	cfg := learning.DefaultConfig()
	cfg.Ranking = learning.RankingBayes
	req := learning.GuidanceRequest{Task: "migration task 1", Tags: []string{"migration"}}
	a, _ := json.Marshal(cfg.Recommend(req, cands, idx, now, 7))
	b, _ := json.Marshal(cfg.RecommendSet(req, learning.NewChoiceSet(cands), nil, nil, idx, now, 7))
	if string(a) != string(b) {
		t.Fatalf("bayes differs:\n%s\n%s", a, b)
	}
}
