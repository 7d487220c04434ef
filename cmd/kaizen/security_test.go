package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/metrics"
	"github.com/kaizenhq/kaizen/server"
)

// daemonSurfaces is the HTTP handler of `kaizen serve`: the REST API with
// every surface mounted as serve mounts them.
type daemonSurfaces struct {
	engine *kaizen.Engine
	srv    *server.Server
	ts     *httptest.Server
}

func newDaemonSurfaces(t *testing.T) *daemonSurfaces {
	t.Helper()
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Project = "proj"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	logger := slog.New(slog.DiscardHandler)
	srv, err := server.New(e, server.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := mountSurfaces(srv, e, metrics.New(), logger); err != nil {
		t.Fatal(err)
	}
	if err := srv.Handle(server.Route{Pattern: "POST " + hook.AnswerPath, MaxBodyBytes: spool.MaxEntryBytes + 4096,
		Handler: hook.AnswerHandler(hookIngester(e, cfg, logger))}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &daemonSurfaces{engine: e, srv: srv, ts: ts}
}

func (d *daemonSurfaces) snapshot(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := d.engine.Export(context.Background(), &buf, kaizen.ExportOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(buf.String(), "\n")
	return rest
}

// Finding 1 of issue 12 across every surface of the daemon: the REST API,
// the viewer (and its /events stream and login form), /metrics, /healthz,
// /mcp and the hooks' answer route all refuse a rebound Host or a foreign
// Origin before doing anything.
func TestSecurityRebindingEverySurface(t *testing.T) {
	t.Parallel()
	d := newDaemonSurfaces(t)
	ok, dur := true, int64(1000)
	if _, err := d.engine.RecordOutcome(context.Background(), kaizen.OutcomeInput{TaskID: "bd-1", Success: &ok, DurationMs: &dur}); err != nil {
		t.Fatal(err)
	}
	before := d.snapshot(t)
	_, port, _ := strings.Cut(d.ts.Listener.Addr().String(), ":")
	evil := "evil.example:" + port
	routes := d.srv.Routes()
	for _, want := range []string{"/mcp", "GET /metrics", "GET /healthz", "POST " + hook.AnswerPath} {
		found := false
		for _, r := range routes {
			found = found || r == want
		}
		if !found {
			t.Fatalf("route %q not mounted: %v", want, routes)
		}
	}
	for _, pattern := range routes {
		for _, rq := range testkit.RouteRequests(pattern) {
			for _, origin := range []string{"http://" + evil, ""} {
				var body io.Reader
				if rq.Method != "GET" {
					body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				}
				hr, _ := http.NewRequest(rq.Method, d.ts.URL+rq.Path, body)
				hr.Host = evil
				hr.Header.Set("Content-Type", "application/json")
				hr.Header.Set("Accept", "application/json, text/event-stream")
				if origin != "" {
					hr.Header.Set("Origin", origin)
				}
				resp, err := d.ts.Client().Do(hr)
				if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusMisdirectedRequest {
					t.Errorf("%s %s (origin %q): %d %.200s", rq.Method, rq.Path, origin, resp.StatusCode, data)
				}
			}
		}
	}
	if d.snapshot(t) != before {
		t.Error("rebinding requests changed the store")
	}
}

// Finding 4 of issue 12: errors printed "kaizen: kaizen: …".
func TestSecurityErrorLineOnePrefix(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		errors.New("boom"),
		fmt.Errorf("kaizen: already prefixed: %w", errors.New("boom")),
		&kaizen.Error{Op: "kaizen", Kind: kaizen.KindInvalid, Message: "boom"},
	} {
		var stderr bytes.Buffer
		a := &app{stdout: io.Discard, stderr: &stderr}
		a.fail(err)
		if got := stderr.String(); strings.Count(got, "kaizen:") != 1 || !strings.HasPrefix(got, "kaizen: ") {
			t.Errorf("%v printed %q", err, got)
		}
	}
}
