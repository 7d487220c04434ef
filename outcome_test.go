package kaizen_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/learning"
)

// The whole loop of the seed on every backend: outcomes become feedback,
// observations, maturity and, at 5 failures out of 7, an anti-pattern that
// plan guidance warns about.
func TestLearningLoopSeedInversion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		// S,S,F,F,F reaches 3/5 = 0.6 ≥ 0.6 at the fifth outcome (no order of
		// 2 successes and 5 failures stays below 0.6 until the seventh); the
		// anti-pattern is then kept current and reads the seed's 5/7 at the end.
		var inv learning.Inversion
		for i, ok := range []bool{true, true, false, false, false, false, false} {
			b.clock.Advance(time.Minute)
			res, err := b.e.RecordOutcome(ctx, outcome(sprintf("bd-%d", i), ok, "Split by file type"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Patterns) != 1 || len(res.Feedback) != 4 {
				t.Fatalf("outcome %d: %d pattern updates, %d feedback events", i, len(res.Patterns), len(res.Feedback))
			}
			if want := b2i(i == 4); len(res.Inversions) != want {
				t.Fatalf("outcome %d: %d inversions, want %d", i, len(res.Inversions), want)
			}
			if i == 4 {
				inv = res.Inversions[0]
			}
		}
		if inv.Reason != "Failed 3/5 times (60% failure rate)" || inv.Inverted.ID != "anti-"+inv.Original.ID ||
			!strings.HasPrefix(inv.Original.ID, "pattern-") || inv.Inverted.Kind != learning.KindAntiPattern || !inv.Inverted.IsNegative {
			t.Errorf("inversion %+v", inv)
		}
		d0, err := b.e.GetPattern(ctx, "", inv.Original.ID)
		if err != nil || d0.AntiPattern == nil ||
			d0.AntiPattern.Content != "AVOID: Split by file type. Failed 5/7 times (71% failure rate)" ||
			d0.AntiPattern.SuccessCount != 2 || d0.AntiPattern.FailureCount != 5 {
			t.Fatalf("anti-pattern after 7 outcomes: %+v %v", d0.AntiPattern, err)
		}
		antis, err := b.e.ListPatterns(ctx, kaizen.PatternQuery{Kind: learning.KindAntiPattern})
		if err != nil || antis.Total != 1 || antis.Items[0].ID != inv.Inverted.ID {
			t.Fatalf("anti-patterns %+v err %v", antis, err)
		}
		g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{Task: "We will split by file type"})
		if err != nil {
			t.Fatal(err)
		}
		if len(g.AntiPatterns) != 1 || !g.AntiPatterns[0].Mentioned || len(g.Warnings) != 1 || len(g.Patterns) != 0 {
			t.Errorf("guidance %+v", g)
		}
		// An eighth observation refreshes the anti-pattern instead of inverting again.
		res, err := b.e.RecordOutcome(ctx, outcome("bd-8", false, "split by file type"))
		if err != nil || len(res.Inversions) != 0 {
			t.Fatalf("refresh: %v %+v", err, res)
		}
		d, err := b.e.GetPattern(ctx, "", inv.Original.ID)
		if err != nil || d.AntiPattern == nil || d.AntiPattern.Reason != "Failed 6/8 times (75% failure rate)" {
			t.Fatalf("refreshed anti-pattern: %+v %v", d, err)
		}
	})
}

func TestOutcomeMaturityAndCriteria(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		for i := range 6 {
			b.clock.Advance(time.Hour)
			res, err := b.e.RecordOutcome(ctx, outcome(sprintf("bd-%d", i), true, "Split by feature"))
			if err != nil {
				t.Fatal(err)
			}
			want := learning.Candidate
			switch {
			case i >= 4: // ≥ 5 helpful within tolerance after a few hours of decay
				want = learning.Proven
			case i >= 2:
				want = learning.Established
			}
			if got := res.Patterns[0].StateAfter; got != want {
				t.Errorf("after %d helpful outcomes: %s, want %s", i+1, got, want)
			}
			if res.Outcome.Score.Type != learning.Helpful || res.Outcome.Score.Raw != 1 {
				t.Errorf("score %+v", res.Outcome.Score)
			}
		}
		wspage, err := b.e.ListCriteria(ctx, "")
		ws := wspage.Items
		if err != nil || len(ws) != 4 {
			t.Fatalf("criteria %v %v", ws, err)
		}
		for _, w := range ws {
			if w.Weight != 1 || w.HelpfulCount != 6 {
				t.Errorf("criterion %+v", w)
			}
		}
		// A harmful outcome judged on one criterion only lowers that one.
		in := outcome("bd-x", false, "Split by feature")
		in.DurationMs, in.ErrorCount, in.RetryCount, in.Criteria = ptr(int64(3_600_000)), ptr(5), ptr(3), []string{"no_bugs"}
		res, err := b.e.RecordOutcome(ctx, in)
		if err != nil || res.Outcome.Score.Type != learning.Harmful || len(res.Weighted) != 1 {
			t.Fatalf("%+v %v", res, err)
		}
		x, err := b.e.ExplainCriterion(ctx, "", "no_bugs")
		if err != nil || x.Weight.HarmfulCount != 1 || x.Weight.Weight >= 1 {
			t.Fatalf("explain %+v %v", x, err)
		}
		// 90 days later every weight still uses decay once (not twice).
		b.clock.Advance(90 * 24 * time.Hour)
		x2, err := b.e.ExplainCriterion(ctx, "", "no_bugs")
		if err != nil {
			t.Fatal(err)
		}
		ratio := x2.Weight.HarmfulSum / x.Weight.HarmfulSum
		if math.Abs(ratio-0.5) > 1e-6 {
			t.Errorf("after one half-life the harmful sum is ×%v, want ×0.5", ratio)
		}
	})
}

