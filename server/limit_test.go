package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/server"
)

// Finding 4 of issue 12: no ReadTimeout, so a trickled body held a
// connection for as long as the client liked; no connection cap.
func TestSecurityServerTimeouts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	hs := b.srv.HTTPServer()
	if hs.ReadTimeout != server.DefaultReadTimeout || hs.ReadHeaderTimeout != server.DefaultReadHeaderTimeout ||
		hs.IdleTimeout != server.DefaultIdleTimeout || hs.MaxHeaderBytes == 0 {
		t.Fatalf("timeouts: read %s header %s idle %s", hs.ReadTimeout, hs.ReadHeaderTimeout, hs.IdleTimeout)
	}
	if b.srv.MaxConns() != server.DefaultMaxConns {
		t.Fatalf("connection cap %d", b.srv.MaxConns())
	}
	c := setup(t, withServer(func(o *server.Options) { o.MaxConns = -1 }))
	if c.srv.MaxConns() != 0 {
		t.Fatalf("MaxConns -1 gives a cap of %d", c.srv.MaxConns())
	}
}

// The login form's per-client limit: after LoginBurst attempts, 429 with
// Retry-After, without looking at the token (so guessing cannot go on).
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) {
		o.Token = testToken
		o.LoginBurst = 3
		o.LoginEvery = 1 << 62 // no refill during the test
	}))
	if err := b.srv.Handle(server.Route{Pattern: "POST /login", Public: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, _ := b.srv.LoginAttempt(r); !ok {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		if !b.srv.StartSession(w, r, r.FormValue("token")) {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})}); err != nil {
		t.Fatal(err)
	}
	post := func(token string) int {
		r := b.do(req{method: "POST", path: "/login", noToken: true, body: url.Values{"token": {token}}.Encode(),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
		return r.status
	}
	for i := range 3 {
		if s := post("wrong-" + strings.Repeat("x", i)); s != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, s)
		}
	}
	if s := post(testToken); s != http.StatusTooManyRequests {
		t.Fatalf("4th attempt (right token): %d, want 429", s)
	}
}
