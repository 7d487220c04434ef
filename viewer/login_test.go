package viewer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/viewer"
)

const token = "viewer-token-0123456789abcdef"

func TestLoginWithToken(t *testing.T) {
	t.Parallel()
	b := setup(t, withToken(token))

	// Pages send a browser to the login page, keeping where it was going.
	r := b.do(req{path: "/patterns?q=x", noToken: true})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login?next=%2Fpatterns%3Fq%3Dx" {
		t.Fatalf("page without a session: %d %q", r.status, r.header.Get("Location"))
	}
	if r.header.Get("Content-Security-Policy") != viewer.ContentSecurityPolicy {
		t.Errorf("redirect CSP %q", r.header.Get("Content-Security-Policy"))
	}
	// htmx requests are told to load the login page.
	r = b.do(req{path: "/patterns", noToken: true, header: map[string]string{"HX-Request": "true",
		"HX-Current-URL": b.ts.URL + "/errors?status=all"}})
	if r.status != http.StatusUnauthorized || r.header.Get("HX-Redirect") != "/login?next=%2Ferrors%3Fstatus%3Dall" {
		t.Errorf("htmx without a session: %d %q", r.status, r.header.Get("HX-Redirect"))
	}
	// Actions without a session change nothing and get 401.
	r = b.do(req{method: "POST", path: "/errors/err-x/resolve", noToken: true, form: url.Values{}})
	if r.status != http.StatusUnauthorized {
		t.Errorf("action without a session: %d", r.status)
	}
	// The REST API keeps its JSON 401.
	r = b.do(req{path: "/api/v1/outcomes", noToken: true})
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("API without a token: %d %q", r.status, r.header.Get("Content-Type"))
	}

	// The login page is public and carries the destination.
	r = b.must(b.do(req{path: "/login?next=%2Fpatterns%3Fq%3Dx", noToken: true}), http.StatusOK)
	contains(t, "login page", r.body, `<form method="post" action="/login">`, `name="next" value="/patterns?q=x"`, `type="password"`)
	if r.header.Get("Content-Security-Policy") != viewer.ContentSecurityPolicy {
		t.Errorf("login CSP %q", r.header.Get("Content-Security-Policy"))
	}

	// A wrong token: 401, no cookie, the token is not echoed.
	r = b.do(req{method: "POST", path: "/login", noToken: true, form: url.Values{"token": {"wrong-" + token}, "next": {"/errors"}}})
	if r.status != http.StatusUnauthorized || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("wrong token: %d cookie %q", r.status, r.header.Get("Set-Cookie"))
	}
	contains(t, "wrong token", r.body, "not the server&#39;s token")
	if strings.Contains(r.body, token) {
		t.Error("the login page echoes the submitted token")
	}

	// The right token: a session cookie and a redirect to the destination.
	r = b.do(req{method: "POST", path: "/login", noToken: true, form: url.Values{"token": {token}, "next": {"/errors?status=all"}}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/errors?status=all" {
		t.Fatalf("login: %d %q", r.status, r.header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == server.SessionCookie {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie: %+v", session)
	}
	cookie := map[string]string{"Cookie": session.Name + "=" + session.Value}
	for _, p := range []string{"/", "/patterns", "/anti-patterns", "/criteria", "/outcomes", "/errors"} {
		r := b.must(b.do(req{path: p, noToken: true, header: cookie}), http.StatusOK)
		contains(t, p, r.body, `<form class="logout" method="post" action="/logout">`)
	}
	// Logged in, /login goes straight on.
	r = b.do(req{path: "/login?next=/criteria", noToken: true, header: cookie})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/criteria" {
		t.Errorf("login page with a session: %d %q", r.status, r.header.Get("Location"))
	}
	// The session does not open the REST API.
	if r := b.do(req{path: "/api/v1/outcomes", noToken: true, header: cookie}); r.status != http.StatusUnauthorized {
		t.Errorf("API with a session cookie: %d", r.status)
	}
	// Logout clears the cookie.
	r = b.do(req{method: "POST", path: "/logout", noToken: true, header: cookie, form: url.Values{}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login" || !strings.Contains(r.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("logout: %d %q %q", r.status, r.header.Get("Location"), r.header.Get("Set-Cookie"))
	}
}

func TestLoginRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	b := setup(t, withToken(token))
	for next, want := range map[string]string{
		"/patterns?q=1":          "/patterns?q=1",
		"":                       "/",
		"https://evil.example/":  "/",
		"//evil.example/":        "/",
		"/\\evil.example":        "/",
		"javascript:alert(1)":    "/",
		"/login":                 "/",
		"patterns":               "/",
		"/ok\r\nSet-Cookie: x=1": "/",
	} {
		r := b.do(req{method: "POST", path: "/login", noToken: true, form: url.Values{"token": {token}, "next": {next}}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Errorf("next %q: %d %q, want %q", next, r.status, r.header.Get("Location"), want)
		}
	}
}

func TestNoTokenNoLogin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(req{path: "/login?next=/errors"})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/errors" {
		t.Errorf("login without a token: %d %q", r.status, r.header.Get("Location"))
	}
	if strings.Contains(b.get("/").body, "Log out") {
		t.Error("log out shown without a token")
	}
}
