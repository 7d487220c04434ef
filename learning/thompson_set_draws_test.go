package learning_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// benchSetWorld is the shape of `kaizen bench --only guidance`: n
// patterns with about 100 feedback events each, and the index of the last
// 5,000 outcomes, two random patterns each, over five families of task.
func benchSetWorld(n int) (*learning.ChoiceSet, *learning.ContextIndex, time.Time) {
	r := rand.New(rand.NewPCG(1, 7))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cands := make([]learning.Choice, n)
	for i := range cands {
		q := r.Float64()
		var s, f int64
		for range 100 {
			if r.Float64() < q {
				if r.Float64() < 0.8 {
					s++
				}
			} else {
				f++
			}
		}
		cands[i] = learning.Choice{ID: fmt.Sprintf("pattern-bench-%07d", i),
			Content: fmt.Sprintf("Benchmark pattern %d: split the work by module %d", i, i%97), Successes: s, Failures: f}
	}
	fams := []string{"migrate the orders schema", "fix a flaky test in the billing service",
		"add a settings page to the dashboard", "refactor the auth middleware", "speed up the search endpoint"}
	events := make([]learning.ContextEvent, 5000)
	for k := range events {
		fam := fams[r.IntN(len(fams))]
		events[k] = learning.ContextEvent{OutcomeID: fmt.Sprintf("out-%d", k), TaskID: fmt.Sprintf("bd-%d", k),
			Task: fmt.Sprintf("%s: %s %d", fam, fam, r.IntN(500)), Tags: []string{strings.Fields(fam)[0]},
			Patterns: []string{cands[r.IntN(n)].ID, cands[r.IntN(n)].ID}, Success: r.Float64() < 0.75,
			At: now.Add(-time.Duration(r.Int64N(int64(365 * 24 * time.Hour))))}
	}
	return learning.NewChoiceSet(cands), learning.NewContextIndex(events), now
}

// BenchmarkRecommendSet: the thompson ranking of plan guidance alone, at
// 10,000 and 100,000 patterns, for the tasks `kaizen bench` asks about
// (no tags) and one with a tag.
func BenchmarkRecommendSet(b *testing.B) {
	cfg := learning.DefaultConfig()
	cfg.Ranking = learning.RankingThompson
	for _, n := range []int{10_000, 100_000} {
		set, idx, now := benchSetWorld(n)
		for _, req := range []learning.GuidanceRequest{
			{Task: "Refactor the billing module, one file per subtask"},
			{Task: "fix a flaky test in the payments service", Tags: []string{"fix"}},
		} {
			name := fmt.Sprintf("patterns=%d/tags=%d", n, len(req.Tags))
			b.Run(name, func(b *testing.B) {
				cfg.RecommendSet(req, set, nil, nil, idx, now, 1) // per-index work, once
				seed := uint64(0)
				for b.Loop() {
					seed++
					cfg.RecommendSet(req, set, nil, nil, idx, now.Add(time.Duration(seed)*time.Millisecond), seed)
				}
			})
		}
	}
}

// manyUsedWorld is a project where many patterns were used by indexed
// outcomes of tasks unlike the request's (so their posterior is the
// project's rate shrunk to the prior strength: the family tailDraws draws
// from), a few by similar tasks, and groups of untouched patterns.
func manyUsedWorld() ([]learning.Choice, *learning.ContextIndex, time.Time) {
	r := rand.New(rand.NewPCG(5, 6))
	var cands []learning.Choice
	rates := map[string]float64{}
	for i := range 40 {
		id := fmt.Sprintf("used-%02d", i)
		cands = append(cands, learning.Choice{ID: id, Content: fmt.Sprintf("Used %d", i)})
		rates[id] = 0.15 + 0.8*r.Float64()
	}
	for g, c := range [][2]int64{{0, 0}, {9, 1}, {2, 8}} {
		for k := range 4 + 2*g {
			cands = append(cands, learning.Choice{ID: fmt.Sprintf("g%d-%02d", g, k), Content: fmt.Sprintf("Group %d member %d", g, k),
				Successes: c[0], Failures: c[1]})
		}
	}
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	var events []learning.ContextEvent
	for i := range 150 {
		var a, b int
		task, tag := fmt.Sprintf("alpha beta %d", i%5), "alpha"
		if i%3 == 0 { // similar to the request: patterns 0–4
			a, b = r.IntN(5), r.IntN(5)
		} else { // unlike it: patterns 5–39
			a, b = 5+r.IntN(35), 5+r.IntN(35)
			task, tag = fmt.Sprintf("gamma delta %d", i%7), "gamma"
		}
		p := (rates[cands[a].ID] + rates[cands[b].ID]) / 2
		events = append(events, learning.ContextEvent{OutcomeID: fmt.Sprint(i), Task: task, Tags: []string{tag},
			Patterns: []string{cands[a].ID, cands[b].ID}, Success: r.Float64() < p, At: now.Add(time.Duration(i-150) * time.Hour)})
	}
	return cands, learning.NewContextIndex(events), now
}

