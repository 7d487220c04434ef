package trace

import (
	"errors"
	"math"
	"testing"
)

func pattern(id string, freq int, args []string, fix string) FailurePattern {
	return FailurePattern{
		ID: id, SkillID: "cmd:go test", Family: "go test", Condition: "running `go test` fails", ErrorType: "go:test_fail",
		Frequency: freq, LastOccurred: t0, SuggestedFix: fix, Signatures: []string{"l:" + id}, GroupingVersion: 1,
		Args: args, Weight: 1, Context: map[string]string{ContextCwd: "/src/api"},
	}
}

func TestCheckConfidenceBoundaries(t *testing.T) {
	t.Parallel()
	cfg := DefaultCheckConfig()
	ctx := map[string]string{ContextCwd: "/src/api"}
	cases := []struct {
		name  string
		p     FailurePattern
		cmd   string
		ctx   map[string]string
		warns bool
		conf  float64
	}{
		// (0.5+0.3+0.2)·1/2 = 0.5 < 0.6: seen once is not enough
		{"seen once", pattern("p1", 1, []string{"repo"}, "Start PostgreSQL"), "go test ./repo", ctx, false, 0},
		// (0.5+0.3+0.2)·2/3 = 0.667
		{"seen twice, same args and dir", pattern("p2", 2, []string{"repo"}, "Start PostgreSQL"), "go test ./repo", ctx, true, 0.667},
		// (0.5+0+0.2)·2/3 = 0.467
		{"seen twice, other args", pattern("p3", 2, []string{"repo"}, "Start PostgreSQL"), "go test ./cache", ctx, false, 0},
		// (0.5+0.3+0)·2/3 = 0.533
		{"seen twice, other dir", pattern("p4", 2, []string{"repo"}, "Start PostgreSQL"), "go test ./repo", map[string]string{ContextCwd: "/src/web"}, false, 0},
		// (0.5+0.3+0)·3/4 = 0.6 exactly: warns
		{"seen 3 times, other dir", pattern("p5", 3, []string{"repo"}, "Start PostgreSQL"), "go test ./repo", nil, true, 0.6},
		// (0.5+0.15+0.2)·3/4 = 0.6375: one side without args counts half
		{"no args in the query", pattern("p6", 3, []string{"repo"}, "Start PostgreSQL"), "go test", ctx, true, 0.638},
		{"no fix, no warning", pattern("p7", 9, []string{"repo"}, ""), "go test ./repo", ctx, false, 0},
		{"other family", pattern("p8", 9, []string{"repo"}, "x"), "cargo test", ctx, false, 0},
	}
	for _, c := range cases {
		ix := NewPatternIndex([]FailurePattern{c.p})
		ws, sess := ix.Check(CheckQuery{Command: c.cmd, Context: c.ctx}, SessionWarnings{}, cfg)
		if (len(ws) == 1) != c.warns {
			t.Errorf("%s: warnings = %+v, want warns=%v", c.name, ws, c.warns)
			continue
		}
		if c.warns {
			if math.Abs(ws[0].Confidence-c.conf) > 1e-9 || ws[0].Fix != c.p.SuggestedFix || ws[0].PatternID != c.p.ID {
				t.Errorf("%s: warning = %+v, want confidence %v", c.name, ws[0], c.conf)
			}
			if sess.Count != 1 || len(sess.Warned) != 1 {
				t.Errorf("%s: session = %+v", c.name, sess)
			}
		}
	}
}

func TestCheckErrorMatchIsConfident(t *testing.T) {
	t.Parallel()
	p := pattern("p", 1, []string{"repo"}, "Start PostgreSQL")
	ix := NewPatternIndex([]FailurePattern{p})
	ws, _ := ix.Check(CheckQuery{Command: "go test ./other", RecentSignatures: []string{"s:x", "l:p"}}, SessionWarnings{}, DefaultCheckConfig())
	if len(ws) != 1 || ws[0].Confidence != 0.95 {
		t.Errorf("warnings = %+v, want one with confidence 0.95", ws)
	}
}

