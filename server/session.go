package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Browser sessions. A browser cannot send the bearer token with every
// request (page loads, EventSource), so a login page exchanges the token
// for a session cookie that routes with Route.Session accept instead. The
// cookie carries no secret: it is an expiry time signed with a key
// derived from the token (HMAC-SHA256), so it survives daemon restarts,
// expires on its own, and every session ends when the token changes.

const (
	// SessionCookie is the name of the browser session cookie.
	SessionCookie = "kaizen_session"
	// DefaultSessionTTL is how long a session cookie stays valid.
	DefaultSessionTTL = 7 * 24 * time.Hour
	// sessionVersion prefixes cookie values, so the format can change.
	sessionVersion = "v1"
)

// sessionKey derives the cookie signing key from the token.
func sessionKey(token string) []byte {
	k := sha256.Sum256([]byte("kaizen session key\x00" + token))
	return k[:]
}

// TokenRequired reports whether the server requires a token (and so
// whether a browser needs to log in).
func (s *Server) TokenRequired() bool { return s.opts.Token != "" }

// Authenticated reports whether r would pass authentication on a route
// that accepts sessions: no token is configured, or r carries the token
// as a bearer credential or a valid session cookie.
func (s *Server) Authenticated(r *http.Request) bool { return s.authorized(r, true) }

// StartSession checks token against the configured token in constant time
// and, when it matches, sets the session cookie on w: HttpOnly,
// SameSite=Strict, Path=/, Secure when r arrived over TLS, valid for
// Options.SessionTTL. It reports whether the token matched; it is always
// false when no token is configured.
func (s *Server) StartSession(w http.ResponseWriter, r *http.Request, token string) bool {
	if s.opts.Token == "" || !s.isToken(token) {
		return false
	}
	exp := time.Now().Add(s.opts.SessionTTL)
	http.SetCookie(w, s.sessionCookie(r, s.sessionValue(exp), int(s.opts.SessionTTL/time.Second)))
	return true
}

// EndSession clears the session cookie. The cookie value stays valid until
// it expires (sessions are not stored); changing the token ends them all.
func (s *Server) EndSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, s.sessionCookie(r, "", -1))
}

func (s *Server) sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: SessionCookie, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
}

// sessionValue is "v1.<unix expiry>.<signature>".
func (s *Server) sessionValue(exp time.Time) string {
	payload := sessionVersion + "." + strconv.FormatInt(exp.Unix(), 10)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.sign(payload))
}

func (s *Server) sign(payload string) []byte {
	m := hmac.New(sha256.New, s.sessionKey)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// validSession reports whether r carries an unexpired session cookie
// signed with the current token's key.
func (s *Server) validSession(r *http.Request) bool {
	if s.sessionKey == nil {
		return false
	}
	for _, c := range r.CookiesNamed(SessionCookie) {
		if s.checkSession(c.Value, time.Now()) {
			return true
		}
	}
	return false
}

func (s *Server) checkSession(value string, now time.Time) bool {
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return false
	}
	payload, sig := value[:i], value[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.sign(payload)) {
		return false
	}
	version, expiry, ok := strings.Cut(payload, ".")
	if !ok || version != sessionVersion {
		return false
	}
	exp, err := strconv.ParseInt(expiry, 10, 64)
	return err == nil && now.Unix() < exp
}
