package viewer_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/viewer"
)

var start = testkit.Start

// testBundle is an engine on a temporary SQLite file, a server with the
// viewer mounted, and an httptest server over a real listener.
type testBundle struct {
	t      *testing.T
	engine *kaizen.Engine
	clock  *testkit.Clock
	srv    *server.Server
	viewer *viewer.Viewer
	ts     *httptest.Server
	token  string
}

type setupOpts struct {
	token string
	clock bool // use a fixed, settable clock (default: real time)
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
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	cfg.Project = "proj"
	if so.clock {
		cfg.Now = c.Now
	}
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	srv, err := server.New(e, server.Options{Token: so.token, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.Register(srv, viewer.Options{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		v.Close()
		ts.Close()
	})
	return &testBundle{t: t, engine: e, clock: c, srv: srv, viewer: v, ts: ts, token: so.token}
}

func withToken(tok string) func(*setupOpts) { return func(o *setupOpts) { o.token = tok } }
func withClock(o *setupOpts)                { o.clock = true }

// response is a read HTTP response.
type response struct {
	status int
	header http.Header
	body   string
}

// req is one request to send.
type req struct {
	method, path string
	form         url.Values // sent urlencoded
	header       map[string]string
	noToken      bool
}

func (b *testBundle) do(r req) response {
	b.t.Helper()
	var body io.Reader
	if r.form != nil {
		body = strings.NewReader(r.form.Encode())
	}
	if r.method == "" {
		r.method = "GET"
	}
	hr, err := http.NewRequest(r.method, b.ts.URL+r.path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if r.form != nil {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.token != "" && !r.noToken {
		hr.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	client := *b.ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(hr)
	if err != nil {
		b.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatalf("%s %s: read body: %v", r.method, r.path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

func (b *testBundle) get(path string) response {
	b.t.Helper()
	return b.do(req{path: path})
}

// htmx sends a request as htmx does, targeting the element with id target.
func (b *testBundle) htmx(method, path, target string, form url.Values) response {
	b.t.Helper()
	h := map[string]string{"HX-Request": "true", "Sec-Fetch-Site": "same-origin"}
	if target != "" {
		h["HX-Target"] = target
	}
	return b.do(req{method: method, path: path, form: form, header: h})
}

// must checks the status of a response.
func (b *testBundle) must(r response, status int) response {
	b.t.Helper()
	if r.status != status {
		b.t.Fatalf("status %d, want %d:\n%s", r.status, status, r.body)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

// record records an outcome through the engine.
func (b *testBundle) record(in kaizen.OutcomeInput) *kaizen.OutcomeResult {
	b.t.Helper()
	if in.DurationMs == nil {
		in.DurationMs = ptr(int64(60_000))
	}
	if in.Success == nil {
		in.Success = ptr(true)
	}
	res, err := b.engine.RecordOutcome(context.Background(), in)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// patternID returns the id of the pattern with this content.
func (b *testBundle) patternID(project, content string) string {
	b.t.Helper()
	d, err := b.engine.GetPattern(context.Background(), project, content)
	if err != nil {
		b.t.Fatal(err)
	}
	return d.ID
}

// contains fails unless body contains every string.
func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: missing %q", what, w)
		}
	}
}
