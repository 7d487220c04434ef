package kaizen_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// TestGuidanceIsConditionedOnTheTask: two families of tasks whose best
// strategies are opposite get opposite recommendations through the engine:
// from the outcomes of past tasks with the same description, and from
// tags for tasks never seen before. The recommendation names the past
// tasks behind it.
func TestGuidanceIsConditionedOnTheTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		// bayes ranks by the posterior mean, so the test is not at the mercy
		// of thompson's draws (which explore the strategies never tried).
		b := setup(t, backend, func(c *kaizen.Config) { c.Learning.Ranking = "bayes" })
		desc := map[bool]string{true: "add a column to the orders table and backfill it",
			false: "add a dark mode toggle to the settings page"}
		tag := map[bool]string{true: "migration", false: "ui"}
		good := map[bool][]string{true: {"Sequential execution order", "Respect dependency chain"},
			false: {"Maximize parallelization", "Split by component"}}
		all := append(slices.Clone(good[true]), good[false]...)
		r := rand.New(rand.NewPCG(7, 7))
		for i := range 160 {
			mig := i%2 == 0
			p := all[r.IntN(4)]
			success := r.Float64() < 0.15
			if slices.Contains(good[mig], p) {
				success = r.Float64() < 0.9
			}
			in := outcome(sprintf("t%d", i), success, p)
			in.Task, in.Tags = desc[mig], []string{tag[mig]}
			if _, err := b.e.RecordOutcome(ctx, in); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Hour)
		}
		for _, mig := range []bool{true, false} {
			for _, in := range []kaizen.PlanInput{{Task: desc[mig]}, {Task: "a task never seen before", Tags: []string{tag[mig]}}} {
				g, err := b.e.PlanGuidance(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				if g.Ranking != "bayes" || len(g.Recommended) < 2 || len(g.SimilarTasks) == 0 {
					t.Fatalf("%+v: recommendation %+v", in, g.Recommendation)
				}
				for _, r := range g.Recommended[:2] {
					if !slices.Contains(good[mig], r.Content) {
						t.Errorf("%+v: top two %s, %s, want %v", in, g.Recommended[0].Content, g.Recommended[1].Content, good[mig])
					}
				}
				for _, s := range g.SimilarTasks {
					if s.Task != desc[mig] {
						t.Errorf("%+v: similar task %q is of the other family", in, s.Task)
					}
				}
			}
		}
		// The markdown shows the recommendation with rates and intervals.
		g, _ := b.e.PlanGuidance(ctx, kaizen.PlanInput{Task: desc[true]})
		if md := g.Markdown(); !containsAll(md, "Recommended for this task", "similar past task", "%") {
			t.Errorf("markdown lacks the recommendation:\n%s", md)
		}
	})
}

