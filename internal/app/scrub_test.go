package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

func TestScrubEverySecretFormat(t *testing.T) {
	t.Parallel()
	for _, s := range testkit.Secrets {
		got := app.Scrub(s.Text)
		if strings.Contains(got, s.Value) || !strings.Contains(got, "[REDACTED:") {
			t.Errorf("%s: Scrub(%q) = %q", s.Format, s.Text, got)
		}
		if again := app.Scrub(got); again != got {
			t.Errorf("%s: not idempotent: %q then %q", s.Format, got, again)
		}
	}
	all := app.Scrub(testkit.SecretText())
	testkit.AssertNoSecret(t, "scrubbed text", all)
	if !strings.HasPrefix(all, "the build failed; here is what I ran:\n") || !strings.HasSuffix(all, "please fix it\n") {
		t.Errorf("the text around the secrets changed: %q", all)
	}
	if app.Scrub("") != "" || app.Scrub("go test ./... passed") != "go test ./... passed" {
		t.Error("clean text changed")
	}
}

func TestScrubAllKeepsTheCallersSlice(t *testing.T) {
	t.Parallel()
	in := []string{"a", "token=" + "Tk7fQ2pL9mZ4xR8vB3nW6yC1", "b"}
	out := app.ScrubAll(in)
	if in[1] != "token=Tk7fQ2pL9mZ4xR8vB3nW6yC1" {
		t.Error("ScrubAll changed its input")
	}
	if out[0] != "a" || out[2] != "b" || strings.Contains(out[1], "Tk7fQ2") {
		t.Errorf("ScrubAll = %q", out)
	}
	clean := []string{"x", "y"}
	if got := app.ScrubAll(clean); &got[0] != &clean[0] {
		t.Error("a clean slice should be returned as is")
	}
	if app.ScrubAll(nil) != nil {
		t.Error("nil should stay nil")
	}
}

func TestScrubJSON(t *testing.T) {
	t.Parallel()
	in := json.RawMessage(`{"command": "export AWS_SECRET_ACCESS_KEY=Zp3Lm8Nq1Rs6Tv0Wx4Yz7Ab2Cd5Ef9Gh3Ij6Kl1M", "password": "c0rrect-H0rse-Battery!",
		"n": 12345678901234567890, "list": ["token=Tk7fQ2pL9mZ4xR8vB3nW6yC1", 1, null, true], "nested": {"api_key": "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7"}}`)
	out := app.ScrubJSON(in)
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	for _, s := range []string{"Zp3Lm8Nq1Rs6", "c0rrect-H0rse", "Tk7fQ2pL9mZ4", "Ab3De6Gh9Jk2"} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("%s left in %s", s, out)
		}
	}
	if !bytes.Contains(out, []byte("12345678901234567890")) || !bytes.Contains(out, []byte(`"command":"export AWS_SECRET_ACCESS_KEY=[REDACTED:`)) {
		t.Errorf("ScrubJSON lost what is not secret: %s", out)
	}
	clean := json.RawMessage(`{"a": [1, 2], "b": "go test"}`)
	if got := app.ScrubJSON(clean); !bytes.Equal(got, clean) {
		t.Errorf("clean JSON re-encoded: %s", got)
	}
	notJSON := json.RawMessage(`not json token=Tk7fQ2pL9mZ4xR8vB3nW6yC1`)
	if got := app.ScrubJSON(notJSON); bytes.Contains(got, []byte("Tk7fQ2")) {
		t.Errorf("invalid JSON not scrubbed as text: %s", got)
	}
	if app.ScrubJSON(nil) != nil {
		t.Error("nil should stay nil")
	}
}

func TestScrubStruct(t *testing.T) {
	t.Parallel()
	type inner struct {
		Note string
		Tags []string
	}
	type rec struct {
		ID     string
		Text   string
		Inner  inner
		Ptr    *inner
		Items  []inner
		ByName map[string]string
		Args   map[string]any
		Any    any
		Raw    json.RawMessage
		hidden string
	}
	sec := "token=Tk7fQ2pL9mZ4xR8vB3nW6yC1"
	r := rec{ID: "out-01jabc", Text: sec, Inner: inner{Note: sec, Tags: []string{sec}}, Ptr: &inner{Note: sec},
		Items: []inner{{Note: sec}}, ByName: map[string]string{"k": sec}, Args: map[string]any{"password": "c0rrect-H0rse-Battery!", "cmd": sec},
		Any: sec, Raw: json.RawMessage(`"x"`), hidden: sec}
	app.ScrubStruct(&r)
	dump, _ := json.Marshal(r)
	if bytes.Contains(dump, []byte("Tk7fQ2")) || bytes.Contains(dump, []byte("c0rrect")) {
		t.Errorf("secrets left: %s", dump)
	}
	if r.ID != "out-01jabc" || r.hidden != sec || string(r.Raw) != `"x"` {
		t.Errorf("ScrubStruct changed what it must not: %+v", r)
	}
	app.ScrubStruct(nil)
	app.ScrubStruct(r) // not a pointer: nothing to do, no panic
}

type stringer struct{}

func (stringer) String() string { return "token=Tk7fQ2pL9mZ4xR8vB3nW6yC1" }

func TestScrubLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := app.ScrubLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	if app.ScrubLogger(l) != l {
		t.Error("a scrubbing logger should not be wrapped twice")
	}
	sec := "token=Tk7fQ2pL9mZ4xR8vB3nW6yC1"
	l.With("pre", sec).WithGroup("g").Info("failed "+sec, "err", errors.New(sec), "s", stringer{}, "list", []string{sec},
		slog.Group("grp", "inner", sec), "n", 3)
	if strings.Contains(buf.String(), "Tk7fQ2") {
		t.Errorf("secret logged: %s", buf.String())
	}
	if !strings.Contains(buf.String(), "n=3") || !strings.Contains(buf.String(), "[REDACTED:") {
		t.Errorf("log lost its content: %s", buf.String())
	}
}

// FuzzScrubJSON: valid JSON stays valid JSON, scrubbing is idempotent,
// and nothing panics.
func FuzzScrubJSON(f *testing.F) {
	for _, s := range []string{`{"password": "c0rrect-H0rse-Battery!"}`, `["token=Tk7fQ2pL9mZ4xR8vB3nW6yC1", 1e400, -0]`,
		`"-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----"`, `{"a": {"b": [null, true, {"api_key": "x"}]}}`, `{"a":1}{"b":2}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := app.ScrubJSON(data)
		if json.Valid(data) && !json.Valid(out) {
			t.Fatalf("valid %q became invalid %q", data, out)
		}
		if again := app.ScrubJSON(out); !bytes.Equal(again, out) && json.Valid(data) {
			var a, b any
			if json.Unmarshal(again, &a) != nil || json.Unmarshal(out, &b) != nil {
				t.Fatalf("not idempotent: %q then %q", out, again)
			}
		}
	})
}
