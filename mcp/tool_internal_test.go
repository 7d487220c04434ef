package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
)

// serveTools connects a client to a server with the given tools only.
func serveTools(t *testing.T, opts Options, tools ...*toolDef) *mcpsdk.ClientSession {
	t.Helper()
	cfg := kaizen.DefaultConfig()
	cfg.Home, cfg.DB, cfg.Project = t.TempDir(), "memory", "test"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := newServer(e, opts, true, tools).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "internal", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type echoInput struct {
	Project string `json:"project,omitempty"`
	Word    string `json:"word"`
}

type echoOutput struct {
	Project string `json:"project"`
	Word    string `json:"word"`
}

func echoTool(name string, run func(echoInput) (echoOutput, error)) *toolDef {
	return define(toolDef{name: name, title: name, description: "test tool",
		fields: map[string]field{"word": {desc: "a word"}}},
		func(_ context.Context, _ *kaizen.Engine, in echoInput) (echoOutput, error) { return run(in) },
		func(o echoOutput) string { return o.Word })
}

// A panic in a tool and an internal error become isError results with a
// reference; the details go to the log only.
func TestInternalFailuresAreToolErrors(t *testing.T) {
	t.Parallel()
	logs := &SyncBuffer{}
	var mu sync.Mutex
	var seen []error
	opts := Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), OnToolCall: func(_ string, _ time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, err)
	}}
	cs := serveTools(t, opts,
		echoTool("boom", func(echoInput) (echoOutput, error) { panic("kaboom") }),
		echoTool("leak", func(echoInput) (echoOutput, error) {
			return echoOutput{}, errors.New("pq: relation secret_table does not exist")
		}),
		echoTool("echo", func(in echoInput) (echoOutput, error) { return echoOutput(in), nil }),
	)
	for _, name := range []string{"boom", "leak"} {
		res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: map[string]any{"word": "x"}})
		if err != nil {
			t.Fatalf("%s: protocol error %v", name, err)
		}
		text := res.Content[0].(*mcpsdk.TextContent).Text
		if !res.IsError || !strings.Contains(text, "(internal): internal error (ref ") || strings.Contains(text, "secret") ||
			strings.Contains(text, "kaboom") {
			t.Errorf("%s: %v %q", name, res.IsError, text)
		}
	}
	if l := logs.String(); !strings.Contains(l, "kaboom") || !strings.Contains(l, "secret_table") || !strings.Contains(l, "stack=") {
		t.Errorf("log lacks the details:\n%s", l)
	}
	// The server still works, and fills the project of calls naming none.
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"word": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if got := string(mustJSON(t, res.StructuredContent)); got != `{"project":"","word":"hi"}` {
		t.Errorf("echo: %s (no roots: the engine default, empty here)", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || kaizen.KindOf(seen[0]) != kaizen.KindInternal || seen[2] != nil {
		t.Errorf("hook saw %v", seen)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecorateFindsProblems(t *testing.T) {
	t.Parallel()
	type in struct {
		Project string `json:"project,omitempty"`
		A       *int   `json:"a,omitempty"`
		B       string `json:"b"`
		Alias   string `json:"alias,omitempty"`
	}
	s, err := jsonschema.For[in](nil)
	if err != nil {
		t.Fatal(err)
	}
	d := toolDef{name: "x", hidden: []string{"alias"}, fields: map[string]field{
		"a": intField("a number", 0, 10), "gone": {desc: "renamed away"}}}
	problems := decorate(&d, s)
	want := []string{`described property "gone" does not exist`, `property "b" has no description`}
	if strings.Join(problems, "|") != strings.Join(want, "|") {
		t.Errorf("problems %q, want %q", problems, want)
	}
	a := s.Properties["a"]
	if a.Type != "integer" || a.Types != nil || *a.Minimum != 0 || *a.Maximum != 10 || a.Description != "a number" {
		t.Errorf("a: %+v", a)
	}
	if _, ok := s.Properties["alias"]; ok || len(s.Required) != 0 {
		t.Errorf("alias advertised or required set: %+v", s)
	}
	if s.Properties["project"].Description == "" {
		t.Error("project lacks the common description")
	}
}

func TestRootProject(t *testing.T) {
	t.Parallel()
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]string{
		"file:///home/me/src/webapp":                  "webapp",
		"file:///home/me/src/webapp/":                 "webapp",
		"file:///home/me/My%20Project":                "My Project",
		"file://" + repo + "/pkg/sub":                 "repo",
		"file:///":                                    "",
		"https://example.com/x":                       "",
		"file:///tmp/bad%00name":                      "",
		"not a uri at all \x7f":                       "",
		"file:///home/me/" + strings.Repeat("x", 200): "",
	} {
		if got := rootProject(uri); got != want {
			t.Errorf("rootProject(%q) = %q, want %q", uri, got, want)
		}
	}
}

func TestErrorResultText(t *testing.T) {
	t.Parallel()
	res := errorResult("get_pattern", &kaizen.Error{Op: "get pattern", Kind: kaizen.KindNotFound, Field: "pattern",
		Message: `no pattern "x" in project "p"`, Hint: "list the project's patterns to find its id or exact content", Next: "list_patterns"})
	want := "get pattern failed (not_found): field \"pattern\": no pattern \"x\" in project \"p\".\nHint: list the project's patterns to find its id or exact content (call the list_patterns tool)."
	if got := res.Content[0].(*mcpsdk.TextContent).Text; got != want || !res.IsError {
		t.Errorf("got %q\nwant %q", got, want)
	}
	res = errorResult("record_outcome", &kaizen.Error{Op: "record outcome", Kind: kaizen.KindInvalid, Field: "success", Message: "is required"})
	if got := res.Content[0].(*mcpsdk.TextContent).Text; !strings.HasSuffix(got, "Hint: nothing was recorded; correct the argument and call the tool again.") {
		t.Errorf("default hint missing: %q", got)
	}
}
