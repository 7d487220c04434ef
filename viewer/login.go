package viewer

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Login. When the server has a token, a browser gets in by posting the
// token to /login, which sets the server's session cookie (HttpOnly,
// SameSite=Strict, Secure over TLS; see server.StartSession). The token is
// compared in constant time by the server; it is never logged or echoed.

type loginData struct {
	base
	Next  string
	Error string
}

// safeNext keeps a post-login destination on this site: a path starting
// with one "/" (no scheme, host or backslash tricks), else "/".
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Path == "/login" {
		return "/"
	}
	return next
}

func (v *Viewer) loginPage(w http.ResponseWriter, r *http.Request) error {
	next := safeNext(r.URL.Query().Get("next"))
	if !v.srv.TokenRequired() || v.srv.Authenticated(r) {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	v.renderLogin(w, r, http.StatusOK, next, "")
	return nil
}

func (v *Viewer) login(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	next := safeNext(r.PostForm.Get("next"))
	if !v.srv.TokenRequired() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	if ok, wait := v.srv.LoginAttempt(r); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		v.renderLogin(w, r, http.StatusTooManyRequests, next, "Too many attempts from this address; wait a minute and try again.")
		return nil
	}
	if !v.srv.StartSession(w, r, r.PostForm.Get("token")) {
		v.renderLogin(w, r, http.StatusUnauthorized, next, "That is not the server's token.")
		return nil
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

func (v *Viewer) logout(w http.ResponseWriter, r *http.Request) error {
	v.srv.EndSession(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

func (v *Viewer) renderLogin(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	b := base{Title: "Log in", Path: "/login"}
	v.render(w, r, status, "login", loginData{base: b, Next: next, Error: msg}, "layout")
}
