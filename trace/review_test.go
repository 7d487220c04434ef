package trace

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// chain runs a command sequence through the assembler and returns the
// closed traces: each step is (exit code, output, actions before it).
func recoveredEncodingTrace(t *testing.T, session string, hint string) ExecutionTrace {
	t.Helper()
	s := newSession(t)
	s.st.SessionID = session
	s.run("python load_notes.py notes.txt", 1, pyEncodingError)
	if hint != "" {
		s.feed(Event{Kind: EventPrompt, Text: hint})
	}
	s.feed(Event{Kind: EventEdit, Path: "load_notes.py"})
	return s.run("python load_notes.py notes.txt", 0, "ok")[0].Trace
}

func TestReviewSeedScenarios(t *testing.T) {
	t.Parallel()
	now := at(1000)
	one := newSession(t).run("go test ./...", 0, "ok")[0].Trace
	recovered := recoveredEncodingTrace(t, "s-2", "No, open it with encoding='utf-8'.")
	s := newSession(t)
	s.st.SessionID = "s-3"
	for i := 0; i < 3; i++ {
		s.run("cargo test", 101, "thread 'main' panicked at src/lib.rs:3:5:\nboom")
	}
	s.feed(Event{Kind: EventSessionEnd})
	gaveUp := s.closed()[0]

	r, err := ReviewTask([]ExecutionTrace{one, recovered, gaveUp}, nil, now, DefaultReviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	// scenario 1: recorded, nothing learned
	// scenario 2: one failure pattern with the fix
	if len(r.Patterns) != 1 {
		t.Fatalf("patterns = %+v, want exactly one (from the recovered chain)", r.Patterns)
	}
	p := r.Patterns[0].Pattern
	if !r.Patterns[0].Created || p.Frequency != 1 || p.SkillID != "cmd:python load_notes.py" || p.ErrorType != "python:UnicodeDecodeError" {
		t.Errorf("pattern = %+v", p)
	}
	if p.SuggestedFix != "Open it with encoding='utf-8'" {
		t.Errorf("suggested_fix = %q", p.SuggestedFix)
	}
	if !p.LastOccurred.Equal(recovered.Attempts[0].Timestamp) || len(p.TraceIDs) != 1 || p.TraceIDs[0] != recovered.ID {
		t.Errorf("last_occurred %v trace_ids %v", p.LastOccurred, p.TraceIDs)
	}
	if !strings.HasPrefix(p.Condition, "running `python load_notes.py` (notes.txt) fails with python:UnicodeDecodeError") {
		t.Errorf("condition = %q", p.Condition)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("the pattern does not validate: %v", err)
	}
	// scenario 3: success rate lowered, a person needed
	var cargo, golang SkillVerdict
	for _, v := range r.Skills {
		switch v.SkillID {
		case "cmd:cargo test":
			cargo = v
		case "cmd:go test":
			golang = v
		}
	}
	if !cargo.NeedsPerson || cargo.GaveUp != 1 || cargo.Traces != 1 || cargo.Succeeded != 0 || cargo.Attempts != 3 {
		t.Errorf("cargo verdict = %+v", cargo)
	}
	if golang.NeedsPerson || golang.Succeeded != 1 {
		t.Errorf("go verdict = %+v", golang)
	}
	stats := SkillStats{SkillID: "cmd:cargo test", Traces: 3, Succeeded: 3, SuccessRate: 1}.Apply(cargo)
	if stats.SuccessRate != 0.75 || !stats.NeedsPerson || stats.Traces != 4 {
		t.Errorf("stats after the failed chain = %+v, want rate 0.75 and needs_person", stats)
	}
	// heuristics: a correction with "instead"-like advice is verify or avoid
	var kinds []string
	for _, h := range r.Heuristics {
		kinds = append(kinds, h.Kind+":"+h.SkillID)
		if h.Trigger == "" || h.Rule == "" || h.Why == "" || len(h.Evidence) == 0 {
			t.Errorf("incomplete heuristic %+v", h)
		}
	}
	want := []string{"avoid:cmd:cargo test", "verify:cmd:python load_notes.py"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("heuristics = %v, want %v", kinds, want)
	}
}

func TestReviewIsIdempotentAndCounts(t *testing.T) {
	t.Parallel()
	now := at(5000)
	first := recoveredEncodingTrace(t, "a", "")
	r1, err := ReviewTask([]ExecutionTrace{first}, nil, now, DefaultReviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := r1.Patterns[0].Pattern
	if p.SuggestedFix != "Edit load_notes.py" {
		t.Errorf("suggested fix = %q", p.SuggestedFix)
	}
	// the same task reviewed again changes nothing
	r2, err := ReviewTask([]ExecutionTrace{first}, []FailurePattern{p}, now, DefaultReviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Patterns) != 0 {
		t.Errorf("re-review changed patterns: %+v", r2.Patterns)
	}
	// another chain with the same error: frequency 2, the fix tallied
	second := recoveredEncodingTrace(t, "b", "")
	r3, err := ReviewTask([]ExecutionTrace{second}, []FailurePattern{p}, now, DefaultReviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(r3.Patterns) != 1 || r3.Patterns[0].Created {
		t.Fatalf("patterns = %+v, want the existing one updated", r3.Patterns)
	}
	q := r3.Patterns[0].Pattern
	if q.ID != p.ID || q.Frequency != 2 || len(q.TraceIDs) != 2 || len(q.Fixes) != 1 || q.Fixes[0].Count != 2 {
		t.Errorf("updated pattern = %+v", q)
	}
	// a different fix that wins later becomes the suggestion only once it
	// is more frequent
	third := recoveredEncodingTrace(t, "c", "Use chardet to detect the encoding")
	r4, _ := ReviewTask([]ExecutionTrace{third}, []FailurePattern{q}, now, DefaultReviewConfig())
	if got := r4.Patterns[0].Pattern.SuggestedFix; got != "Edit load_notes.py" {
		t.Errorf("suggested fix = %q, want the more frequent one", got)
	}
}

func TestReviewLessonsPerError(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.run("go build ./...", 1, "main.go:3:2: undefined: parseConfig")
	s.feed(Event{Kind: EventEdit, Path: "main.go"}) // did not help
	s.run("go build ./...", 1, "main.go:4:2: undefined: parseConfig")
	s.feed(Event{Kind: EventEdit, Path: "config.go"}) // fixed it, revealed the next error
	s.run("go build ./...", 1, "main.go:9:12: cannot use x (variable of type int) as string value in argument to f")
	s.run("gofmt -w .", 0, "")
	s.feed(Event{Kind: EventEdit, Path: "main.go"})
	tr := s.run("go build ./...", 0, "")[0].Trace
	r, err := ReviewTask([]ExecutionTrace{tr}, nil, at(900), DefaultReviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Patterns) != 2 {
		t.Fatalf("patterns = %d, want one per distinct error", len(r.Patterns))
	}
	undefined, cannotUse := r.Patterns[0].Pattern, r.Patterns[1].Pattern
	if !strings.Contains(undefined.Template, "undefined: parseconfig") || undefined.SuggestedFix != "Edit config.go" {
		t.Errorf("first lesson: %q fixed by %q", undefined.Template, undefined.SuggestedFix)
	}
	if !strings.Contains(cannotUse.Template, "cannot use") || cannotUse.SuggestedFix != "Run `gofmt -w .`, then edit main.go" {
		t.Errorf("second lesson: %q fixed by %q", cannotUse.Template, cannotUse.SuggestedFix)
	}
	// frequency counts occurrences of the error (two failed attempts), the
	// examples distinct excerpts (one)
	if undefined.Frequency != 2 || len(undefined.ExampleErrors) != 1 || len(undefined.TraceIDs) != 1 {
		t.Errorf("two failed attempts with one error are two occurrences in one trace: %+v", undefined)
	}
}

func TestReviewRejectsInvalidInput(t *testing.T) {
	t.Parallel()
	bad := ExecutionTrace{ID: "x", SkillID: "s", CreatedAt: t0}
	if _, err := ReviewTask([]ExecutionTrace{bad}, nil, t0, DefaultReviewConfig()); !errors.Is(err, ErrInvalidTrace) {
		t.Errorf("error = %v, want ErrInvalidTrace", err)
	}
	if _, err := ReviewTask(nil, []FailurePattern{{ID: "p"}}, t0, DefaultReviewConfig()); !errors.Is(err, ErrInvalidPattern) {
		t.Errorf("error = %v, want ErrInvalidPattern", err)
	}
	cfg := DefaultReviewConfig()
	cfg.NeedsPersonMinAttempts = 0
	if _, err := ReviewTask(nil, nil, t0, cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("error = %v, want ErrInvalidConfig", err)
	}
}

func TestReviewNeedsPersonThreshold(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.run("make deploy", 2, "make: *** [Makefile:3: deploy] Error 1")
	s.feed(Event{Kind: EventSessionEnd})
	tr := s.closed()[0]
	cfg := DefaultReviewConfig()
	cfg.NeedsPersonMinAttempts = 2
	r, _ := ReviewTask([]ExecutionTrace{tr}, nil, t0, cfg)
	if r.Skills[0].NeedsPerson || r.Skills[0].GaveUp != 1 {
		t.Errorf("one failed attempt below a threshold of 2: %+v", r.Skills[0])
	}
	cfg.NeedsPersonMinAttempts = 1
	r, _ = ReviewTask([]ExecutionTrace{tr}, nil, t0, cfg)
	if !r.Skills[0].NeedsPerson {
		t.Errorf("at the threshold: %+v", r.Skills[0])
	}
}

func TestTraceJSONFieldNames(t *testing.T) {
	t.Parallel()
	tr := recoveredEncodingTrace(t, "j", "")
	raw, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"id", "skill_id", "task_id", "attempts", "final_success", "created_at", "duration_ms"} {
		if _, ok := m[k]; !ok {
			t.Errorf("trace JSON lacks %q", k)
		}
	}
	a := m["attempts"].([]any)[1].(map[string]any)
	for _, k := range []string{"index", "timestamp", "context", "activated_artifacts", "result", "success", "fix_applied", "fix_source"} {
		if _, ok := a[k]; !ok {
			t.Errorf("attempt JSON lacks %q", k)
		}
	}
	var back ExecutionTrace
	if err := json.Unmarshal(raw, &back); err != nil || back.Validate() != nil {
		t.Errorf("round trip: %v / %v", err, back.Validate())
	}
	r, _ := ReviewTask([]ExecutionTrace{tr}, nil, t0, DefaultReviewConfig())
	raw, _ = json.Marshal(r.Patterns[0].Pattern)
	var pm map[string]any
	_ = json.Unmarshal(raw, &pm)
	for _, k := range []string{"condition", "error_type", "frequency", "last_occurred", "suggested_fix", "signatures", "grouping_version", "trace_ids", "weight"} {
		if _, ok := pm[k]; !ok {
			t.Errorf("pattern JSON lacks %q", k)
		}
	}
}
