package trace

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMask: the normaliser never panics, returns valid UTF-8 without runs
// of spaces, and is idempotent on its own output's stable words.
func FuzzMask(f *testing.F) {
	for _, s := range []string{
		"panic: runtime error: index out of range [5] with length 3",
		"dial tcp 127.0.0.1:5432: connect: connection refused",
		"Traceback (most recent call last):\n  File \"/x.py\", line 1\nKeyError: 'a'",
		"'unterminated", "`a` \"b\" 'c' ‘d’ «e»", "0x", "::", "/", "C:\\x\\y.go:1:2", "\xff\xfe", "<str> <num>",
		"did you mean: x", "a@'b'", "1.2.3.4:5 [::1]:80 ::: 9f8e7d6c5b4a 2024-01-02T03:04:05Z",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, values bool) {
		m := Mask(s, values)
		if !utf8.ValidString(m) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if strings.Contains(m, "  ") || strings.TrimSpace(m) != m {
			t.Fatalf("uncollapsed spaces in %q", m)
		}
		sig := Fingerprint(s, "")
		if sig.Type == "" || sig.Strict == "" || sig.Loose == "" || sig.Message == "" {
			t.Fatalf("incomplete signature %+v", sig)
		}
		if Fingerprint(s, "") != sig {
			t.Fatal("Fingerprint is not deterministic")
		}
	})
}

// FuzzParseCommand: the command-family parser never panics; a family, when
// there is one, is a single line and stable.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"go test ./... -run TestX -count=1", "cd x && npm run build", "python -m pytest tests/x.py -k foo",
		"sudo -u pg timeout 5 bash -c 'eval \"make lint\"'", "cat <<EOF\nx\nEOF\ncargo test", "a | b || c && d ; e &",
		"'", "\"", "`", "$(", "${", "\\", "2>&1", "<<", "<<-E", "FOO=1", "((", "))", "bash -c", "npx", "uv run",
		"python -m", "docker compose -f", "make -j", "mvn -P", "x\x00y", "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCommand(s)
		if err != nil {
			return
		}
		if c.Family == "" || strings.ContainsAny(c.Family, "\n\r\x00") || len(c.Family) > MaxIDLen {
			t.Fatalf("bad family %q from %q", c.Family, s)
		}
		if c2, _ := ParseCommand(s); c2.Family != c.Family {
			t.Fatal("not deterministic")
		}
	})
}

// FuzzTraceValidate: validation never panics on any JSON; a trace that
// validates survives a JSON round trip still valid.
func FuzzTraceValidate(f *testing.F) {
	good, _ := json.Marshal(validTrace())
	f.Add(string(good))
	f.Add(`{"id":"x","skill_id":"s","created_at":"2026-01-01T00:00:00Z","attempts":[{"index":1,"timestamp":"2026-01-01T00:00:00Z","success":true}],"final_success":true}`)
	f.Add(`{"attempts":[{"index":2}]}`)
	f.Add(`{"id":"x","skill_id":"s","created_at":"2026-01-01T00:00:00Z","attempts":[{"index":1,"timestamp":"2026-01-01T00:00:00Z","fix_source":"user_hint","fix_applied":"x"}]}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		var tr ExecutionTrace
		if json.Unmarshal([]byte(s), &tr) != nil {
			return
		}
		if tr.Validate() != nil {
			return
		}
		raw, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		var back ExecutionTrace
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("valid trace became invalid after a round trip: %v", err)
		}
		_, _ = ReviewTask([]ExecutionTrace{tr}, nil, t0, DefaultReviewConfig())
	})
}

// FuzzFeed: assembling arbitrary event sequences never panics and only
// produces valid traces.
func FuzzFeed(f *testing.F) {
	f.Add("go test ./...", 1, "--- FAIL: TestX", "No, use -race", "x.go", "go test ./...", 0)
	f.Add("", 0, "", "", "", "bash -c '", 127)
	f.Add("pytest", 2, pyEncodingError, "不要这样", "", "pytest", 2)
	f.Fuzz(func(t *testing.T, cmd1 string, exit1 int, out1, prompt, edit, cmd2 string, exit2 int) {
		st, _ := NewAssemblerState("fz")
		cfg := DefaultAssemblyConfig()
		evs := []Event{
			{Kind: EventCommand, Command: cmd1, ExitCode: &exit1, Output: out1, Time: at(1)},
			{Kind: EventPrompt, Text: prompt, Time: at(2)},
			{Kind: EventEdit, Path: edit, Time: at(3)},
			{Kind: EventCommand, Command: cmd2, Output: out1, Time: at(4)},
			{Kind: EventCommand, Command: cmd2, ExitCode: &exit2, Time: at(5)},
			{Kind: EventSessionEnd, Time: at(6)},
		}
		for _, ev := range evs {
			next, ups, err := Feed(st, ev, cfg)
			if err != nil {
				continue
			}
			st = next
			for _, u := range ups {
				if err := u.Trace.Validate(); err != nil {
					t.Fatalf("invalid trace from %+v: %v", ev, err)
				}
			}
		}
		if len(st.Open) != 0 {
			t.Fatal("chains open after the session ended")
		}
	})
}
