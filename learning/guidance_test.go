package learning_test

import (
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
)

func view(id, content string, successes, failures int, events ...fb) learning.PatternView {
	p := observed(learning.Pattern{ID: id, Content: content, Kind: learning.KindPattern}, successes, failures)
	return learning.PatternView{Pattern: &p, Maturity: learning.DefaultConfig().Maturity.Evaluate(maturityOf(events...), epoch)}
}

func TestMaturityLabels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    learning.PatternView
		want string
	}{
		{view("p1", "a", 0, 0), "[LIMITED DATA - 0 observations]"},
		{view("p1", "a", 1, 0, h), "[LIMITED DATA - 1 observation]"},
		{view("p1", "a", 0, 0, h, h, h), "[ESTABLISHED - 100% helpful, 0% harmful from 3 observations]"},
		{view("p1", "a", 0, 0, repeat(6, h)...), "[PROVEN - 100% helpful from 6 observations]"},
		{view("p1", "a", 0, 0, h, h, x), "[DEPRECATED - 33% harmful, avoid using]"},
		{view("p1", "a", 0, 0, repeat(3, fb{typ: learning.Helpful, ageDays: 200})...), "[CANDIDATE - 3 observations, needs more data]"},
	}
	for _, c := range cases {
		if got := learning.MaturityLabel(c.v, ""); got != c.want {
			t.Errorf("label %q, want %q", got, c.want)
		}
	}
	m := maturityOf(h)
	_ = learning.Deprecate(&m, epoch, "breaks the build")
	v := learning.PatternView{Maturity: learning.DefaultConfig().Maturity.Evaluate(m, epoch)}
	if got := learning.MaturityLabel(v, "breaks the build"); got != "[DEPRECATED - breaks the build]" {
		t.Errorf("manual deprecation label %q", got)
	}
}

func TestBuildGuidanceRanksAndWarns(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	proven := view("pattern-a", "Split by feature", 6, 0, repeat(6, h)...)
	established := view("pattern-b", "Handle shared types first", 3, 0, h, h, h)
	candidate := view("pattern-c", "Tests alongside implementation", 1, 0, h)
	deprecated := view("pattern-d", "Maximize parallelization", 1, 2, h, h, x)
	inverted := view("pattern-e", "Split by file type", 2, 5, h, h, x, x, x, x, x)
	inverted.Pattern.AntiPatternID = "anti-pattern-e"
	anti := cfg.Invert(*inverted.Pattern, nil, epoch).Inverted
	g := cfg.BuildGuidance(learning.GuidanceRequest{Project: "p", Task: "We will split by file type and maximize parallelization"},
		[]learning.PatternView{candidate, deprecated, established, proven, inverted}, nil, []learning.Pattern{anti}, nil, nil, epoch)
	var order []string
	for _, p := range g.Patterns {
		order = append(order, p.ID)
	}
	if strings.Join(order, ",") != "pattern-a,pattern-b,pattern-c" {
		t.Fatalf("ranking %v", order)
	}
	a := g.Patterns[0]
	if a.Multiplier != 1.5 || a.FinalScore != a.BaseScore*1.5 || a.BaseScore != (6.0+1)/(6+0+2) {
		t.Errorf("scores %+v", a)
	}
	if len(g.Excluded) != 1 || len(g.AntiPatterns) != 1 || !g.AntiPatterns[0].Mentioned {
		t.Errorf("excluded %d, anti %+v", len(g.Excluded), g.AntiPatterns)
	}
	if len(g.Warnings) != 2 {
		t.Errorf("warnings %v: want one for the anti-pattern and one for the deprecated pattern", g.Warnings)
	}
	md := g.Markdown()
	for _, want := range []string{"## Learned guidance", "not an instruction", "1. Split by feature [PROVEN",
		"### Anti-Patterns to Avoid", "AVOID: Split by file type. Failed 5/7 times (71% failure rate)", "### About your plan"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestGuidanceLimitAndEmpty(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	var views []learning.PatternView
	for i := range 15 {
		views = append(views, view("pattern-"+string(rune('a'+i)), "p"+string(rune('a'+i)), 1, 0, h))
	}
	if g := cfg.BuildGuidance(learning.GuidanceRequest{Limit: 4}, views, nil, nil, nil, nil, epoch); len(g.Patterns) != 4 {
		t.Errorf("limit: %d", len(g.Patterns))
	}
	if g := cfg.BuildGuidance(learning.GuidanceRequest{}, views, nil, nil, nil, nil, epoch); len(g.Patterns) != 10 {
		t.Errorf("default limit: %d", len(g.Patterns))
	}
	empty := cfg.BuildGuidance(learning.GuidanceRequest{}, nil, nil, nil, nil, nil, epoch)
	if !strings.Contains(empty.Markdown(), "No learned patterns yet") || empty.Patterns == nil || empty.Warnings == nil {
		t.Errorf("empty guidance: %+v", empty)
	}
}

func TestGuidanceIncludesOpenErrors(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	g := cfg.BuildGuidance(learning.GuidanceRequest{TaskID: "bd-123.1"}, nil, nil, nil, nil, seedErrors(), epoch)
	md := g.Markdown()
	if !strings.Contains(md, "### Previous Errors") || !strings.Contains(md, "#### validation (2 errors)") {
		t.Errorf("error context must be nested under the guidance heading:\n%s", md)
	}
}

func TestFormatForPrompt(t *testing.T) {
	t.Parallel()
	if learning.FormatAntiPatterns(nil) != "" || learning.FormatPatternsWithMaturity(nil) != "" {
		t.Error("nothing to format must give empty text")
	}
	out := learning.FormatPatternsWithMaturity([]learning.PatternView{
		view("p2", "Candidate one", 0, 0, h), view("p1", "Proven one", 0, 0, repeat(6, h)...)})
	if strings.Index(out, "Proven one") > strings.Index(out, "Candidate one") {
		t.Errorf("proven must come before candidate:\n%s", out)
	}
}

func TestWilson95(t *testing.T) {
	t.Parallel()
	ci := learning.Wilson95(5, 7)
	if ci[0] < 0.358 || ci[0] > 0.359 || ci[1] < 0.917 || ci[1] > 0.918 { // by hand: center 0.638, half-width 0.279
		t.Errorf("Wilson(5/7) = %v", ci)
	}
	if learning.Wilson95(0, 0) != [2]float64{0, 1} {
		t.Error("no data must give [0,1]")
	}
}
