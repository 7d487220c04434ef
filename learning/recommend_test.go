package learning_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

var choices = []learning.Choice{{ID: "a", Content: "A"}, {ID: "b", Content: "B"}, {ID: "c", Content: "C"}, {ID: "d", Content: "D"}}

// world draws past outcomes of two families whose best strategies are
// opposite: a and b succeed 90 % on migrations and 20 % on UI work, c and
// d the reverse; a task's success is the mean of its two strategies'.
func world(n int, tags bool) (*learning.ContextIndex, time.Time) {
	rates := map[string]map[string]float64{"migration": {"a": 0.9, "b": 0.9, "c": 0.2, "d": 0.2},
		"ui": {"a": 0.2, "b": 0.2, "c": 0.9, "d": 0.9}}
	desc := map[string]string{"migration": "add a column to the orders table and backfill it", "ui": "add a dark mode toggle to the settings page"}
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var events []learning.ContextEvent
	for i := range n {
		fam := []string{"migration", "ui"}[i%2]
		p1, p2 := choices[r.IntN(4)].ID, choices[r.IntN(4)].ID
		e := learning.ContextEvent{OutcomeID: fmt.Sprint(i), Task: desc[fam], Patterns: []string{p1, p2},
			Success: r.Float64() < (rates[fam][p1]+rates[fam][p2])/2, At: now}
		if tags {
			e.Task, e.Tags = fmt.Sprintf("task number %d", i), []string{fam}
		}
		events = append(events, e)
		now = now.Add(time.Hour)
	}
	return learning.NewContextIndex(events), now
}

func top2(rec learning.Recommendation) [2]string {
	return [2]string{rec.Recommended[0].ID, rec.Recommended[1].ID}
}

// Two families with opposite best strategies get opposite rankings, from
// their descriptions or from their tags alone.
func TestRecommendIsConditionedOnTheTask(t *testing.T) {
	t.Parallel()
	c := learning.DefaultConfig()
	c.Ranking = learning.RankingBayes
	for _, tags := range []bool{false, true} {
		x, now := world(200, tags)
		mig := learning.GuidanceRequest{Task: "add a column to the orders table and backfill it"}
		ui := learning.GuidanceRequest{Task: "add a dark mode toggle to the settings page"}
		if tags {
			mig, ui = learning.GuidanceRequest{Task: "another task", Tags: []string{"migration"}}, learning.GuidanceRequest{Task: "another task", Tags: []string{"ui"}}
		}
		rm, ru := c.Recommend(mig, choices, x, now, 1), c.Recommend(ui, choices, x, now, 1)
		if got := top2(rm); !(got == [2]string{"a", "b"} || got == [2]string{"b", "a"}) {
			t.Errorf("tags=%v: migration ranking %v, want a and b first (%+v)", tags, got, rm.Recommended)
		}
		if got := top2(ru); !(got == [2]string{"c", "d"} || got == [2]string{"d", "c"}) {
			t.Errorf("tags=%v: UI ranking %v, want c and d first (%+v)", tags, got, ru.Recommended)
		}
		if len(rm.SimilarTasks) == 0 || rm.Recommended[0].Similar == 0 {
			t.Errorf("tags=%v: no similar task behind the ranking", tags)
		}
		if iv := rm.Recommended[0].Interval; !(iv[0] < rm.Recommended[0].Rate && rm.Recommended[0].Rate < iv[1]) {
			t.Errorf("tags=%v: rate %v outside its interval %v", tags, rm.Recommended[0].Rate, iv)
		}
	}
}

// A good strategy always paired with a bad one is marked down less than
// the bad one when outcomes are shared by blame; with equal credit both get
// the pair's rate.
func TestRecommendSharesPairedOutcomesByBlame(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rate := map[string]float64{"a": 0.9, "b": 0.1, "c": 0.9, "d": 0.5}
	var events []learning.ContextEvent
	for i := range 400 {
		// a is always paired with b; c and d with each other or with a.
		pair := [][2]string{{"a", "b"}, {"c", "d"}, {"a", "c"}, {"b", "d"}}[i%4]
		ok := r.Float64() < (rate[pair[0]]+rate[pair[1]])/2
		events = append(events, learning.ContextEvent{OutcomeID: fmt.Sprint(i), Patterns: pair[:], Success: ok, At: now})
		now = now.Add(time.Hour)
	}
	x := learning.NewContextIndex(events)
	rates := func(credit string) map[string]float64 {
		c := learning.DefaultConfig()
		c.Ranking, c.Context.Credit, c.Context.UseHalfLife = learning.RankingBayes, credit, 0
		out := map[string]float64{}
		for _, it := range c.Recommend(learning.GuidanceRequest{}, choices, x, now, 1).Recommended {
			out[it.ID] = it.Rate
		}
		return out
	}
	blame, equal := rates("blame"), rates("equal")
	if !(blame["a"] > blame["d"] && blame["d"] > blame["b"]) {
		t.Errorf("blame: rates %v, want a > d > b", blame)
	}
	if blame["a"]-blame["b"] <= equal["a"]-equal["b"] {
		t.Errorf("blame separates a from b by %.3f, equal credit by %.3f: blame must separate more", blame["a"]-blame["b"], equal["a"]-equal["b"])
	}
}

