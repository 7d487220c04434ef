package viewer_test

import (
	"net/http"
	"net/url"
	"testing"
)

// The login form is limited per client: server.DefaultLoginBurst attempts
// at once, then one every server.DefaultLoginEvery. 40 attempts can only all
// pass if they take over three minutes; the exact refill is tested with a
// fake clock in package server.
func TestLoginRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, withToken(token))
	limited := 0
	for range 40 {
		r := b.do(req{method: "POST", path: "/login", noToken: true, form: url.Values{"token": {"guess"}}})
		switch r.status {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited++
			if r.header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	if limited == 0 {
		t.Fatal("40 wrong tokens in a row were never limited")
	}
}
