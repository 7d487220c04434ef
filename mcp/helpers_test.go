package mcp_test

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/mcp"
)

// testBundle is a real engine served by an MCP server, with a Go SDK client
// connected to it over in-memory transports.
type testBundle struct {
	t       *testing.T
	engine  *kaizen.Engine
	client  *mcpsdk.Client
	session *mcpsdk.ClientSession
	calls   *callLog
	schemas *outputSchemas
}

type setupOpts struct {
	project  string // engine default project
	opts     mcp.Options
	roots    []string       // directories offered as the client's roots
	noRoots  bool           // the client does not declare the roots capability
	sqlite   bool           // a SQLite file instead of the memory store
	protocol string         // the client\'s protocol version (default: the SDK\'s latest)
	engine   *kaizen.Engine // serve this engine instead of opening one
}

// openEngine opens an engine on the memory store (or a SQLite file in a
// temporary directory) with default project "test".
func openEngine(t *testing.T, so setupOpts) *kaizen.Engine {
	t.Helper()
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = "memory"
	if so.sqlite {
		cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	}
	cfg.Project = "test"
	if so.project != "" {
		cfg.Project = so.project
	}
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func setup(t *testing.T, tweaks ...func(*setupOpts)) *testBundle {
	t.Helper()
	var so setupOpts
	for _, f := range tweaks {
		f(&so)
	}
	e := so.engine
	if e == nil {
		e = openEngine(t, so)
	}
	b := &testBundle{t: t, engine: e, calls: &callLog{}}
	opts := so.opts
	opts.OnToolCall = b.calls.record
	srv := mcp.NewServer(b.engine, opts)
	copts := &mcpsdk.ClientOptions{}
	if so.noRoots {
		copts.Capabilities = &mcpsdk.ClientCapabilities{}
	}
	b.client = mcpsdk.NewClient(&mcpsdk.Implementation{Name: "kaizen-go-test", Version: "1.0.0"}, copts)
	for _, dir := range so.roots {
		b.client.AddRoots(&mcpsdk.Root{URI: fileURI(dir), Name: filepath.Base(dir)})
	}
	ct, st := mcpsdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	b.session, err = b.client.Connect(ctx, ct, &mcpsdk.ClientSessionOptions{ProtocolVersion: so.protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.session.Close() })
	b.schemas = loadOutputSchemas(t, b.session)
	return b
}

// setupOn serves e with a new server and client.
func setupOn(t *testing.T, e *kaizen.Engine) *testBundle {
	t.Helper()
	return setup(t, func(so *setupOpts) { so.engine = e })
}

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// callLog records the calls reported to Options.OnToolCall.
type callLog struct {
	mu    sync.Mutex
	calls []toolCall
}

type toolCall struct {
	tool string
	d    time.Duration
	err  error
}

func (l *callLog) record(tool string, d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, toolCall{tool, d, err})
}

func (l *callLog) snapshot() []toolCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]toolCall(nil), l.calls...)
}

// outputSchemas are the resolved output schemas listed by the server, used
// to check every structured result the way a client does.
type outputSchemas struct {
	byTool map[string]*jsonschema.Resolved
}

func loadOutputSchemas(t *testing.T, cs *mcpsdk.ClientSession) *outputSchemas {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &outputSchemas{byTool: map[string]*jsonschema.Resolved{}}
	for _, tool := range res.Tools {
		if tool.OutputSchema == nil {
			continue
		}
		var sch jsonschema.Schema
		remarshal(t, tool.OutputSchema, &sch)
		r, err := sch.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
		}
		s.byTool[tool.Name] = r
	}
	return s
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	data, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, to); err != nil {
		t.Fatal(err)
	}
}

// call calls a tool and fails the test on a protocol error.
func (b *testBundle) call(name string, args any) *mcpsdk.CallToolResult {
	b.t.Helper()
	return callTool(b.t, b.session, name, args)
}

func callTool(t *testing.T, cs *mcpsdk.ClientSession, name string, args any) *mcpsdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed, checks its result against the tool's
// output schema, decodes the structured result into out (if not nil) and
// returns the text content.
func (b *testBundle) ok(name string, args any, out any) string {
	b.t.Helper()
	res := b.call(name, args)
	return checkOK(b.t, b.schemas, name, res, out)
}

func checkOK(t *testing.T, schemas *outputSchemas, name string, res *mcpsdk.CallToolResult, out any) string {
	t.Helper()
	text := textOf(t, res)
	if res.IsError {
		t.Fatalf("%s: unexpected tool error: %s", name, text)
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structured content", name)
	}
	if schemas != nil {
		var instance any
		remarshal(t, res.StructuredContent, &instance)
		if r := schemas.byTool[name]; r == nil {
			t.Fatalf("%s: no output schema listed", name)
		} else if err := r.Validate(instance); err != nil {
			t.Fatalf("%s: structured content does not match the output schema: %v", name, err)
		}
	}
	if out != nil {
		remarshal(t, res.StructuredContent, out)
	}
	if strings.TrimSpace(text) == "" {
		t.Fatalf("%s: empty text content", name)
	}
	return text
}

// fail calls a tool that must answer with a tool error and returns its text.
func (b *testBundle) fail(name string, args any) string {
	b.t.Helper()
	res := b.call(name, args)
	text := textOf(b.t, res)
	if !res.IsError {
		b.t.Fatalf("%s %v: want a tool error, got: %s", name, args, text)
	}
	if res.StructuredContent != nil {
		b.t.Errorf("%s: a tool error carries structured content", name)
	}
	return text
}

func textOf(t *testing.T, res *mcpsdk.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcpsdk.TextContent)
		if !ok {
			t.Fatalf("content %T is not text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\n")
}

// outcome returns record_outcome arguments with the seed's fields.
func outcome(task string, success bool, patterns ...string) map[string]any {
	return map[string]any{"bead_id": task, "duration_ms": 120000, "error_count": 0, "retry_count": 0,
		"success": success, "patterns": patterns}
}
