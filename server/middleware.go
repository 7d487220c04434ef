package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// serveHTTP is the one entry point of every request. In order: request id
// and security headers, panic recovery and logging, route lookup, the Host
// and Origin allowlist (guard.go), authentication (unless the route is public), cross-origin protection of
// state-changing methods, the body limit, then the route's handler — or a
// JSON 404/405 when no route matches.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := &responseWriter{ResponseWriter: w}
	id := requestID()
	h := rw.Header()
	h.Set("X-Request-Id", id)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	// The API serves data, never documents; the viewer overrides this
	// with its own policy on its responses.
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")

	s.mu.RLock()
	handler, pattern := s.mux.Handler(r)
	rt, matched := s.routes[pattern]
	s.mu.RUnlock()

	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				s.logRequest(r, rw, pattern, id, start, slog.String("abort", "handler aborted the response"))
				panic(p)
			}
			s.log.Error("panic serving request", "request_id", id, "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !rw.wroteHeader {
				writeError(rw, r, apiError{status: http.StatusInternalServerError, code: "internal", op: "serve",
					message: "internal error (request id " + id + ")", hint: "see the server log"})
			}
		}
		s.logRequest(r, rw, pattern, id, start)
	}()

	if s.guard(rw, r) {
		return
	}
	if !rt.Public && !s.authorized(r, rt.Session) {
		if rt.Unauthorized != nil {
			rt.Unauthorized.ServeHTTP(rw, r)
			return
		}
		rw.Header().Set("WWW-Authenticate", `Bearer realm="kaizen"`)
		writeError(rw, r, apiError{status: http.StatusUnauthorized, code: "unauthorized", op: "authenticate",
			message: "missing or invalid bearer token",
			hint:    "send the header Authorization: Bearer <token> with the token the server was started with"})
		return
	}
	if err := s.csrf.Check(r); err != nil {
		writeError(rw, r, apiError{status: http.StatusForbidden, code: "forbidden", op: "cross-origin check",
			message: "cross-origin state-changing request rejected",
			hint:    "call the API from the same origin or from a non-browser client"})
		return
	}
	if !matched {
		s.noRoute(rw, r, handler)
		return
	}
	limit := rt.MaxBodyBytes
	if limit <= 0 {
		limit = s.opts.MaxBodyBytes
	}
	if r.ContentLength > limit {
		writeError(rw, r, tooLarge(limit))
		return
	}
	if r.Body != nil {
		// The original writer lets net/http close the connection after an
		// oversized body instead of draining it.
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	s.mux.ServeHTTP(rw, r)
}

// authorized reports whether r may use a protected route: always when no
// token is configured, else when it carries the token as a bearer
// credential or, on a route that accepts sessions, a valid session cookie.
func (s *Server) authorized(r *http.Request, session bool) bool {
	if s.opts.Token == "" {
		return true
	}
	return s.bearer(r) || (session && s.validSession(r))
}

// bearer reports whether r carries the token as a bearer credential. Both
// sides are hashed so the comparison is constant-time regardless of length.
func (s *Server) bearer(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, cred, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return s.isToken(strings.TrimSpace(cred))
}

// isToken compares a candidate with the configured token in constant time.
func (s *Server) isToken(candidate string) bool {
	got := sha256.Sum256([]byte(candidate))
	return subtle.ConstantTimeCompare(got[:], s.token[:]) == 1
}

// noRoute answers a request no route matches: JSON 405 with the Allow
// header when the path exists for other methods, else JSON 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	switch probe.status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeError(w, r, apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed", op: "route",
			message: fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path),
			hint:    "allowed: " + probe.header.Get("Allow")})
	case http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusFound:
		w.Header().Set("Location", probe.header.Get("Location"))
		w.WriteHeader(probe.status)
	default:
		writeError(w, r, apiError{status: http.StatusNotFound, code: "not_found", op: "route",
			message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path), hint: "see docs/api.md for the routes"})
	}
}

func (s *Server) logRequest(r *http.Request, rw *responseWriter, pattern, id string, start time.Time, extra ...slog.Attr) {
	d := time.Since(start)
	status := rw.status
	if status == 0 {
		status = http.StatusOK
	}
	level := slog.LevelInfo
	switch {
	case status >= 500:
		level = slog.LevelError
	case pattern == healthzPattern:
		level = slog.LevelDebug
	}
	attrs := append([]slog.Attr{
		slog.String("request_id", id),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("route", pattern),
		slog.Int("status", status),
		slog.Int64("bytes", rw.bytes),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.String("remote", r.RemoteAddr),
	}, extra...)
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
	if s.opts.OnRequest != nil {
		s.opts.OnRequest(RequestInfo{Method: r.Method, Route: pattern, Status: status, Bytes: rw.bytes, Duration: d})
	}
}

func requestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// responseWriter records the status and size of a response. It keeps
// http.ResponseController working (Unwrap) and forwards Flush for
// streaming responses.
type responseWriter struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *responseWriter) Flush() {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// probeWriter captures what ServeMux's fallback handler would answer.
type probeWriter struct {
	header http.Header
	status int
}

func (w *probeWriter) Header() http.Header { return w.header }
func (w *probeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *probeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
