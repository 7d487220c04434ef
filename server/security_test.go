package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/server"
)

const testToken = "s3cret-token-0123456789abcdef"

func TestTokenRequired(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.Token = testToken }))
	before := b.snapshot()
	for name, auth := range map[string]string{
		"missing":      "",
		"wrong":        "Bearer wrong-token",
		"prefix":       "Bearer " + testToken[:10],
		"longer":       "Bearer " + testToken + "x",
		"basic scheme": "Basic " + testToken,
		"bare token":   testToken,
	} {
		for _, rq := range []req{
			{method: "GET", path: "/api/v1/outcomes"},
			{method: "POST", path: "/api/v1/outcomes", body: outcome("bd-1", true, "")},
			{method: "GET", path: "/api/v1/no-such-route"}, // no route disclosure without the token
		} {
			rq.noToken = true
			rq.header = map[string]string{"Authorization": auth}
			r := b.do(rq)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s %s: status %d", name, rq.method, rq.path, r.status)
				continue
			}
			if e := r.errorOf(t); e.Error.Code != "unauthorized" {
				t.Errorf("%s: %+v", name, e)
			}
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: WWW-Authenticate %q", name, r.header.Get("WWW-Authenticate"))
			}
		}
	}
	if b.snapshot() != before {
		t.Error("unauthorized requests changed the store")
	}
	// /healthz stays public.
	b.must(b.do(req{method: "GET", path: "/healthz", noToken: true}), http.StatusOK)
	// With the token (any case of the scheme).
	b.must(b.get("/api/v1/outcomes"), http.StatusOK)
	b.must(b.do(req{method: "GET", path: "/api/v1/version", noToken: true,
		header: map[string]string{"Authorization": "bearer " + testToken}}), http.StatusOK)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "")), http.StatusCreated)
	b.must(b.get("/api/v1/no-such-route"), http.StatusNotFound)
}

func TestNonLoopbackRequiresToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, addr := range []string{"0.0.0.0:7411", ":7411", "[::]:7411", "192.168.1.10:7411", "example.com:7411"} {
		if _, err := server.New(b.engine, server.Options{Addr: addr}); err == nil || !strings.Contains(err.Error(), "token") {
			t.Errorf("%s without a token: %v", addr, err)
		}
		if _, err := server.New(b.engine, server.Options{Addr: addr, Token: testToken}); err != nil {
			t.Errorf("%s with a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"", "127.0.0.1:7411", "127.0.0.2:0", "[::1]:7411", "localhost:7411"} {
		if _, err := server.New(b.engine, server.Options{Addr: addr}); err != nil {
			t.Errorf("%q: %v", addr, err)
		}
	}
	for _, tok := range []string{" padded ", "with space", "tab\t", "naïve"} {
		if _, err := server.New(b.engine, server.Options{Token: tok}); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}

	// Serve checks the listener too: Options.Addr is not what is served.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on all interfaces: %v", err)
	}
	srv, err := server.New(b.engine, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(context.Background(), ln); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("Serve on %s without a token: %v", ln.Addr(), err)
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:7411": true, "127.1.2.3:1": true, "[::1]:80": true, "localhost:7411": true, "LOCALHOST": true,
		"::1": true, "127.0.0.1": true,
		"0.0.0.0:7411": false, ":7411": false, "[::]:1": false, "10.0.0.1:7411": false, "example.com:80": false,
		"": false, "[fe80::1%lo]:1": false,
	} {
		if got := server.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

// State-changing requests from another origin are rejected (Sec-Fetch-Site
// from modern browsers, else Origin against Host); reads and same-origin or
// non-browser requests pass.
func TestCrossOriginProtection(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.TrustedOrigins = []string{"https://trusted.example"} }))
	before := b.snapshot()
	for name, h := range map[string]map[string]string{
		"sec-fetch-site cross-site": {"Sec-Fetch-Site": "cross-site"},
		"sec-fetch-site same-site":  {"Sec-Fetch-Site": "same-site"},
		"origin mismatch":           {"Origin": "http://evil.example"},
	} {
		for _, path := range []string{"/api/v1/outcomes", "/api/v1/patterns/promote", "/api/v1/import", "/api/v1/rebuild"} {
			r := b.do(req{method: "POST", path: path, body: outcome("bd-x", true, "Split by file type"), header: h})
			if r.status != http.StatusForbidden {
				t.Errorf("%s POST %s: status %d", name, path, r.status)
				continue
			}
			if e := r.errorOf(t); e.Error.Code != "forbidden" {
				t.Errorf("%s: %+v", name, e)
			}
		}
	}
	if b.snapshot() != before {
		t.Error("cross-origin requests changed the store")
	}
	// Safe methods are not state-changing.
	b.must(b.do(req{method: "GET", path: "/api/v1/outcomes", header: map[string]string{"Sec-Fetch-Site": "cross-site"}}), http.StatusOK)
	// Same origin, non-browser clients and trusted origins pass.
	host := strings.TrimPrefix(b.ts.URL, "http://")
	for name, h := range map[string]map[string]string{
		"same-origin": {"Sec-Fetch-Site": "same-origin"},
		"user typed":  {"Sec-Fetch-Site": "none"},
		"origin host": {"Origin": "http://" + host},
		"no headers":  {},
		"trusted":     {"Origin": "https://trusted.example"},
	} {
		b.must(b.do(req{method: "POST", path: "/api/v1/outcomes", body: outcome("bd-"+name, true, ""), header: h}), http.StatusCreated)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, rq := range []req{
		{method: "GET", path: "/healthz"},
		{method: "GET", path: "/api/v1/outcomes"},
		{method: "POST", path: "/api/v1/outcomes", body: "{"},
		{method: "GET", path: "/nowhere"},
		{method: "GET", path: "/api/v1/export"},
	} {
		r := b.do(rq)
		for k, want := range map[string]string{
			"X-Content-Type-Options":  "nosniff",
			"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
			"X-Frame-Options":         "DENY",
			"Cache-Control":           "no-store",
		} {
			if got := r.header.Get(k); got != want {
				t.Errorf("%s %s: %s = %q", rq.method, rq.path, k, got)
			}
		}
		if len(r.header.Get("X-Request-Id")) != 16 {
			t.Errorf("%s %s: X-Request-Id %q", rq.method, rq.path, r.header.Get("X-Request-Id"))
		}
	}
}

