package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/server"
)

// mountLogin mounts a minimal login route (the viewer's is richer) and a
// page that accepts sessions, on a server with a token.
func mountLogin(t *testing.T, b *testBundle) {
	t.Helper()
	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !b.srv.StartSession(w, r, r.PostFormValue("token")) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	logout := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.srv.EndSession(w, r)
		w.WriteHeader(http.StatusNoContent)
	})
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	for _, rt := range []server.Route{
		{Pattern: "POST /login", Handler: login, Public: true},
		{Pattern: "POST /logout", Handler: logout, Public: true},
		{Pattern: "GET /page", Handler: page, Session: true},
		{Pattern: "POST /page", Handler: page, Session: true},
		{Pattern: "GET /redirecting", Handler: page, Session: true, Unauthorized: redirect},
	} {
		if err := b.srv.Handle(rt); err != nil {
			t.Fatal(err)
		}
	}
}

// login posts the token form and returns the session cookie set, if any.
func login(t *testing.T, b *testBundle, token string) (*http.Cookie, int) {
	t.Helper()
	resp, err := b.ts.Client().PostForm(b.ts.URL+"/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == server.SessionCookie {
			return c, resp.StatusCode
		}
	}
	return nil, resp.StatusCode
}

func withCookie(c *http.Cookie) map[string]string {
	return map[string]string{"Cookie": c.Name + "=" + c.Value}
}

func TestSessionCookie(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.Token = testToken }))
	mountLogin(t, b)
	if !b.srv.TokenRequired() {
		t.Fatal("TokenRequired is false with a token")
	}

	for _, wrong := range []string{"", "wrong", testToken[:10], testToken + "x", " " + testToken} {
		if c, status := login(t, b, wrong); c != nil || status != http.StatusUnauthorized {
			t.Errorf("login with %q: cookie %v, status %d", wrong, c, status)
		}
	}
	c, status := login(t, b, testToken)
	if c == nil || status != http.StatusNoContent {
		t.Fatalf("login with the token: cookie %v, status %d", c, status)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie attributes: %+v (want HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP)", c)
	}
	if c.MaxAge < int((6 * 24 * time.Hour).Seconds()) {
		t.Errorf("cookie Max-Age %d, want the default TTL", c.MaxAge)
	}
	if strings.Contains(c.Value, testToken) {
		t.Error("the cookie carries the token")
	}
	hr, _ := http.NewRequest("GET", "/", nil)
	if b.srv.Authenticated(hr) {
		t.Error("Authenticated without credentials")
	}
	hr.AddCookie(c)
	if !b.srv.Authenticated(hr) {
		t.Error("Authenticated is false with the session cookie")
	}

	// The session opens routes that accept sessions, not the REST API.
	if r := b.do(req{method: "GET", path: "/page", noToken: true, header: withCookie(c)}); r.status != http.StatusOK || string(r.body) != "page" {
		t.Errorf("page with the session: %d %s", r.status, r.body)
	}
	if r := b.do(req{method: "GET", path: "/api/v1/outcomes", noToken: true, header: withCookie(c)}); r.status != http.StatusUnauthorized {
		t.Errorf("REST API with a session cookie only: %d, want 401", r.status)
	}
	// The bearer token still works on session routes.
	b.must(b.do(req{method: "GET", path: "/page"}), http.StatusOK)
	// Without either: 401 JSON, or the route's own answer.
	if r := b.do(req{method: "GET", path: "/page", noToken: true}); r.status != http.StatusUnauthorized {
		t.Errorf("page without a session: %d", r.status)
	}
	noFollow := *b.ts.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Get(b.ts.URL + "/redirecting")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("Unauthorized handler: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Tampered and foreign cookies are refused.
	for name, v := range map[string]string{
		"empty":             "",
		"garbage":           "garbage",
		"no signature":      strings.Join(strings.Split(c.Value, ".")[:2], "."),
		"later expiry":      "v1.99999999999." + strings.Split(c.Value, ".")[2],
		"flipped signature": c.Value[:len(c.Value)-2] + flip(c.Value[len(c.Value)-2:]),
	} {
		h := map[string]string{"Cookie": server.SessionCookie + "=" + v}
		if r := b.do(req{method: "GET", path: "/page", noToken: true, header: h}); r.status != http.StatusUnauthorized {
			t.Errorf("%s cookie: %d", name, r.status)
		}
	}
	other := setup(t, withServer(func(o *server.Options) { o.Token = testToken + "-other" }))
	mountLogin(t, other)
	if r := other.do(req{method: "GET", path: "/page", noToken: true, header: withCookie(c)}); r.status != http.StatusUnauthorized {
		t.Errorf("a cookie signed for another token: %d", r.status)
	}

	// A cross-origin POST with a valid session is still refused.
	h := withCookie(c)
	h["Sec-Fetch-Site"] = "cross-site"
	if r := b.do(req{method: "POST", path: "/page", noToken: true, header: h}); r.status != http.StatusForbidden {
		t.Errorf("cross-site POST with a session: %d", r.status)
	}
	h = withCookie(c)
	h["Origin"] = "https://evil.example"
	if r := b.do(req{method: "POST", path: "/page", noToken: true, header: h}); r.status != http.StatusForbidden {
		t.Errorf("foreign-origin POST with a session: %d", r.status)
	}
	h = withCookie(c)
	h["Sec-Fetch-Site"] = "same-origin"
	b.must(b.do(req{method: "POST", path: "/page", noToken: true, header: h}), http.StatusOK)
	// A cross-site login attempt is refused before the token is checked.
	h = map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}
	if r := b.do(req{method: "POST", path: "/login", body: "token=" + testToken, noToken: true, header: h}); r.status != http.StatusForbidden {
		t.Errorf("cross-site login: %d", r.status)
	}

	// Logout clears the cookie.
	resp, err = b.ts.Client().Post(b.ts.URL+"/logout", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cleared bool
	for _, k := range resp.Cookies() {
		cleared = cleared || (k.Name == server.SessionCookie && k.MaxAge < 0 && k.Value == "")
	}
	if !cleared {
		t.Errorf("logout did not clear the cookie: %v", resp.Header.Values("Set-Cookie"))
	}
}

func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestSessionCookieSecureOverTLS(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.Token = testToken }))
	mountLogin(t, b)
	ts := httptest.NewTLSServer(b.srv.Handler())
	t.Cleanup(ts.Close)
	resp, err := ts.Client().PostForm(ts.URL+"/login", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies over TLS: %+v", cs)
	}
}

func TestSessionWithoutToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mountLogin(t, b)
	if b.srv.TokenRequired() {
		t.Fatal("TokenRequired without a token")
	}
	if c, status := login(t, b, ""); c != nil || status != http.StatusUnauthorized {
		t.Errorf("login without a configured token: cookie %v, status %d", c, status)
	}
	b.must(b.do(req{method: "GET", path: "/page", noToken: true}), http.StatusOK)
	r, _ := http.NewRequest("GET", "/", nil)
	if !b.srv.Authenticated(r) {
		t.Error("Authenticated is false without a token")
	}
}
