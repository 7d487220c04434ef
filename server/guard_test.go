package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/server"
)

// rebind sends a request as a DNS-rebinding page would: to the server's
// loopback address with a foreign Host and (optionally) a matching Origin.
func (b *testBundle) rebind(method, path, host, origin string) response {
	b.t.Helper()
	var body io.Reader
	if method != "GET" && method != "HEAD" {
		body = strings.NewReader(`{"bead_id":"evil","duration_ms":1,"success":true}`)
	}
	hr, err := http.NewRequest(method, b.ts.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if host != "" {
		hr.Host = host
	}
	if origin != "" {
		hr.Header.Set("Origin", origin)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if b.token != "" {
		hr.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := b.ts.Client().Do(hr)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// Finding 1 of issue 12: every route answered a rebound Host, and the
// cross-origin check passed because Origin matched the rebound host.
func TestSecurityRebindingEveryRoute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "")), http.StatusCreated)
	before := b.snapshot()
	port := b.ts.Listener.Addr().(interface{ String() string }).String()
	_, port, _ = strings.Cut(port, ":")
	evil := "evil.example:" + port
	routes := b.srv.Routes()
	if len(routes) < 20 {
		t.Fatalf("only %d routes mounted", len(routes))
	}
	for _, pattern := range routes {
		for _, rq := range testkit.RouteRequests(pattern) {
			for _, c := range []struct{ host, origin string }{
				{evil, "http://" + evil},
				{evil, ""},
				{"", "http://" + evil}, // right host, foreign origin
				{"localhost.evil.example", ""},
				{"127.0.0.1.nip.io:" + port, "http://127.0.0.1.nip.io:" + port},
			} {
				r := b.rebind(rq.Method, rq.Path, c.host, c.origin)
				if r.status != http.StatusForbidden && r.status != http.StatusMisdirectedRequest {
					t.Errorf("%s %s host=%q origin=%q: status %d: %.200s", rq.Method, rq.Path, c.host, c.origin, r.status, r.body)
				}
			}
		}
	}
	if b.snapshot() != before {
		t.Error("rebinding requests changed the store")
	}
}

func TestHostAllowlist(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) {
		o.AllowedHosts = []string{"kaizen.internal", "[fd00::1]:7411"}
		o.TrustedOrigins = []string{"https://dash.example"}
	}))
	u, _ := url.Parse(b.ts.URL)
	port := u.Port()
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"localhost:" + port, "http://localhost:" + port, http.StatusOK},
		{"LOCALHOST.:" + port, "", http.StatusOK},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port, http.StatusOK},
		{"127.0.0.5:" + port, "", http.StatusOK},
		{"[::1]:" + port, "http://[::1]:" + port, http.StatusOK},
		{"kaizen.internal:" + port, "https://kaizen.internal", http.StatusOK},
		{"[fd00::1]:" + port, "", http.StatusOK},
		{"", "https://dash.example", http.StatusOK},
		{"", "null", http.StatusOK},
		{"", "ftp://localhost", http.StatusForbidden},
		{"192.168.1.5:" + port, "", http.StatusMisdirectedRequest}, // not loopback, not configured
		{"evil.example", "", http.StatusMisdirectedRequest},
		{"kaizen.internal.evil.example", "", http.StatusMisdirectedRequest},
	} {
		r := b.rebind("GET", "/api/v1/version", c.host, c.origin)
		if r.status != c.want {
			t.Errorf("host=%q origin=%q: %d, want %d: %s", c.host, c.origin, r.status, c.want, r.body)
		}
		if r.status >= 400 {
			if e := r.errorOf(t); e.Error.Code == "" {
				t.Errorf("no error code: %s", r.body)
			}
		}
	}
}

func TestHostAllowlistAnyInterface(t *testing.T) {
	t.Parallel()
	// Listening on every interface (with a token), IP literals are fine
	// (they cannot be rebound) but unknown names are not.
	b := setup(t, withServer(func(o *server.Options) { o.Addr = "0.0.0.0:7411"; o.Token = testToken }))
	for host, want := range map[string]int{
		"192.168.1.5:7411": http.StatusOK,
		"[fe80::1]:7411":   http.StatusOK,
		"myhost.lan:7411":  http.StatusMisdirectedRequest,
	} {
		if r := b.rebind("GET", "/api/v1/version", host, ""); r.status != want {
			t.Errorf("%s: %d, want %d", host, r.status, want)
		}
	}
	c := setup(t, withServer(func(o *server.Options) { o.AllowedHosts = []string{"*"} }))
	if r := c.rebind("GET", "/api/v1/version", "anything.example", "http://anything.example"); r.status != http.StatusOK {
		t.Errorf("allowed_hosts=* still refuses: %d", r.status)
	}
}