// TestRecommendSetSameDistributionManyUsed: with many patterns drawn by
// tailDraws (used only by unlike tasks), RecommendSet's output has the
// distribution of Recommend's (every pattern drawn): the frequency of each
// pattern first, among the recommended and to explore agree within five
// standard errors over 6,000 seeds, and the rates shown are equal.
func TestRecommendSetSameDistributionManyUsed(t *testing.T) {
	cands, idx, now := manyUsedWorld()
	cfg := learning.DefaultConfig()
	cfg.Ranking = learning.RankingThompson
	set := learning.NewChoiceSet(cands)
	const seeds = 6000
	for _, req := range []learning.GuidanceRequest{
		{Task: "alpha beta 2", Tags: []string{"alpha"}, Limit: 3},
		{Task: "alpha beta 4", Tags: []string{"alpha"}, Limit: 1},
	} {
		type freq map[string]float64
		count := func(recommend func(seed uint64) learning.Recommendation) (first, in, explore freq, rates map[string]float64) {
			first, in, explore, rates = freq{}, freq{}, freq{}, map[string]float64{}
			sr := rand.New(rand.NewPCG(13, 14))
			for range seeds {
				rec := recommend(sr.Uint64())
				if len(rec.Recommended) > 0 {
					first[rec.Recommended[0].ID]++
				}
				for _, r := range rec.Recommended {
					in[r.ID]++
					rates[r.ID] = r.Rate
				}
				if rec.Explore != nil {
					explore[rec.Explore.ID]++
				}
			}
			return
		}
		of, oi, oe, orates := count(func(seed uint64) learning.Recommendation { return cfg.Recommend(req, cands, idx, now, seed) })
		nf, ni, ne, nrates := count(func(seed uint64) learning.Recommendation {
			return cfg.RecommendSet(req, set, nil, nil, idx, now, seed)
		})
		famIn := 0.0 // how often a pattern of the family is recommended
		for id, n := range ni {
			var k int
			if _, err := fmt.Sscanf(id, "used-%d", &k); err == nil && k >= 5 {
				famIn += n
			}
		}
		if famIn < seeds/10 {
			t.Fatalf("task %q: the family is recommended %v times in %d: the world does not exercise tailDraws", req.Task, famIn, seeds)
		}
		for _, c := range []struct {
			name     string
			old, new freq
		}{{"first", of, nf}, {"recommended", oi, ni}, {"explore", oe, ne}} {
			sameFrequencies(t, req.Task, c.name, c.old, c.new, seeds)
		}
		sameRates(t, req.Task, orates, nrates)
	}
}

// TestRecommendSetSplitOfUnusedChoices: a set whose changed choices no
// indexed outcome used (the request reuses the local numbering cached with
// the index and only merges the dropped ones into their groups) answers
// like a fresh set, for the same seed.
func TestRecommendSetSplitOfUnusedChoices(t *testing.T) {
	cands, idx, now := manyUsedWorld()
	cfg := learning.DefaultConfig()
	cfg.Ranking = learning.RankingThompson
	whole := learning.NewChoiceSet(cands)
	old := slices.Clone(cands[:len(cands)-2])
	changed := map[string]bool{}
	var extra []learning.Choice
	for i := range old {
		if i >= 40 && i%3 == 0 { // group members only: no outcome used them
			changed[old[i].ID] = true
			extra = append(extra, cands[i])
			if i%2 == 0 { // another group
				old[i].Failures += 3
			} else { // the same group, another content
				old[i].Content += " (older)"
			}
		}
	}
	extra = append(extra, cands[len(cands)-2:]...)
	part := learning.NewChoiceSet(old)
	for _, req := range []learning.GuidanceRequest{{Task: "alpha beta 2", Tags: []string{"alpha"}, Limit: 4}, {Limit: 30}} {
		for seed := range uint64(300) {
			a, _ := json.Marshal(cfg.RecommendSet(req, whole, nil, nil, idx, now, seed))
			b, _ := json.Marshal(cfg.RecommendSet(req, part, changed, extra, idx, now, seed))
			if string(a) != string(b) {
				t.Fatalf("seed %d: the split changed the recommendation:\nwhole %s\nsplit %s", seed, a, b)
			}
		}
	}
}
