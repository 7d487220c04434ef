package trace

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const pyEncodingError = `Traceback (most recent call last):
  File "/home/dev/proj/load_notes.py", line 5, in <module>
    text = open(path).read()
UnicodeDecodeError: 'ascii' codec can't decode byte 0xe4 in position 12: ordinal not in range(128)`

// Seed scenario 1: one success.
func TestAssembleOneSuccess(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	ups := s.run("go test ./...", 0, "ok  \tgithub.com/acme/x\t0.01s")
	if len(ups) != 1 || ups[0].Kind != UpdateClosed {
		t.Fatalf("updates = %+v, want one closed trace", ups)
	}
	tr := ups[0].Trace
	if !tr.FinalSuccess || len(tr.Attempts) != 1 || tr.Attempts[0].Index != 1 || !tr.Attempts[0].Success || tr.Open {
		t.Errorf("trace = %+v, want one successful attempt", tr)
	}
	if tr.SkillID != "cmd:go test" || tr.Family != "go test" || tr.Attempts[0].Context[ContextFamily] != "go test" {
		t.Errorf("skill %q family %q", tr.SkillID, tr.Family)
	}
	if tr.Recovered() || tr.GaveUp() {
		t.Error("a first-try success is neither recovered nor given up")
	}
	if len(s.st.Open) != 0 {
		t.Error("no chain stays open")
	}
}

// Seed scenario 2: fail → retry (with a fix) → success.
func TestAssembleFailRetrySuccess(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	ups := s.run("python load_notes.py notes.txt", 1, pyEncodingError)
	if len(ups) != 1 || ups[0].Kind != UpdateOpened || !ups[0].Trace.Open {
		t.Fatalf("first failure: updates = %+v, want an opened chain", ups)
	}
	a1 := ups[0].Trace.Attempts[0]
	if a1.Success || a1.ErrorType != "python:UnicodeDecodeError" || !strings.Contains(a1.Error, "UnicodeDecodeError") || len(a1.Signatures) != 2 {
		t.Errorf("attempt 1 = %+v", a1)
	}
	s.feed(Event{Kind: EventAssistant, Text: "I'll add encoding='utf-8' to the open call. Then rerun."})
	s.feed(Event{Kind: EventEdit, Path: "/home/dev/proj/load_notes.py"})
	s.run("ls -la", 0, "")   // inspection: not a fix
	s.run("git diff", 0, "") // inspection: not a fix
	ups = s.run("python load_notes.py notes.txt", 0, "42 notes")
	if len(ups) != 1 || ups[0].Kind != UpdateClosed {
		t.Fatalf("updates = %+v, want the chain closed", ups)
	}
	tr := ups[0].Trace
	if !tr.FinalSuccess || len(tr.Attempts) != 2 || !tr.Recovered() {
		t.Fatalf("trace = %+v, want 2 attempts, recovered", tr)
	}
	a2 := tr.Attempts[1]
	if a2.Index != 2 || !a2.Success || a2.FixSource != FixSelfCorrection {
		t.Errorf("attempt 2 = %+v", a2)
	}
	if !strings.Contains(a2.FixApplied, "load_notes.py") || !strings.Contains(a2.FixApplied, "encoding='utf-8'") {
		t.Errorf("fix_applied = %q", a2.FixApplied)
	}
	if got := SuggestFix(a2.FixActions); got != "Add encoding='utf-8' to the open call" {
		t.Errorf("SuggestFix = %q", got)
	}
	if tr.DurationMS != 50_000 {
		t.Errorf("duration_ms = %d, want 50000 (first attempt to the last)", tr.DurationMS)
	}
}

// Seed scenario 3: fail ×3 → give up (the session ends).
func TestAssembleFailThreeTimesGiveUp(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	for i := 0; i < 3; i++ {
		s.run("cargo test", 101, "---- tests::it_works stdout ----\nthread 'tests::it_works' panicked at src/lib.rs:10:9:\nassertion `left == right` failed\n  left: 4\n right: 5")
		s.feed(Event{Kind: EventEdit, Path: "src/lib.rs"})
	}
	if n := len(s.closed()); n != 0 {
		t.Fatalf("%d traces closed before the session ended", n)
	}
	ups := s.feed(Event{Kind: EventSessionEnd})
	if len(ups) != 1 || ups[0].Kind != UpdateClosed {
		t.Fatalf("session end: updates = %+v", ups)
	}
	tr := ups[0].Trace
	if tr.FinalSuccess || len(tr.Attempts) != 3 || !tr.GaveUp() || tr.Open {
		t.Errorf("trace = %+v, want 3 failed attempts, given up", tr)
	}
	for i, a := range tr.Attempts {
		if a.Index != i+1 || a.Success {
			t.Errorf("attempt %d = %+v", i, a)
		}
	}
	if tr.Attempts[1].FixSource != FixSelfCorrection || tr.Attempts[1].FixApplied != "edited lib.rs" {
		t.Errorf("attempt 2 fix = %q (%s)", tr.Attempts[1].FixApplied, tr.Attempts[1].FixSource)
	}
	if !s.st.Ended || len(s.st.Open) != 0 {
		t.Error("the state records the end and holds no open chain")
	}
}

func TestAssembleUserHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prompt string
		source FixSource
	}{
		{"No, use encoding='utf-8' instead.", FixUserHint},
		{"不要用 ascii，应该用 utf-8 读取", FixUserHint},
		{"Use the utf-8 codec", FixUserHint},
		{"ok, continue", FixSelfCorrection},
		{"继续", FixSelfCorrection},
	} {
		s := newSession(t)
		s.run("python load_notes.py", 1, pyEncodingError)
		s.feed(Event{Kind: EventPrompt, Text: tc.prompt})
		s.feed(Event{Kind: EventEdit, Path: "load_notes.py"})
		tr := s.run("python load_notes.py", 0, "")[0].Trace
		a := tr.Attempts[1]
		if a.FixSource != tc.source {
			t.Errorf("prompt %q: fix_source = %q, want %q", tc.prompt, a.FixSource, tc.source)
		}
		if !strings.Contains(a.FixApplied, "user: ") {
			t.Errorf("prompt %q: fix_applied %q does not quote the user", tc.prompt, a.FixApplied)
		}
	}
}

// Other commands between two runs are part of the fix; the run itself is not.
func TestAssembleCommandAsFix(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.run("python fetch.py", 1, "Traceback (most recent call last):\n  File \"fetch.py\", line 1, in <module>\n    import requests\nModuleNotFoundError: No module named 'requests'")
	ups := s.run("pip install requests", 0, "Successfully installed requests-2.31.0")
	if len(ups) != 1 || ups[0].Trace.SkillID != "cmd:pip install" {
		t.Fatalf("the pip run is its own one-attempt trace: %+v", ups)
	}
	tr := s.run("python fetch.py", 0, "")[0].Trace
	a := tr.Attempts[1]
	if a.FixApplied != "ran `pip install requests`" || a.FixSource != FixSelfCorrection {
		t.Errorf("fix = %q (%s)", a.FixApplied, a.FixSource)
	}
	if got := SuggestFix(a.FixActions); got != "Run `pip install requests`" {
		t.Errorf("SuggestFix = %q", got)
	}
}

func TestAssemblePlainRetryHasNoFix(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.run("npm test", 1, "Tests: 1 failed, 3 passed, 4 total")
	tr := s.run("npm test", 0, "Tests: 4 passed, 4 total")[0].Trace
	if a := tr.Attempts[1]; a.FixApplied != "" || a.FixSource != "" {
		t.Errorf("a plain retry carries no fix: %+v", a)
	}
}

func TestAssembleIdempotentEvents(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	ev := Event{ID: "hook-1", Kind: EventCommand, Command: "go vet ./...", ExitCode: code(1), Output: "x.go:1:1: undefined: y", Time: at(5)}
	s.feed(ev)
	before := s.st
	ups := s.feed(ev)
	if len(ups) != 0 || len(s.st.Open) != 1 || len(s.st.Open[0].Trace.Attempts) != 1 {
		t.Errorf("a duplicate event changed something: %+v", ups)
	}
	if !reflect.DeepEqual(before, s.st) {
		t.Error("state changed on a duplicate event")
	}
}

func TestFeedDoesNotModifyItsInput(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.run("make build", 2, "make: *** [Makefile:8: build] Error 1")
	snapshot := cloneState(s.st)
	if _, _, err := Feed(s.st, Event{Kind: EventEdit, Path: "Makefile", Time: at(100)}, s.cfg); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snapshot, s.st) {
		t.Error("Feed modified the state it was given")
	}
}

