package learning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kaizenhq/kaizen/learning"
)

func observed(p learning.Pattern, successes, failures int) learning.Pattern {
	for i := range successes + failures {
		p.Observe(learning.MaturityFeedback{Success: i < successes, TaskID: "bd-" + string(rune('a'+i))}, 10)
	}
	return p
}

// The seed's example: 2 successes and 5 failures invert "Split by file type".
func TestInversionSeedExample(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	p := learning.Pattern{ID: "pattern-123", Content: "Split by file type", Kind: learning.KindPattern, Tags: []string{"decomposition"}}
	p = observed(p, 2, 5)
	if !cfg.ShouldInvert(p) {
		t.Fatal("2/5 must invert")
	}
	inv := cfg.Invert(p, nil, epoch)
	want := learning.Pattern{
		ID: "anti-pattern-123", Content: "AVOID: Split by file type. Failed 5/7 times (71% failure rate)",
		Kind: learning.KindAntiPattern, IsNegative: true, SuccessCount: 2, FailureCount: 5,
		Tags: []string{"decomposition"}, ExampleTasks: p.ExampleTasks,
		Reason: "Failed 5/7 times (71% failure rate)", SourceID: "pattern-123", CreatedAt: epoch, UpdatedAt: epoch,
	}
	if diff := cmp.Diff(want, inv.Inverted); diff != "" {
		t.Errorf("anti-pattern (-want +got):\n%s", diff)
	}
	if inv.Reason != want.Reason || !inv.New || inv.Original.AntiPatternID != "anti-pattern-123" {
		t.Errorf("inversion %+v", inv)
	}
	// an anti-pattern is never inverted again
	if cfg.ShouldInvert(inv.Inverted) {
		t.Error("anti-patterns must not be re-inverted")
	}
}

func TestInversionChinese(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	cfg.Locale = learning.LocaleZH
	p := observed(learning.Pattern{ID: "pattern-123", Content: "按文件类型拆分", Kind: learning.KindPattern}, 2, 5)
	inv := cfg.Invert(p, nil, epoch)
	if inv.Inverted.Content != "避免:按文件类型拆分。失败5/7次(71%失败率)" || inv.Reason != "失败5/7次(71%失败率)" {
		t.Errorf("content %q reason %q", inv.Inverted.Content, inv.Reason)
	}
	cfg.AntiPattern.Prefix = "DON'T: "
	if got := cfg.AntiPatternContent("x", "r"); got != "DON'T: x。r" {
		t.Errorf("custom prefix: %q", got)
	}
}

func TestInversionThresholds(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	cases := []struct {
		success, failure int
		want             bool
	}{
		{0, 2, false}, // fewer than 3 observations
		{1, 2, true},  // 0.667
		{2, 3, true},  // exactly 0.6 inverts (inclusive)
		{3, 2, false}, // 0.4
		{0, 0, false},
		{5, 7, false}, // 0.583
		{4, 7, true},  // 0.636
		{7, 5, false},
	}
	for _, c := range cases {
		p := observed(learning.Pattern{ID: "pattern-1", Kind: learning.KindPattern}, c.success, c.failure)
		if got := cfg.ShouldInvert(p); got != c.want {
			t.Errorf("%d successes %d failures: invert=%v, want %v", c.success, c.failure, got, c.want)
		}
	}
}

func TestAntiPatternContentHasNoDoublePeriod(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	for in, want := range map[string]string{
		"Split by file type.":         "AVOID: Split by file type. r",
		"AVOID: Split by file type":   "AVOID: Split by file type. r",
		"avoid:  never: do it.":       "AVOID: do it. r",
		"  Handle shared types first": "AVOID: Handle shared types first. r",
	} {
		if got := cfg.AntiPatternContent(in, "r"); got != want {
			t.Errorf("AntiPatternContent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestObserveKeepsNewestUniqueExamples(t *testing.T) {
	t.Parallel()
	p := learning.Pattern{}
	for _, id := range []string{"a", "b", "a", "c", "d"} {
		p.Observe(learning.MaturityFeedback{Success: true, TaskID: id}, 3)
	}
	if diff := cmp.Diff([]string{"d", "c", "a"}, p.ExampleTasks); diff != "" {
		t.Errorf("examples (-want +got):\n%s", diff)
	}
	if p.SuccessCount != 5 {
		t.Errorf("count %d", p.SuccessCount)
	}
	p.Observe(learning.MaturityFeedback{Success: true, Generation: 7}, 3)
	if p.SuccessCount != 5 {
		t.Error("observation of another generation counted")
	}
}

func TestContentKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"  Split   by\tFILE type. ": "split by file type",
		"按文件类型拆分。":                  "按文件类型拆分",
		"":                          "",
	} {
		if got := learning.ContentKey(in); got != want {
			t.Errorf("ContentKey(%q) = %q, want %q", in, got, want)
		}
	}
}
