package kaizen_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// curveChangeKey identifies a guidance change for comparison.
type curveChangeKey struct {
	Outcome int
	Kind    string
	Pattern string
}

// TestLearningCurveAgreesWithTheEngine records random outcomes (strategies
// with different success rates, gaps from an hour to ten days so that
// decay matters, a strategy that turns bad and then good again) and checks
// that the curve's guidance changes, recomputed from the stored
// observations, are exactly the transitions the engine reported as it
// recorded them: patterns becoming proven or deprecated, inversions and
// recoveries, at the same outcome. The rolling and cumulative rates are
// checked against a direct count.
func TestLearningCurveAgreesWithTheEngine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		seen := map[string]bool{}
		for _, seed := range []uint64{1, 7} {
			b := setup(t, backend)
			rng := rand.New(rand.NewPCG(seed, 42))
			strategies := []string{"Split by feature", "Split by file type", "Respect dependency chain", "Test first"}
			var want []curveChangeKey
			var results []bool
			at := start
			n := 90
			if backend != "sqlite" {
				n = 40 // PostgreSQL is slower on this shared machine; the logic is the same
			}
			for i := range n {
				at = at.Add(time.Hour + time.Duration(rng.IntN(240))*time.Hour)
				b.clock.Set(at)
				k := rng.IntN(len(strategies))
				used := []string{strategies[k]}
				if rng.IntN(3) == 0 {
					used = append(used, strategies[(k+1)%len(strategies)])
				}
				// Feature is good; file type bad; dependency chain bad, then
				// good after outcome 30; test first a coin.
				p := []float64{0.9, 0.15, 0.1, 0.5}[k]
				if k == 2 && i >= 30 {
					p = 0.95
				}
				ok := rng.Float64() < p
				res, err := b.e.RecordOutcome(ctx, outcome(sprintf("t-%d", i), ok, used...))
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, ok)
				for _, u := range res.Patterns {
					if u.Recovered != nil {
						want = append(want, curveChangeKey{i + 1, kaizen.CurveRecovered, u.ID})
					}
					if u.StateAfter != u.StateBefore && (u.StateAfter == learning.Proven || u.StateAfter == learning.Deprecated) {
						want = append(want, curveChangeKey{i + 1, string(u.StateAfter), u.ID})
					}
					if u.AntiPattern != nil && u.AntiPattern.New {
						want = append(want, curveChangeKey{i + 1, kaizen.CurveAntiPattern, u.ID})
					}
				}
			}
			c, err := b.e.LearningCurve(ctx, kaizen.CurveQuery{Window: 10, Points: 7})
			if err != nil {
				t.Fatal(err)
			}
			var got []curveChangeKey
			for _, ch := range c.Changes {
				got = append(got, curveChangeKey{ch.Outcome, ch.Kind, ch.PatternID})
				if ch.Content == "" || ch.Detail == "" || ch.TaskID != sprintf("t-%d", ch.Outcome-1) {
					t.Errorf("seed %d: change without its pattern, detail or task: %+v", seed, ch)
				}
			}
			cmpKey := func(a, b curveChangeKey) int {
				if a.Outcome != b.Outcome {
					return a.Outcome - b.Outcome
				}
				if a.Pattern != b.Pattern {
					return compareStrings(a.Pattern, b.Pattern)
				}
				return compareStrings(a.Kind, b.Kind)
			}
			slices.SortFunc(want, cmpKey)
			slices.SortFunc(got, cmpKey)
			if !slices.Equal(want, got) {
				t.Errorf("seed %d: changes\n got  %v\n want %v", seed, got, want)
			}
			for _, w := range want {
				seen[w.Kind] = true
			}
			if len(want) == 0 {
				t.Errorf("seed %d: the script changed no guidance; it tests nothing", seed)
			}
			if c.Outcomes != n || c.Skipped != 0 || c.ChangesTotal != len(c.Changes) {
				t.Errorf("seed %d: outcomes %d skipped %d changes %d/%d", seed, c.Outcomes, c.Skipped, len(c.Changes), c.ChangesTotal)
			}
			// Points: 7 evenly spaced plus the changes' outcomes, in order,
			// the last outcome included.
			if len(c.Points) < 7 || c.Points[len(c.Points)-1].Outcome != n || c.Points[0].Outcome != 1 {
				t.Fatalf("seed %d: points %d, first %+v", seed, len(c.Points), c.Points[0])
			}
			for _, ch := range c.Changes {
				if !slices.ContainsFunc(c.Points, func(p kaizen.CurvePoint) bool { return p.Outcome == ch.Outcome }) {
					t.Errorf("seed %d: no point at the change's outcome %d", seed, ch.Outcome)
				}
			}
			for i, p := range c.Points {
				if i > 0 && p.Outcome <= c.Points[i-1].Outcome {
					t.Fatalf("seed %d: points out of order at %d", seed, i)
				}
				from := max(0, p.Outcome-10)
				okN := 0
				for _, r := range results[from:p.Outcome] {
					if r {
						okN++
					}
				}
				r := p.Rolling
				if r.Total != p.Outcome-from || r.Succeeded != okN || !(r.Low <= r.Rate && r.Rate <= r.High) {
					t.Errorf("seed %d: rolling at %d = %+v, want %d of %d", seed, p.Outcome, r, okN, p.Outcome-from)
				}
				if want := learning.Wilson95(int64(okN), int64(r.Total)); r.Low != want[0] || r.High != want[1] {
					t.Errorf("seed %d: interval at %d = %v–%v, want %v", seed, p.Outcome, r.Low, r.High, want)
				}
				if p.Cumulative.Total != p.Outcome {
					t.Errorf("seed %d: cumulative at %d counts %d", seed, p.Outcome, p.Cumulative.Total)
				}
			}
			if c.Last != c.Points[len(c.Points)-1].Rolling || c.First.Total != 10 {
				t.Errorf("seed %d: first %+v last %+v", seed, c.First, c.Last)
			}
		}
		for _, k := range []string{kaizen.CurveProven, kaizen.CurveAntiPattern, kaizen.CurveRecovered} {
			if !seen[k] {
				t.Errorf("no %s change in the scripts: the test does not cover it", k)
			}
		}
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestLearningCurveScriptedWeek: after the scripted week the curve names
// the pattern proven before the week (no longer proven: its evidence
// decayed), the one proven during it and the anti-pattern, at their
// outcomes; deleting an outcome recomputes it; bad queries are refused.
func TestLearningCurveScriptedWeek(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		empty, err := b.e.LearningCurve(ctx, kaizen.CurveQuery{})
		if err != nil || empty.Outcomes != 0 || len(empty.Points) != 0 || len(empty.Changes) != 0 || empty.Window != 20 {
			t.Fatalf("empty curve: %+v %v", empty, err)
		}
		scriptedWeek(t, b, "proj")
		c, err := b.e.LearningCurve(ctx, kaizen.CurveQuery{Project: "proj"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Outcomes != 25 || len(c.Points) != 25 {
			t.Fatalf("outcomes %d points %d", c.Outcomes, len(c.Points))
		}
		kinds := map[string]kaizen.CurveChange{}
		for _, ch := range c.Changes {
			kinds[ch.Content+"/"+ch.Kind] = ch
		}
		review, feature, filetype := kinds["Review before merge/proven"], kinds["Split by feature/proven"], kinds["Split by file type/anti_pattern"]
		// Review: 8 successes 60 days before the week, proven at the 5th;
		// its evidence has decayed since, so it is no longer proven. Feature:
		// two successes a day from outcome 9 (with file type's failures on
		// odd days), proven at its 6th use, day 2's second (outcome 15: the
		// 5th falls short after two days of decay). File type: inverted at
		// its third failure, day 5's (outcome 23).
		if review.Outcome != 5 || review.TaskID != "old-4" || review.Current {
			t.Errorf("review proven: %+v", review)
		}
		if feature.TaskID != "feature-2-1" || feature.Outcome != 15 || !feature.Current {
			t.Errorf("feature proven: %+v", feature)
		}
		if filetype.TaskID != "filetype-5" || filetype.Outcome != 23 || !filetype.Current || filetype.Detail != "Failed 3/3 times (100% failure rate)" {
			t.Errorf("file type inverted: %+v", filetype)
		}
		if len(c.Changes) != 3 {
			t.Errorf("changes: %+v", c.Changes)
		}
		// Deleting the outcome that inverted file type recomputes the
		// curve: one outcome fewer, no inversion (two failures remain).
		list, err := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: "proj", TaskID: "filetype-5"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("outcomes of filetype-5: %v %v", list, err)
		}
		if _, err := b.e.DeleteOutcome(ctx, kaizen.ForgetInput{Project: "proj", ID: list.Items[0].ID}); err != nil {
			t.Fatal(err)
		}
		c, err = b.e.LearningCurve(ctx, kaizen.CurveQuery{Project: "proj"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Outcomes != 24 || len(c.Changes) != 2 || c.Changes[1].Content != "Split by feature" {
			t.Errorf("after deleting filetype-5: %d outcomes, changes %+v", c.Outcomes, c.Changes)
		}
		if _, err := b.e.LearningCurve(ctx, kaizen.CurveQuery{Window: 1001}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("window 1001: %v", err)
		}
		if _, err := b.e.LearningCurve(ctx, kaizen.CurveQuery{Points: 1}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("points 1: %v", err)
		}
		if _, err := b.e.LearningCurve(ctx, kaizen.CurveQuery{Window: -1}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("window -1: %v", err)
		}
	})
}

// BenchmarkLearningCurve measures the curve of a SQLite project with 3 000
// outcomes using 2 of 40 strategies each (6 000 observations to replay),
// against listing the project's newest 1 000 outcomes once (the baseline,
// measured in the same run: the machine is shared).
func BenchmarkLearningCurve(b *testing.B) {
	bb := setup(b, "sqlite")
	rng := rand.New(rand.NewPCG(3, 4))
	at := start
	for i := range 3000 {
		at = at.Add(time.Duration(1+rng.IntN(120)) * time.Minute)
		bb.clock.Set(at)
		k := rng.IntN(40)
		in := outcome(sprintf("t-%d", i), rng.Float64() < 0.3+float64(k)/60, sprintf("Strategy %d", k), sprintf("Strategy %d", (k+7)%40))
		if _, err := bb.e.RecordOutcome(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("curve", func(b *testing.B) {
		for b.Loop() {
			if _, err := bb.e.LearningCurve(ctx, kaizen.CurveQuery{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-list-1000-outcomes", func(b *testing.B) {
		for b.Loop() {
			if _, err := bb.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Limit: 1000}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
