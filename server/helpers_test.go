package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/server"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
)

var start = testkit.Start

// testBundle is one engine on a temporary SQLite file served over a real
// loopback listener.
type testBundle struct {
	t      *testing.T
	engine *kaizen.Engine
	clock  *testkit.Clock
	srv    *server.Server
	ts     *httptest.Server
	logs   *syncBuffer
	token  string
}

type setupOpts struct {
	db       string // default: a SQLite file in a temp dir
	serverFn func(*server.Options)
}

func setup(t *testing.T, tweaks ...func(*setupOpts)) *testBundle {
	t.Helper()
	var so setupOpts
	for _, f := range tweaks {
		f(&so)
	}
	c := testkit.NewClock(start)
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = so.db
	if cfg.DB == "" {
		cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	}
	cfg.Project = "proj"
	cfg.Now = c.Now
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	logs := &syncBuffer{}
	opts := server.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if so.serverFn != nil {
		so.serverFn(&opts)
	}
	srv, err := server.New(e, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &testBundle{t: t, engine: e, clock: c, srv: srv, ts: ts, logs: logs, token: opts.Token}
}

func withServer(f func(*server.Options)) func(*setupOpts) {
	return func(o *setupOpts) { o.serverFn = f }
}

// response is a decoded HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return m
}

// decode decodes the body into v.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, r.body)
	}
}

// apiError is the JSON error format.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Op      string `json:"op"`
		Field   string `json:"field"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
		Next    string `json:"next"`
	} `json:"error"`
}

// errorOf decodes a JSON error response, checking its content type.
func (r response) errorOf(t *testing.T) apiError {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error response %d has content type %q: %s", r.status, ct, r.body)
	}
	var e apiError
	r.decode(t, &e)
	if e.Error.Code == "" || e.Error.Message == "" || e.Error.Op == "" {
		t.Fatalf("error response %d lacks code/op/message: %s", r.status, r.body)
	}
	return e
}

// req is one request to send.
type req struct {
	method, path string
	body         any // string, []byte, io.Reader or a value encoded as JSON
	header       map[string]string
	noToken      bool
}

func (b *testBundle) do(r req) response {
	b.t.Helper()
	var body io.Reader
	switch v := r.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(v)
	case []byte:
		body = bytes.NewReader(v)
	case io.Reader:
		body = v
	default:
		data, err := json.Marshal(v)
		if err != nil {
			b.t.Fatal(err)
		}
		body = bytes.NewReader(data)
	}
	hr, err := http.NewRequest(r.method, b.ts.URL+r.path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if b.token != "" && !r.noToken {
		hr.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := b.ts.Client().Do(hr)
	if err != nil {
		b.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatalf("%s %s: read body: %v", r.method, r.path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func (b *testBundle) get(path string) response {
	b.t.Helper()
	return b.do(req{method: "GET", path: path})
}

func (b *testBundle) post(path string, body any) response {
	b.t.Helper()
	return b.do(req{method: "POST", path: path, body: body})
}

// must checks the status of a response.
func (b *testBundle) must(r response, status int) response {
	b.t.Helper()
	if r.status != status {
		b.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

// snapshot is the project's exported records without the header line (the
// state a rejected request must leave unchanged).
func (b *testBundle) snapshot(projects ...string) string {
	b.t.Helper()
	var buf bytes.Buffer
	if _, err := b.engine.Export(context.Background(), &buf, kaizen.ExportOptions{Projects: projects, All: len(projects) == 0}); err != nil {
		b.t.Fatal(err)
	}
	_, rest, _ := strings.Cut(buf.String(), "\n")
	return rest
}

func outcome(bead string, success bool, strategy string) map[string]any {
	return map[string]any{"bead_id": bead, "duration_ms": 60_000, "success": success, "strategy": strategy}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
