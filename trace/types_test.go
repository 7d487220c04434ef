package trace

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func validTrace() ExecutionTrace {
	return ExecutionTrace{ID: "tr-1", SkillID: "cmd:go test", TaskID: "task-1", CreatedAt: t0, FinalSuccess: true, DurationMS: 1000,
		Attempts: []Attempt{
			{Index: 1, Timestamp: at(0), Context: map[string]string{"command": "go test"}, Result: "FAIL", Error: "编码错误"},
			{Index: 2, Timestamp: at(1), Success: true, Result: "ok", FixApplied: "添加 encoding='utf-8'", FixSource: FixSelfCorrection},
		}}
}

func TestTraceValidation(t *testing.T) {
	t.Parallel()
	if err := (&ExecutionTrace{}).Validate(); !errors.Is(err, ErrInvalidTrace) {
		t.Errorf("empty trace: %v", err)
	}
	tr := validTrace()
	if err := tr.Validate(); err != nil {
		t.Fatalf("valid trace: %v", err)
	}
	cases := []struct {
		name     string
		mutate   func(*ExecutionTrace)
		sentinel error
		tooLarge bool
	}{
		{"index starts at 1", func(t *ExecutionTrace) { t.Attempts[0].Index = 0 }, ErrInvalidAttempt, false},
		{"index in order", func(t *ExecutionTrace) { t.Attempts[1].Index = 3 }, ErrInvalidAttempt, false},
		{"fix source value", func(t *ExecutionTrace) { t.Attempts[1].FixSource = "magic" }, ErrInvalidAttempt, false},
		{"fix source without fix", func(t *ExecutionTrace) { t.Attempts[1].FixApplied = "" }, ErrInvalidAttempt, false},
		{"fix without source", func(t *ExecutionTrace) { t.Attempts[1].FixSource = "" }, ErrInvalidAttempt, false},
		{"success in the middle", func(t *ExecutionTrace) { t.Attempts[0].Success, t.Attempts[0].Error = true, "" }, ErrInvalidAttempt, false},
		{"final success mismatch", func(t *ExecutionTrace) { t.FinalSuccess = false }, ErrInvalidTrace, false},
		{"open but succeeded", func(t *ExecutionTrace) { t.Open = true }, ErrInvalidTrace, false},
		{"success with an error", func(t *ExecutionTrace) { t.Attempts[1].Error = "x" }, ErrInvalidAttempt, false},
		{"time goes back", func(t *ExecutionTrace) { t.Attempts[1].Timestamp = at(-5) }, ErrInvalidAttempt, false},
		{"no timestamp", func(t *ExecutionTrace) { t.Attempts[0].Timestamp = time.Time{} }, ErrInvalidAttempt, false},
		{"negative duration", func(t *ExecutionTrace) { t.DurationMS = -1 }, ErrInvalidTrace, false},
		{"no attempts", func(t *ExecutionTrace) { t.Attempts = nil }, ErrInvalidTrace, false},
		{"too many attempts", func(t *ExecutionTrace) {
			for i := 2; i <= MaxAttempts; i++ {
				t.Attempts = append(t.Attempts, Attempt{Index: i + 1, Timestamp: at(i)})
			}
		}, ErrInvalidTrace, true},
		{"huge result", func(t *ExecutionTrace) { t.Attempts[0].Result = strings.Repeat("x", MaxTextLen+1) }, ErrInvalidAttempt, true},
		{"huge fix", func(t *ExecutionTrace) { t.Attempts[1].FixApplied = strings.Repeat("x", MaxFixLen+1) }, ErrInvalidAttempt, true},
		{"long id", func(t *ExecutionTrace) { t.ID = strings.Repeat("x", MaxIDLen+1) }, ErrInvalidTrace, true},
		{"newline in id", func(t *ExecutionTrace) { t.SkillID = "a\nb" }, ErrInvalidTrace, false},
		{"bad utf-8", func(t *ExecutionTrace) { t.Attempts[0].Error = "\xff" }, ErrInvalidAttempt, false},
		{"too many artifacts", func(t *ExecutionTrace) { t.Attempts[0].ActivatedArtifacts = make([]string, MaxArtifacts+1) }, ErrInvalidAttempt, true},
		{"empty context key", func(t *ExecutionTrace) { t.Attempts[0].Context[""] = "x" }, ErrInvalidAttempt, false},
		{"bad action kind", func(t *ExecutionTrace) { t.Attempts[1].FixActions = []FixAction{{Kind: "dance"}} }, ErrInvalidAttempt, false},
	}
	for _, c := range cases {
		tr := validTrace()
		c.mutate(&tr)
		err := tr.Validate()
		if !errors.Is(err, c.sentinel) {
			t.Errorf("%s: error = %v, want %v", c.name, err, c.sentinel)
		}
		if errors.Is(err, ErrTooLarge) != c.tooLarge {
			t.Errorf("%s: ErrTooLarge = %v, want %v", c.name, errors.Is(err, ErrTooLarge), c.tooLarge)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Object == "" || ve.Error() == "" {
			t.Errorf("%s: not a descriptive *ValidationError: %v", c.name, err)
		}
	}
}

func TestSeedScenarioShapesValidate(t *testing.T) {
	t.Parallel()
	one := ExecutionTrace{ID: "a", SkillID: "s", CreatedAt: t0, FinalSuccess: true, Attempts: []Attempt{{Index: 1, Timestamp: t0, Success: true}}}
	three := ExecutionTrace{ID: "c", SkillID: "s", CreatedAt: t0, Attempts: []Attempt{
		{Index: 1, Timestamp: at(1), Error: "..."}, {Index: 2, Timestamp: at(2), Error: "..."}, {Index: 3, Timestamp: at(3), Error: "..."}}}
	for _, tr := range []ExecutionTrace{one, validTrace(), three} {
		if err := tr.Validate(); err != nil {
			t.Errorf("%s: %v", tr.ID, err)
		}
	}
	vt := validTrace()
	if !vt.Recovered() || !three.GaveUp() || one.Recovered() || three.Status() != "failed" {
		t.Error("Recovered/GaveUp/Status")
	}
	// a fix before the first attempt (a failure pattern's fix applied on
	// a warning) is allowed
	one.Attempts[0].FixApplied, one.Attempts[0].FixSource = "start postgres", FixFailurePattern
	if err := one.Validate(); err != nil {
		t.Errorf("fix on attempt 1: %v", err)
	}
}

func TestPatternAndRecordValidation(t *testing.T) {
	t.Parallel()
	p := pattern("p", 1, nil, "fix")
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*FailurePattern){
		"frequency 0":      func(p *FailurePattern) { p.Frequency = 0 },
		"NaN weight":       func(p *FailurePattern) { p.Weight = math.NaN() },
		"negative weight":  func(p *FailurePattern) { p.Weight = -1 },
		"no signature":     func(p *FailurePattern) { p.Signatures = nil },
		"version 0":        func(p *FailurePattern) { p.GroupingVersion = 0 },
		"empty condition":  func(p *FailurePattern) { p.Condition = " " },
		"first after last": func(p *FailurePattern) { p.FirstOccurred = p.LastOccurred.Add(1) },
		"many examples":    func(p *FailurePattern) { p.ExampleErrors = make([]string, MaxExampleErrors+1) },
	} {
		q := clonePattern(p)
		mutate(&q)
		if err := q.Validate(); !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("%s: error = %v", name, err)
		}
	}
	r := ExecutionRecord{Timestamp: t0, ContextHash: "ctx:1"}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	r.Success, r.Error = true, "boom"
	if err := r.Validate(); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("record: %v", err)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	if got := Truncate("héllo wörld", 6); got != "h…" && got != "hé…" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("abc", 10); got != "abc" {
		t.Errorf("Truncate short = %q", got)
	}
	if got := TruncateTail("0123456789", 7); got != "…6789" {
		t.Errorf("TruncateTail = %q", got)
	}
	if got := Truncate("a\x00b\xff", 10); got != "ab\uFFFD" {
		t.Errorf("Truncate cleans = %q", got)
	}
}