// A strategy whose success rate drops is re-ranked within tens of uses:
// recent uses weigh more (use half-life).
func TestRecommendFollowsDrift(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var events []learning.ContextEvent
	for i := range 200 { // a was the best for 200 tasks…
		events = append(events, learning.ContextEvent{OutcomeID: fmt.Sprint(i), Patterns: []string{"a"}, Success: i%10 != 0, At: now},
			learning.ContextEvent{OutcomeID: fmt.Sprint("b", i), Patterns: []string{"b"}, Success: i%10 < 6, At: now})
		now = now.Add(time.Hour)
	}
	for i := range 30 { // …then it fails
		events = append(events, learning.ContextEvent{OutcomeID: fmt.Sprint("x", i), Patterns: []string{"a"}, Success: false, At: now},
			learning.ContextEvent{OutcomeID: fmt.Sprint("y", i), Patterns: []string{"b"}, Success: i%10 < 6, At: now})
		now = now.Add(time.Hour)
	}
	c := learning.DefaultConfig()
	c.Ranking = learning.RankingBayes
	rec := c.Recommend(learning.GuidanceRequest{}, choices, learning.NewContextIndex(events), now, 1)
	if rec.Recommended[0].ID != "b" {
		t.Errorf("after 30 failures of a: ranking %+v, want b first", rec.Recommended)
	}
}

// The same request at the same instant draws the same thompson ranking;
// another instant may draw another.
func TestThompsonIsReproducible(t *testing.T) {
	t.Parallel()
	x, now := world(60, true)
	c := learning.DefaultConfig()
	req := learning.GuidanceRequest{Task: "t", Tags: []string{"ui"}}
	a := c.Recommend(req, choices, x, now, learning.RequestSeed(req, now))
	b := c.Recommend(req, choices, x, now, learning.RequestSeed(req, now))
	ja, _ := json.Marshal(a) // by value: Explore is a pointer
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("two identical requests drew different rankings:\n%s\n%s", ja, jb)
	}
}

func TestBetaQuantilesAndSampling(t *testing.T) {
	t.Parallel()
	b := learning.Beta{Alpha: 3, Beta: 7}
	if m := b.Mean(); m != 0.3 {
		t.Errorf("mean %v", m)
	}
	// Beta(3,7): the median is about 0.2862.
	if q := b.Quantile(0.5); q < 0.2855 || q > 0.2869 {
		t.Errorf("median %v, want 0.2862", q)
	}
	if iv := b.Interval95(); !(iv[0] > 0.06 && iv[0] < 0.09 && iv[1] > 0.59 && iv[1] < 0.63) {
		t.Errorf("95%% interval %v, want about [0.075, 0.608]", iv)
	}
	r := learning.NewRand(42)
	sum := 0.0
	for range 20000 {
		sum += b.Sample(r)
	}
	if m := sum / 20000; m < 0.29 || m > 0.31 {
		t.Errorf("sample mean %v, want 0.3", m)
	}
}

// UpperBound never falls below the exact quantile (it is a bound the
// ranking relies on to skip the exact computation).
func TestBetaUpperBoundBoundsTheQuantile(t *testing.T) {
	for _, a := range []float64{0.5, 1, 2, 7.3, 40, 900} {
		for _, b := range []float64{0.5, 1, 3, 11.1, 60, 1200} {
			for _, p := range []float64{0.55, 0.9, 0.975} {
				d := learning.Beta{Alpha: a, Beta: b}
				if ub, q := d.UpperBound(p), d.Quantile(p); ub < q-1e-6 {
					t.Errorf("Beta(%g,%g): UpperBound(%g) = %g below the quantile %g", a, b, p, ub, q)
				}
			}
		}
	}
}

// A pattern none of whose uses is among the indexed outcomes (older than
// the history, or recorded without an outcome) is judged on its own use
// counts, not as a pattern never tried.
func TestRecommendFallsBackToPatternCounts(t *testing.T) {
	t.Parallel()
	c := learning.DefaultConfig()
	c.Ranking = learning.RankingBayes
	cands := []learning.Choice{{ID: "proven", Content: "Proven", Successes: 19, Failures: 1},
		{ID: "failing", Content: "Failing", Successes: 1, Failures: 19}, {ID: "new", Content: "New"}}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := c.Recommend(learning.GuidanceRequest{Task: "anything"}, cands, learning.NewContextIndex(nil), now, 1)
	if rec.Recommended[0].ID != "proven" || rec.Recommended[0].Rate < 0.85 || rec.Recommended[0].Overall != 20 {
		t.Errorf("recommended %+v, want proven first at its counts' rate", rec.Recommended)
	}
	if len(rec.Avoid) != 1 || rec.Avoid[0].ID != "failing" {
		t.Errorf("avoid %+v, want the failing pattern", rec.Avoid)
	}
	for _, r := range rec.Recommended {
		if r.ID == "new" && r.Rate != 0.5 {
			t.Errorf("a pattern never used has rate %v, want the flat prior's 0.5", r.Rate)
		}
	}
}