func TestErrorCountFromAccumulator(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		var ids []string
		for i, typ := range []string{"validation", "validation", "tool_failure"} {
			e, err := b.e.RecordError(ctx, kaizen.ErrorInput{TaskID: "bd-7", Type: typ, Message: sprintf("error %d", i), ToolName: "tsc"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, e.ID)
		}
		if _, err := b.e.ResolveError(ctx, "", ids[0]); err != nil {
			t.Fatal(err)
		}
		st, err := b.e.ErrorStats(ctx, "", "bd-7")
		if err != nil || st.Total != 3 || st.Unresolved != 2 || st.ByType["validation"] != 2 {
			t.Fatalf("stats %+v %v", st, err)
		}
		cx, err := b.e.ErrorContext(ctx, "", "bd-7", false)
		if err != nil || len(cx.Errors) != 2 || !strings.Contains(cx.Markdown, "### validation (1 error)") {
			t.Fatalf("context %+v %v", cx, err)
		}
		in := outcome("bd-7", true)
		in.ErrorCount = nil
		res, err := b.e.RecordOutcome(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome.ErrorCount != 3 || res.Outcome.ErrorCountSource != "accumulator" || res.Outcome.Score.Errors != 0.2 {
			t.Errorf("error_count %d from %s (bucket %v)", res.Outcome.ErrorCount, res.Outcome.ErrorCountSource, res.Outcome.Score.Errors)
		}
		g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{TaskID: "bd-7"})
		if err != nil || len(g.OpenErrors) != 2 {
			t.Fatalf("guidance open errors %v %v", g.OpenErrors, err)
		}
		_, err = b.e.ResolveError(ctx, "", "err-missing")
		if kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("resolve missing: %v", err)
		}
	})
}

func TestStrategyAndDescriptionBecomePatterns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		in := outcome("bd-1", true, "Split by feature")
		in.Strategy = "feature-based"
		in.Description = "按功能拆分, then respect the dependency chain"
		res, err := b.e.RecordOutcome(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Patterns) != 3 { // feature (listed and in the description, deduplicated), dependencies, strategy
			t.Fatalf("%d patterns: %+v", len(res.Patterns), res.Patterns)
		}
		list, err := b.e.ListPatterns(ctx, kaizen.PatternQuery{Tag: "strategy:split-by-feature"})
		if err != nil || list.Total != 1 || list.Items[0].Content != "Split by feature" {
			t.Fatalf("strategy tag lookup %+v %v", list, err)
		}
		// The Chinese label resolves to the same pattern.
		d, err := b.e.GetPattern(ctx, "", "按功能拆分")
		if err != nil || d.ID != list.Items[0].ID {
			t.Fatalf("chinese label: %v %v", d, err)
		}
	})
}

func TestManualPatternLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		for i := range 7 {
			if _, err := b.e.RecordOutcome(ctx, outcome(sprintf("bd-%d", i), i < 2, "One file per subtask")); err != nil {
				t.Fatal(err)
			}
		}
		_, err := b.e.DeprecatePattern(ctx, kaizen.ManualInput{Pattern: "One file per subtask"})
		if kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Fatalf("deprecate without reason: %v", err)
		}
		dep, err := b.e.DeprecatePattern(ctx, kaizen.ManualInput{Pattern: "One file per subtask", Reason: "file conflicts in 80% of cases"})
		if err != nil || dep.Pattern.Maturity.State != learning.Deprecated || dep.Pattern.Label != "[DEPRECATED - file conflicts in 80% of cases]" {
			t.Fatalf("deprecate %+v %v", dep, err)
		}
		if _, err := b.e.PromotePattern(ctx, kaizen.ManualInput{Pattern: "One file per subtask"}); kaizen.KindOf(err) != kaizen.KindConflict {
			t.Fatalf("promote deprecated: %v", err)
		}
		x, err := b.e.ExplainPattern(ctx, "", "One file per subtask")
		if err != nil || !strings.Contains(strings.Join(x.Why, "\n"), "deprecated manually") {
			t.Fatalf("explain %+v %v", x, err)
		}
		res, err := b.e.ResetPattern(ctx, kaizen.ManualInput{Pattern: "One file per subtask"})
		if err != nil || res.Pattern.SuccessCount != 0 || res.Pattern.Maturity.State != learning.Candidate || len(res.Notes) != 1 {
			t.Fatalf("reset %+v %v", res, err)
		}
		antis, _ := b.e.ListPatterns(ctx, kaizen.PatternQuery{Kind: learning.KindAntiPattern})
		if antis.Total != 0 {
			t.Errorf("reset must remove the anti-pattern")
		}
		if _, err := b.e.PromotePattern(ctx, kaizen.ManualInput{Pattern: "One file per subtask", Reason: "validated"}); err != nil {
			t.Fatalf("promote after reset: %v", err)
		}
		// Evidence after the reset counts, the old evidence does not.
		r2, err := b.e.RecordOutcome(ctx, outcome("bd-new", false, "One file per subtask"))
		if err != nil || r2.Patterns[0].SuccessCount != 0 || r2.Patterns[0].FailureCount != 1 || r2.Patterns[0].StateAfter != learning.Proven {
			t.Fatalf("after reset %+v %v", r2.Patterns, err)
		}
		if _, err := b.e.PromotePattern(ctx, kaizen.ManualInput{Pattern: "pattern-nope"}); kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("promote missing: %v", err)
		}
	})
}

func TestProjectsAreIsolated(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		in := outcome("bd-1", true, "Split by feature")
		in.Project = "alpha"
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"beta", "proj"} {
			list, err := b.e.ListPatterns(ctx, kaizen.PatternQuery{Project: p})
			if err != nil || list.Total != 0 {
				t.Errorf("project %s sees %d patterns", p, list.Total)
			}
			o, err := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: p})
			if err != nil || o.Total != 0 {
				t.Errorf("project %s sees %d outcomes", p, o.Total)
			}
		}
	})
}

// Time travel: evaluating before the newest event recomputes from events,
// and after it uses the O(1) sums; both agree with recomputation.
func TestEvaluateAtAnyInstant(t *testing.T) {
	b := setup(t, "sqlite")
	for i := range 4 {
		b.clock.Advance(24 * time.Hour)
		if _, err := b.e.RecordOutcome(ctx, outcome(sprintf("bd-%d", i), true, "Split by feature")); err != nil {
			t.Fatal(err)
		}
	}
	c := kaizen.DefaultConfig()
	c.DB, c.Project = b.cfg.DB, "proj"
	past := testkit.NewClock(start.Add(36 * time.Hour)) // after the first event only
	c.Now = past.Now
	e2, err := kaizen.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	d, err := e2.GetPattern(ctx, "", "Split by feature")
	if err != nil {
		t.Fatal(err)
	}
	// Events after "now" count at full value (age clamped at zero): 1 event 12h old + 3 future ones.
	want := math.Exp2(-0.5/90) + 3
	if math.Abs(d.Maturity.DecayedHelpful-want) > 1e-9 {
		t.Errorf("decayed helpful in the past = %v, want %v", d.Maturity.DecayedHelpful, want)
	}
}

func TestHalfLifeChangeRebuildsAggregates(t *testing.T) {
	b := setup(t, "sqlite")
	for i := range 3 {
		b.clock.Advance(30 * 24 * time.Hour)
		if _, err := b.e.RecordOutcome(ctx, outcome(sprintf("bd-%d", i), true, "Split by feature")); err != nil {
			t.Fatal(err)
		}
	}
	b.e.Close()
	c := b.cfg
	c.Learning.Maturity.HalfLifeDays, c.Learning.HalfLifeDays = 30, 30
	e2, err := kaizen.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	d, err := e2.GetPattern(ctx, "", "Split by feature")
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + 0.5 + 0.25 // events 0, 30 and 60 days old with a 30-day half-life
	if math.Abs(d.Maturity.DecayedHelpful-want) > 1e-9 {
		t.Errorf("after half-life change: %v, want %v", d.Maturity.DecayedHelpful, want)
	}
}

func TestExtractPatternsValidates(t *testing.T) {
	b := setup(t, "memory")
	if _, err := b.e.ExtractPatterns("   "); kaizen.KindOf(err) != kaizen.KindInvalid {
		t.Errorf("blank description: %v", err)
	}
	got, err := b.e.ExtractPatterns("split by component, handle shared types first")
	if err != nil || len(got) != 2 {
		t.Errorf("%v %v", got, err)
	}
	var ke *kaizen.Error
	_, err = b.e.RecordOutcome(ctx, kaizen.OutcomeInput{})
	if !errors.As(err, &ke) || ke.Field != "bead_id" {
		t.Errorf("empty input: %v", err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
