package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/mcp"
)

// headerTransport adds headers to every request.
type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects a Go SDK client to an MCP endpoint over streamable
// HTTP.
func connectHTTP(t *testing.T, endpoint, protocol string, header http.Header) *mcpsdk.ClientSession {
	t.Helper()
	tr := &mcpsdk.StreamableClientTransport{Endpoint: endpoint}
	if header != nil {
		tr.HTTPClient = &http.Client{Transport: headerTransport{header}}
	}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "kaizen-go-http-test", Version: "1.0.0"}, nil)
	cs, err := client.Connect(context.Background(), tr, &mcpsdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	e := openEngine(t, setupOpts{})
	calls := &callLog{}
	ts := httptest.NewServer(mcp.HTTPHandler(e, mcp.Options{OnToolCall: calls.record}))
	t.Cleanup(ts.Close)

	for _, protocol := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("protocol "+protocol, func(t *testing.T) {
			cs := connectHTTP(t, ts.URL, protocol, nil)
			tools := listTools(t, cs)
			if len(tools) != len(mcp.ToolNames()) {
				t.Fatalf("%d tools", len(tools))
			}
			schemas := loadOutputSchemas(t, cs)
			var res kaizen.OutcomeResult
			checkOK(t, schemas, "record_outcome", callTool(t, cs, "record_outcome", outcome("bd-1", false, "Split by file type")), &res)
			if res.Outcome.Project != "test" {
				t.Errorf("project %q, want the engine default (no roots over stateless HTTP)", res.Outcome.Project)
			}
			bad := callTool(t, cs, "record_outcome", map[string]any{"bead_id": "bd-1", "duration_ms": -1, "success": true})
			if !bad.IsError || !strings.Contains(textOf(t, bad), `field "duration_ms"`) {
				t.Errorf("bad input: %+v", bad)
			}
		})
	}

	t.Run("project from the URL or header", func(t *testing.T) {
		for _, tc := range []struct {
			url    string
			header http.Header
			want   string
		}{
			{ts.URL + "?project=webapp", nil, "webapp"},
			{ts.URL, http.Header{mcp.ProjectHeader: {"from-header"}}, "from-header"},
			{ts.URL + "?project=same", http.Header{mcp.ProjectHeader: {"same"}}, "same"},
		} {
			cs := connectHTTP(t, tc.url, "", tc.header)
			var res kaizen.OutcomeResult
			checkOK(t, nil, "record_outcome", callTool(t, cs, "record_outcome", outcome("bd-1", true)), &res)
			if res.Outcome.Project != tc.want {
				t.Errorf("%s %v: project %q, want %q", tc.url, tc.header, res.Outcome.Project, tc.want)
			}
			checkOK(t, nil, "record_outcome", callTool(t, cs, "record_outcome",
				map[string]any{"project": "argument", "bead_id": "bd-2", "duration_ms": 1, "success": true}), &res)
			if res.Outcome.Project != "argument" {
				t.Errorf("the argument does not win: %q", res.Outcome.Project)
			}
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		post := func(url string, header http.Header, body string) *http.Response {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		for _, tc := range []struct {
			name   string
			url    string
			header http.Header
			body   string
			want   int
		}{
			{"conflicting projects", ts.URL + "?project=a", http.Header{mcp.ProjectHeader: {"b"}}, ping, http.StatusBadRequest},
			{"empty project", ts.URL + "?project=", nil, ping, http.StatusBadRequest},
			{"repeated project", ts.URL + "?project=a&project=b", nil, ping, http.StatusBadRequest},
			{"body too large", ts.URL, nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` +
				strings.Repeat("x", int(mcp.DefaultMaxBodyBytes)) + `"}}`, http.StatusRequestEntityTooLarge},
		} {
			if resp := post(tc.url, tc.header, tc.body); resp.StatusCode != tc.want {
				t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
			}
		}
		resp, err := http.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET: status %d, want 405 (stateless: no standalone stream)", resp.StatusCode)
		}
	})

	if len(calls.snapshot()) == 0 {
		t.Error("the hook saw no call over HTTP")
	}
}

// daemon serves the MCP endpoint at /mcp on a fixed loopback address over
// a SQLite database, and restarts like a daemon process: the server stops,
// the engine closes, and a new engine on the same file is served on the
// same address.
type daemon struct {
	t      *testing.T
	cfg    kaizen.Config
	addr   string
	engine *kaizen.Engine
	srv    *http.Server
	done   chan error
}

func startDaemon(t *testing.T) *daemon {
	t.Helper()
	d := &daemon{t: t, cfg: kaizen.DefaultConfig()}
	d.cfg.Home = t.TempDir()
	d.cfg.DB = filepath.Join(d.cfg.Home, "kaizen.db")
	d.cfg.Project = "test"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.addr = ln.Addr().String()
	d.serve(ln)
	t.Cleanup(d.stop)
	return d
}

// url is the endpoint's URL with an optional query.
func (d *daemon) url(query string) string { return "http://" + d.addr + "/mcp" + query }

func (d *daemon) serve(ln net.Listener) {
	e, err := kaizen.Open(context.Background(), d.cfg)
	if err != nil {
		d.t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.HTTPHandler(e, mcp.Options{}))
	d.engine, d.done = e, make(chan error, 1)
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { d.done <- d.srv.Serve(ln) }()
}

func (d *daemon) stop() {
	if d.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.srv.Shutdown(ctx); err != nil {
		d.t.Error(err)
	}
	if err := <-d.done; !errors.Is(err, http.ErrServerClosed) {
		d.t.Error(err)
	}
	if err := d.engine.Close(); err != nil {
		d.t.Error(err)
	}
	d.srv = nil
}

// restart stops the daemon and starts a new one on the same address and
// database. Binding is retried briefly while the old socket closes.
func (d *daemon) restart() {
	d.stop()
	var ln net.Listener
	var err error
	for range 100 {
		if ln, err = net.Listen("tcp", d.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		d.t.Fatal(err)
	}
	d.serve(ln)
}

// A client keeps working when the daemon restarts (a new process: a new
// engine on the same database): the HTTP transport is stateless.
func TestHTTPSurvivesRestart(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	for _, protocol := range []string{"", "2025-06-18"} {
		t.Run("protocol "+protocol, func(t *testing.T) {
			// Its own HTTP transport: the restart closes the pooled
			// connection, and a request sent in the microseconds before the
			// client notices would fail (POSTs are not retried). A real
			// restart takes far longer than that; dropping the idle
			// connections models the gap.
			hc := &http.Client{Transport: &http.Transport{}}
			tr := &mcpsdk.StreamableClientTransport{Endpoint: d.url(""), HTTPClient: hc}
			client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "kaizen-go-http-test", Version: "1.0.0"}, nil)
			cs, err := client.Connect(context.Background(), tr, &mcpsdk.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			checkOK(t, nil, "record_outcome", callTool(t, cs, "record_outcome", outcome("before-"+protocol, true)), nil)
			d.restart()
			hc.CloseIdleConnections()
			var list kaizen.OutcomeList
			checkOK(t, nil, "list_outcomes", callTool(t, cs, "list_outcomes", map[string]any{"bead_id": "before-" + protocol}), &list)
			if list.Total != 1 {
				t.Errorf("after the restart: %d outcomes", list.Total)
			}
			checkOK(t, nil, "record_outcome", callTool(t, cs, "record_outcome", outcome("after-"+protocol, true)), nil)
		})
	}
}

// Concurrent clients over HTTP on SQLite: no error, no lost outcome.
func TestHTTPConcurrentClients(t *testing.T) {
	t.Parallel()
	e := openEngine(t, setupOpts{sqlite: true})
	ts := httptest.NewServer(mcp.HTTPHandler(e, mcp.Options{}))
	t.Cleanup(ts.Close)
	const clients, each = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := range clients {
		wg.Go(func() {
			tr := &mcpsdk.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true}
			client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "load", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), tr, nil)
			if err != nil {
				errs <- err
				return
			}
			defer cs.Close()
			for i := range each {
				args := outcome(fmt.Sprintf("bd-%d-%d", c, i), i%3 != 0, "Split by feature")
				res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "record_outcome", Arguments: args})
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error: %v", res.Content)
				}
				if err == nil {
					res, err = cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "plan_guidance",
						Arguments: map[string]any{"task": "split by feature"}})
					if err == nil && res.IsError {
						err = fmt.Errorf("tool error: %v", res.Content)
					}
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != clients*each {
		t.Errorf("%d outcomes recorded, want %d", list.Total, clients*each)
	}
}