func TestCheckRateLimit(t *testing.T) {
	t.Parallel()
	cfg := DefaultCheckConfig()
	var ps []FailurePattern
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ps = append(ps, pattern(id, 5, []string{"repo"}, "fix "+id))
	}
	ix := NewPatternIndex(ps)
	q := CheckQuery{Command: "go test ./repo", Context: map[string]string{ContextCwd: "/src/api"}}
	sess := SessionWarnings{}
	var got []string
	for i := 0; i < 6; i++ {
		var ws []Warning
		ws, sess = ix.Check(q, sess, cfg)
		if len(ws) > 1 {
			t.Fatalf("check %d returned %d warnings, max per check is 1", i, len(ws))
		}
		for _, w := range ws {
			got = append(got, w.PatternID)
		}
	}
	if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" || sess.Count != 3 {
		t.Errorf("warned %v (session %+v), want a, b, c then silence", got, sess)
	}
	// NoRepeat off: the best pattern may warn again, still at most 3
	cfg.NoRepeat = false
	sess = SessionWarnings{}
	got = nil
	for i := 0; i < 5; i++ {
		var ws []Warning
		ws, sess = ix.Check(q, sess, cfg)
		for _, w := range ws {
			got = append(got, w.PatternID)
		}
	}
	if len(got) != 3 || got[0] != "a" || got[2] != "a" {
		t.Errorf("without no-repeat: %v", got)
	}
}

func TestWarningWeightLearning(t *testing.T) {
	t.Parallel()
	cfg := DefaultCheckConfig()
	p := pattern("p", 5, []string{"repo"}, "Start PostgreSQL")
	ok := Attempt{Success: true}
	same := Attempt{Success: false, Signatures: []string{"l:p"}}
	other := Attempt{Success: false, Signatures: []string{"l:zzz"}}

	up := LearnFromWarnedAttempt(p, ok, cfg)
	if up.Weight != 1.1 || up.Helped != 1 || up.Warnings != 1 {
		t.Errorf("after a success: %+v", up)
	}
	for i := 0; i < 20; i++ {
		up = LearnFromWarnedAttempt(up, ok, cfg)
	}
	if up.Weight != 2 {
		t.Errorf("weight capped at 2, got %v", up.Weight)
	}
	down := LearnFromWarnedAttempt(p, other, cfg)
	if down.Weight != 0.875 || down.Misled != 1 {
		t.Errorf("after a failure with another error: weight %v, want 0.875", down.Weight)
	}
	down = p
	for i := 0; i < 2; i++ {
		down = LearnFromWarnedAttempt(down, same, cfg)
	}
	if down.Weight != 0.5 || !down.Warns(cfg) {
		t.Errorf("after two misleading warnings: weight %v, still warns", down.Weight)
	}
	ix := NewPatternIndex([]FailurePattern{down})
	if ws, _ := ix.Check(CheckQuery{Command: "go test ./repo", Context: map[string]string{ContextCwd: "/src/api"}}, SessionWarnings{}, cfg); len(ws) != 1 {
		t.Error("a pattern at weight 0.5 still warns")
	}
	down = LearnFromWarnedAttempt(down, same, cfg)
	if down.Weight != 0.25 || down.Warns(cfg) {
		t.Errorf("after three: weight %v, below the floor 0.3 it stops warning", down.Weight)
	}
	ix = NewPatternIndex([]FailurePattern{down})
	if ws, _ := ix.Check(CheckQuery{Command: "go test ./repo", Context: map[string]string{ContextCwd: "/src/api"}, RecentSignatures: []string{"l:p"}}, SessionWarnings{}, cfg); len(ws) != 0 {
		t.Errorf("a pattern below the floor warned: %+v", ws)
	}
	for i := 0; i < 10; i++ {
		down = LearnFromWarnedAttempt(down, same, cfg)
	}
	if down.Weight != 0 {
		t.Errorf("weight never goes below 0: %v", down.Weight)
	}
}

func TestCheckConfigValidate(t *testing.T) {
	t.Parallel()
	cfg := DefaultCheckConfig()
	cfg.MinConfidence = math.NaN()
	if !errors.Is(cfg.Validate(), ErrInvalidConfig) {
		t.Error("NaN confidence accepted")
	}
	cfg = DefaultCheckConfig()
	cfg.WeightMax = 0.1
	if !errors.Is(cfg.Validate(), ErrInvalidConfig) {
		t.Error("max below the floor accepted")
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