// Logs have one line per request with its route and status, and never the
// token or a request body.
func TestRequestLogs(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.Token = testToken }))
	const secret = "do-not-log-this-body"
	b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "bd-1", "message": secret}), http.StatusCreated)
	b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "", "message": secret}), http.StatusBadRequest)
	b.do(req{method: "GET", path: "/api/v1/outcomes", noToken: true, header: map[string]string{"Authorization": "Bearer " + secret}})
	logs := b.logs.String()
	if strings.Contains(logs, testToken) || strings.Contains(logs, secret) {
		t.Errorf("logs leak the token or a body:\n%s", logs)
	}
	for _, want := range []string{`route="POST /api/v1/errors" status=201`, `status=400`, `status=401`, "duration_ms=", "request_id="} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// Internal errors are answered without their details, which go to the log.
func TestInternalErrorsDoNotLeak(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.srv.Handle(server.Route{Pattern: "GET /test/fail", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("secret internal detail")
	})}); err != nil {
		t.Fatal(err)
	}
	r := b.must(b.get("/test/fail"), http.StatusInternalServerError)
	e := r.errorOf(t)
	if e.Error.Code != "internal" || strings.Contains(string(r.body), "secret internal detail") ||
		!strings.Contains(e.Error.Message, r.header.Get("X-Request-Id")) {
		t.Errorf("panic answer %s", r.body)
	}
	if !strings.Contains(b.logs.String(), "secret internal detail") {
		t.Error("the panic is not logged")
	}
	// The server still serves.
	b.must(b.get("/healthz"), http.StatusOK)
}

// Other surfaces mount routes that get the same middleware.
func TestHandleMountsRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.Token = testToken }))
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Pattern))
	})
	if err := b.srv.Handle(server.Route{Pattern: "GET /metrics", Handler: ok}); err != nil {
		t.Fatal(err)
	}
	if err := b.srv.Handle(server.Route{Pattern: "GET /public", Handler: ok, Public: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.srv.Handle(server.Route{Pattern: "POST /mcp", Handler: ok, MaxBodyBytes: 10}); err != nil {
		t.Fatal(err)
	}
	b.must(b.do(req{method: "GET", path: "/metrics", noToken: true}), http.StatusUnauthorized)
	if r := b.must(b.get("/metrics"), http.StatusOK); string(r.body) != "GET /metrics" {
		t.Errorf("body %q", r.body)
	}
	b.must(b.do(req{method: "GET", path: "/public", noToken: true}), http.StatusOK)
	b.must(b.post("/mcp", strings.Repeat("x", 11)), http.StatusRequestEntityTooLarge)
	b.must(b.do(req{method: "POST", path: "/mcp", body: "{}", header: map[string]string{"Sec-Fetch-Site": "cross-site"}}), http.StatusForbidden)
	b.must(b.get("/mcp"), http.StatusMethodNotAllowed)

	for _, rt := range []server.Route{
		{Pattern: "GET /metrics", Handler: ok},             // duplicate
		{Pattern: "GET /api/v1/outcomes", Handler: ok},     // conflicts with the REST route
		{Pattern: "BAD PATTERN WITH SPACES", Handler: ok},  // invalid
		{Pattern: "GET /x/{a}", Handler: nil},              // no handler
		{Pattern: "GET /api/v1/patterns/{x}", Handler: ok}, // same as {ref}
	} {
		if err := b.srv.Handle(rt); err == nil {
			t.Errorf("Handle(%q) accepted", rt.Pattern)
		}
	}
	routes := b.srv.Routes()
	if len(routes) < 25 {
		t.Errorf("routes %v", routes)
	}
}

// 404 and 405 are JSON too.
func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/", "/api", "/api/v1", "/api/v1/", "/api/v2/outcomes", "/api/v1/outcomes/a/b"} {
		r := b.get(path)
		if r.status != http.StatusNotFound || r.errorOf(t).Error.Code != "not_found" {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	for _, rq := range []req{
		{method: "DELETE", path: "/api/v1/outcomes"},
		{method: "PUT", path: "/api/v1/patterns/promote"},
		{method: "GET", path: "/api/v1/rebuild"},
		{method: "POST", path: "/api/v1/version"},
		{method: "PATCH", path: "/api/v1/errors/err-1/resolve"},
	} {
		r := b.do(rq)
		if r.status != http.StatusMethodNotAllowed || r.errorOf(t).Error.Code != "method_not_allowed" || r.header.Get("Allow") == "" {
			t.Errorf("%s %s: %d %v %s", rq.method, rq.path, r.status, r.header, r.body)
		}
	}
}

func TestNewRejectsNilEngine(t *testing.T) {
	t.Parallel()
	if _, err := server.New((*kaizen.Engine)(nil), server.Options{}); err == nil {
		t.Error("nil engine accepted")
	}
}