// TestWronglyInvertedPatternRecovers: a pattern that failed 2 of its first
// 3 uses becomes an anti-pattern (the seed's rule); when it then succeeds,
// the uses since the inversion no longer meet the rule and the
// anti-pattern is withdrawn: the pattern is evaluated anew.
func TestWronglyInvertedPatternRecovers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		const p = "Respect dependency chain"
		for i, ok := range []bool{false, false, true} {
			res, err := b.e.RecordOutcome(ctx, outcome(sprintf("t%d", i), ok, p))
			if err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Hour)
			if i == 2 && len(res.Inversions) != 1 {
				t.Fatalf("2 of 3 failed: want the seed's inversion, got %+v", res.Inversions)
			}
		}
		var recovered bool
		for i := 3; i < 7; i++ {
			res, err := b.e.RecordOutcome(ctx, outcome(sprintf("t%d", i), true, p))
			if err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Hour)
			if u := res.Patterns[0]; u.Recovered != nil {
				recovered = true
				if i != 5 || u.Recovered.Successes != 3 || u.Recovered.Failures != 0 {
					t.Errorf("recovered at use %d: %+v, want after 3 successes since the inversion", i, u.Recovered)
				}
			}
		}
		if !recovered {
			t.Fatal("the anti-pattern was never withdrawn")
		}
		list, err := b.e.ListPatterns(ctx, kaizen.PatternQuery{Kind: "anti_pattern"})
		if err != nil || list.Total != 0 {
			t.Fatalf("anti-patterns after the recovery: %+v %v", list, err)
		}
		d, err := b.e.GetPattern(ctx, "", p)
		if err != nil {
			t.Fatal(err)
		}
		if d.AntiPatternID != "" || d.Generation != 1 || d.SuccessCount != 1 {
			t.Errorf("after the recovery: %+v (want a new generation counting the use after it)", d.Pattern)
		}
		// With recovery off, the inversion stays (the seed's behaviour).
		off := setup(t, backend, func(c *kaizen.Config) { c.Learning.AntiPatternRecovery = false })
		for i, ok := range []bool{false, false, true, true, true, true, true} {
			if _, err := off.e.RecordOutcome(ctx, outcome(sprintf("t%d", i), ok, p)); err != nil {
				t.Fatal(err)
			}
		}
		if list, _ := off.e.ListPatterns(ctx, kaizen.PatternQuery{Kind: "anti_pattern"}); list.Total != 1 {
			t.Errorf("recovery off: %d anti-patterns, want 1", list.Total)
		}
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !contains(s, sub) {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestCriteriaJudgedFromTheirEvidence: tasks whose errors are type errors
// mark type_safe down, not no_bugs; when every outcome judged the criteria
// alike, plan guidance prints no criterion block.
func TestCriteriaJudgedFromTheirEvidence(t *testing.T) {
	b := setup(t, "sqlite")
	g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := b.e.RecordOutcome(ctx, outcome(sprintf("ok%d", i), true)); err != nil {
			t.Fatal(err)
		}
	}
	g, _ = b.e.PlanGuidance(ctx, kaizen.PlanInput{})
	if contains(g.Markdown(), "criteria weights") {
		t.Errorf("identical criterion weights printed:\n%s", g.Markdown())
	}
	for i := range 4 {
		task := sprintf("typed%d", i)
		for _, msg := range []string{"src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'",
			"cannot use x (variable of type int) as string value in argument", "error[E0308]: mismatched types"} {
			if _, err := b.e.RecordError(ctx, kaizen.ErrorInput{TaskID: task, Type: "tool_failure", Message: msg}); err != nil {
				t.Fatal(err)
			}
		}
		in := outcome(task, false)
		in.ErrorCount, in.RetryCount = nil, ptr(2) // errors from the accumulator
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := b.e.ListCriteria(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	w := map[string]float64{}
	for _, c := range ws.Items {
		w[c.Criterion] = c.RawWeight
	}
	if !(w["type_safe"] < w["no_bugs"]) {
		t.Errorf("type errors: type_safe %.3f, no_bugs %.3f; want type_safe lower", w["type_safe"], w["no_bugs"])
	}
	g, _ = b.e.PlanGuidance(ctx, kaizen.PlanInput{})
	if !contains(g.Markdown(), "criteria weights") {
		t.Errorf("differing criterion weights not printed:\n%s", g.Markdown())
	}
}

// TestDeletedOutcomeLeavesTheRecommendation: forgetting an outcome removes
// it from the past tasks a recommendation is based on.
func TestDeletedOutcomeLeavesTheRecommendation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, func(c *kaizen.Config) { c.Learning.Ranking = "bayes" })
		var ids []string
		for i, task := range []string{"rotate the signing keys of the billing service", "rename the settings page"} {
			in := outcome(sprintf("d%d", i), true, "Split by feature")
			in.Task = task
			res, err := b.e.RecordOutcome(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Outcome.ID)
			b.clock.Advance(time.Hour)
		}
		similar := func() []string {
			g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{Task: "rotate the signing keys of the auth service"})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range g.SimilarTasks {
				out = append(out, s.OutcomeID)
			}
			return out
		}
		if got := similar(); !slices.Contains(got, ids[0]) {
			t.Fatalf("similar tasks %v lack the key rotation %s", got, ids[0])
		}
		if _, err := b.e.DeleteOutcome(ctx, kaizen.ForgetInput{ID: ids[0]}); err != nil {
			t.Fatal(err)
		}
		if got := similar(); slices.Contains(got, ids[0]) {
			t.Errorf("similar tasks %v still hold the deleted outcome %s", got, ids[0])
		}
	})
}