func TestAssembleLimits(t *testing.T) {
	t.Parallel()
	t.Run("max attempts", func(t *testing.T) {
		s := newSession(t)
		s.cfg.MaxAttempts = 3
		for i := 0; i < 3; i++ {
			s.run("go build ./...", 1, "main.go:3:2: undefined: x")
		}
		c := s.closed()
		if len(c) != 1 || len(c[0].Attempts) != 3 || c[0].FinalSuccess {
			t.Errorf("closed = %+v", c)
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		s := newSession(t)
		s.feed(Event{Kind: EventCommand, Command: "go build ./...", ExitCode: code(1), Output: "main.go:3:2: undefined: x", Time: at(0)})
		ups := s.feed(Event{Kind: EventPrompt, Text: "next task", Time: at(0).Add(2*time.Hour + time.Second)})
		if len(ups) != 1 || ups[0].Kind != UpdateClosed || ups[0].Trace.FinalSuccess {
			t.Errorf("updates = %+v, want the idle chain closed as failed", ups)
		}
		// exactly at the timeout the chain stays open
		s2 := newSession(t)
		s2.feed(Event{Kind: EventCommand, Command: "go build ./...", ExitCode: code(1), Output: "x", Time: at(0)})
		if ups := s2.feed(Event{Kind: EventPrompt, Text: "hm", Time: at(0).Add(2 * time.Hour)}); len(ups) != 0 {
			t.Errorf("closed at exactly the timeout: %+v", ups)
		}
	})
	t.Run("no single success", func(t *testing.T) {
		s := newSession(t)
		s.cfg.RecordSingleSuccess = false
		if ups := s.run("go test ./...", 0, "ok"); len(ups) != 0 {
			t.Errorf("updates = %+v", ups)
		}
	})
}

func TestAssembleTwoChainsAtOnce(t *testing.T) {
	t.Parallel()
	s := newSession(t)
	s.run("go build ./...", 1, "main.go:3:2: undefined: x")
	s.run("npm test", 1, "Tests: 1 failed, 1 total")
	s.feed(Event{Kind: EventEdit, Path: "main.go"})
	build := s.run("go build ./...", 0, "")[0].Trace
	s.feed(Event{Kind: EventEdit, Path: "app.test.js"})
	npm := s.run("npm test", 0, "")[0].Trace
	if build.Attempts[1].FixApplied != "ran `npm test` (exit 1); edited main.go" {
		t.Errorf("go build fix = %q", build.Attempts[1].FixApplied)
	}
	if npm.Attempts[1].FixApplied != "ran `go build ./...`; edited main.go, app.test.js" {
		t.Errorf("npm test fix = %q", npm.Attempts[1].FixApplied)
	}
	if build.ID == npm.ID {
		t.Error("two chains share an id")
	}
}

func TestFeedRejectsBadEvents(t *testing.T) {
	t.Parallel()
	st, _ := NewAssemblerState("s")
	st, _, err := Feed(st, Event{Kind: EventPrompt, Text: "hi", Time: at(10)}, DefaultAssemblyConfig())
	if err != nil {
		t.Fatal(err)
	}
	bad := []Event{
		{Kind: "tool", Time: at(20)},
		{Kind: EventCommand, Time: at(20)},
		{Kind: EventCommand, Command: "ls", Time: time.Time{}},
		{Kind: EventPrompt, Text: "earlier", Time: at(5)},
		{Kind: EventEdit, Time: at(20)},
		{Kind: EventCommand, Command: "go test", FixSource: "magic", Time: at(20)},
		{Kind: EventCommand, Command: "go test", DurationMS: -1, Time: at(20)},
		{Kind: EventCommand, Command: strings.Repeat("x", MaxCommandLen+1), Time: at(20)},
	}
	for _, ev := range bad {
		if _, _, err := Feed(st, ev, DefaultAssemblyConfig()); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("Feed(%+v) error = %v, want ErrInvalidEvent", ev.Kind, err)
		}
	}
	if _, _, err := Feed(AssemblerState{}, Event{Kind: EventPrompt, Text: "x", Time: at(1)}, DefaultAssemblyConfig()); !errors.Is(err, ErrInvalidState) {
		t.Errorf("a state without a session id: error = %v, want ErrInvalidState", err)
	}
	cfg := DefaultAssemblyConfig()
	cfg.MaxAttempts = 0
	if _, _, err := Feed(st, Event{Kind: EventPrompt, Text: "x", Time: at(30)}, cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad config: error = %v", err)
	}
}

func TestInferFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		exit   *int
		output string
		failed bool
	}{
		{code(0), pyEncodingError, false}, // the exit code decides
		{code(2), "", true},
		{nil, pyEncodingError, true},
		{nil, "bash: jq: command not found", true},
		{nil, "3 passed, 0 errors in 0.1s", false},
		{nil, "", false},
	}
	for _, c := range cases {
		if got := InferFailure(c.exit, c.output); got != c.failed {
			t.Errorf("InferFailure(%v, %.30q) = %v", c.exit, c.output, got)
		}
	}
}

func TestCommandArtifactsAndLastFailure(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{
		"./scripts/test.sh --fast": "scripts/test.sh", "python app/main.py": "app/main.py", "node server.js": "server.js",
		"bash deploy.sh": "deploy.sh", "go test ./...": "", "python -m pytest": "",
	} {
		c, _ := ParseCommand(cmd)
		got := strings.Join(CommandArtifacts(c), ",")
		if got != want {
			t.Errorf("CommandArtifacts(%q) = %q, want %q", cmd, got, want)
		}
	}
	s := newSession(t)
	s.run("python app/main.py", 1, pyEncodingError)
	a, ok := s.st.LastFailure("python3 ./app/main.py --retry", "")
	if !ok || a.Index != 1 || len(a.Signatures) != 2 || a.ActivatedArtifacts[0] != "app/main.py" {
		t.Errorf("LastFailure = %+v, %v", a, ok)
	}
	if _, ok := s.st.LastFailure("go test", ""); ok {
		t.Error("a failure for a command with no open chain")
	}
}
