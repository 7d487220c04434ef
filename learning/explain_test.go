package learning_test

import (
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
)

func TestExplainPattern(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	p := observed(learning.Pattern{ID: "pattern-1", Content: "Split by feature", Kind: learning.KindPattern}, 3, 0)
	m := maturityOf(h, h, h)
	x := cfg.ExplainPattern(p, m, cfg.Maturity.Evaluate(m, epoch))
	if x.HelpfulNeeded != 2 {
		t.Errorf("helpful needed %d, want 2 (3 → 5 decayed helpful)", x.HelpfulNeeded)
	}
	joined := strings.Join(x.Why, "\n")
	for _, want := range []string{"not proven: decayed helpful 3.000 < 5.00 (min_helpful)",
		"not inverted: failure ratio 0.000 < 0.60 (0/3 failed)", "about 2 more helpful"} {
		if !strings.Contains(joined, want) {
			t.Errorf("explanation lacks %q:\n%s", want, joined)
		}
	}
	if x.Thresholds["maturity.min_helpful"] != 5 || x.Thresholds["anti_pattern.failure_ratio_threshold"] != 0.6 {
		t.Errorf("thresholds %v", x.Thresholds)
	}
}

func TestExplainInvertedAndDeprecated(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	p := observed(learning.Pattern{ID: "pattern-1", Content: "Split by file type", Kind: learning.KindPattern}, 2, 5)
	p.AntiPatternID = "anti-pattern-1"
	m := maturityOf(h, h, x, x, x, x, x)
	x := cfg.ExplainPattern(p, m, cfg.Maturity.Evaluate(m, epoch))
	joined := strings.Join(x.Why, "\n")
	for _, want := range []string{"feedback says deprecated: harmful ratio 0.714 > 0.30", "inverted into anti-pattern anti-pattern-1: failed 5/7 times (71%)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("explanation lacks %q:\n%s", want, joined)
		}
	}
	// Inversion is sticky: no number of helpful outcomes brings it back, only a reset.
	if x.HelpfulNeeded != -1 || !strings.Contains(joined, "cannot return to the ranking without a reset") {
		t.Errorf("helpful needed %d for an inverted pattern:\n%s", x.HelpfulNeeded, joined)
	}
	// Deprecated by feedback but not inverted: helpful outcomes can still make it proven.
	p.AntiPatternID = ""
	p.FailureCount = 2
	y := cfg.ExplainPattern(p, m, cfg.Maturity.Evaluate(m, epoch))
	if y.HelpfulNeeded <= 0 {
		t.Errorf("a deprecated-by-feedback pattern needs many helpful outcomes, got %d", y.HelpfulNeeded)
	}
}

func TestExplainCriterion(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	x := cfg.ExplainCriterion(cfg.Weight(criterionOf(event(learning.Harmful, 0.3, 0)), epoch))
	if !strings.Contains(strings.Join(x.Why, "\n"), "the floor applies") {
		t.Errorf("%v", x.Why)
	}
	c := criterionOf(event(learning.Helpful, 0.9, 0), event(learning.Helpful, 0.9, 0), event(learning.Harmful, 0.3, 0))
	x = cfg.ExplainCriterion(cfg.Weight(c, epoch))
	if !strings.Contains(strings.Join(x.Why, "\n"), "deprecated: harmful 1/3 = 0.333 > 0.30") {
		t.Errorf("%v", x.Why)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := learning.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*learning.Config){
		func(c *learning.Config) { c.HalfLifeDays = 0 },
		func(c *learning.Config) { c.Maturity.HalfLifeDays = -1 },
		func(c *learning.Config) { c.HelpfulThreshold = 0.3 },
		func(c *learning.Config) { c.Locale = "fr" },
		func(c *learning.Config) { c.AntiPattern.FailureRatioThreshold = 1.5 },
		func(c *learning.Config) { c.SlowCompletionThresholdMs = 10 },
		func(c *learning.Config) { c.DefaultCriteria = []string{""} },
	}
	for i, f := range bad {
		c := learning.DefaultConfig()
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
}
