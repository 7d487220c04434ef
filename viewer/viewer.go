package viewer

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/store"
)

// ContentSecurityPolicy is set on every viewer response: scripts, styles
// and connections only from the viewer itself, no inline script or style,
// no framing, forms posting only to the viewer.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Defaults of Options.
const (
	// DefaultPollInterval is how often a watched project is checked for
	// changes.
	DefaultPollInterval = time.Second
	// DefaultHeartbeat is the interval of keep-alive comments on an event
	// stream.
	DefaultHeartbeat = 25 * time.Second
)

// Options configure the viewer. The zero value is usable.
type Options struct {
	// PollInterval is how often the shared poller checks each project
	// that has open event streams for changes (default
	// DefaultPollInterval).
	PollInterval time.Duration
	// Heartbeat is how often an idle event stream sends a keep-alive
	// comment, so that dead connections are noticed (default
	// DefaultHeartbeat).
	Heartbeat time.Duration
	// Logger receives the viewer's errors (default: the server's logger).
	Logger *slog.Logger
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Viewer serves the web viewer. Create it with Register.
type Viewer struct {
	e      *kaizen.Engine
	srv    *server.Server
	opts   Options
	log    *slog.Logger
	pages  map[string]*template.Template
	static map[string]staticFile
	hub    *hub
}

// Register mounts the viewer on srv (at "/", plus /static/, /events,
// /login and the pages listed in docs/viewer.md) and registers Close to run
// when srv shuts down, so open event streams end and the drain does not
// wait for them. Call it before srv.Serve.
func Register(srv *server.Server, opts Options) (*Viewer, error) {
	v, err := newViewer(srv, opts)
	if err != nil {
		return nil, err
	}
	for _, rt := range v.Routes() {
		if err := srv.Handle(rt); err != nil {
			v.Close()
			return nil, fmt.Errorf("viewer: %w", err)
		}
	}
	srv.RegisterOnShutdown(v.Close)
	return v, nil
}

func newViewer(srv *server.Server, opts Options) (*Viewer, error) {
	if srv == nil {
		return nil, errors.New("viewer: nil server")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Logger == nil {
		opts.Logger = srv.Logger()
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	static, err := loadStatic()
	if err != nil {
		return nil, err
	}
	v := &Viewer{e: srv.Engine(), srv: srv, opts: opts, log: opts.Logger, pages: pages, static: static}
	v.hub = newHub(v.e, opts.PollInterval, v.log)
	return v, nil
}

// Close ends every open event stream and stops the pollers. New streams
// are refused afterwards; pages keep working.
func (v *Viewer) Close() { v.hub.close() }

// Routes lists the viewer's routes as mounted by Register. Pages and
// actions accept the browser session cookie (Route.Session) and send an
// unauthenticated browser to /login; /login and the static assets are
// public.
func (v *Viewer) Routes() []server.Route {
	page := func(pattern string, h handlerFunc) server.Route {
		if method, path, _ := strings.Cut(pattern, " "); method == http.MethodGet && !unversioned[path] {
			h = v.versioned(h)
		}
		return server.Route{Pattern: pattern, Handler: v.handle(h), Session: true,
			Unauthorized: http.HandlerFunc(v.toLogin), MaxBodyBytes: maxFormBytes}
	}
	routes := []server.Route{
		page("GET /{$}", v.overview),
		page("GET /outcomes", v.outcomes),
		page("GET /projects", v.projectList),
		page("GET /learning", v.learningCurve),
		page("GET /patterns", v.patterns),
		page("GET /patterns/{id}", v.pattern),
		page("POST /patterns/{id}/promote", v.promote),
		page("POST /patterns/{id}/deprecate", v.deprecate),
		page("POST /patterns/{id}/reset", v.reset),
		page("GET /anti-patterns", v.antiPatterns),
		page("GET /criteria", v.criteria),
		page("GET /errors", v.errorList),
		page("POST /errors/{id}/resolve", v.resolve),
		page("GET /explore", v.exploreList),
		page("GET /explore/{$}", v.noSession),
		page("GET /explore/{id}", v.exploreSession),
		page("GET /events", v.events),
		page("POST /logout", v.logout),
		{Pattern: "GET /login", Handler: v.handle(v.loginPage), Public: true},
		{Pattern: "POST /login", Handler: v.handle(v.login), Public: true, MaxBodyBytes: maxFormBytes},
		{Pattern: "GET /static/{file}", Handler: v.handle(v.serveStatic), Public: true},
	}
	routes = append(routes, v.experienceRoutes(page)...)
	routes = append(routes, v.runRoutes(page)...)
	return append(routes, v.dataRoutes(page)...)
}

// maxFormBytes bounds the bodies of the viewer's forms.
const maxFormBytes = 16 << 10

// handlerFunc is a viewer handler: it writes its response or returns an
// error, answered as an HTML error page (or fragment, for htmx).
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle sets the viewer's security policy on every response and renders
// errors.
func (v *Viewer) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
		if err := h(w, r); err != nil {
			v.fail(w, r, err)
		}
	})
}

// toLogin answers an unauthenticated request: htmx requests are told to
// load the login page, other GETs are redirected to it, anything else
// (actions, the event stream, which EventSource would follow to an HTML
// page) is a plain 401.
func (v *Viewer) toLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
	if r.URL.Path == "/events" {
		http.Error(w, "log in first", http.StatusUnauthorized)
		return
	}
	next := r.URL.RequestURI()
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || isHTMX(r) {
		next = r.Header.Get("HX-Current-URL")
		if u, err := url.Parse(next); err == nil {
			next = u.RequestURI()
		}
	}
	loc := "/login?" + url.Values{"next": {safeNext(next)}}.Encode()
	switch {
	case isHTMX(r):
		w.Header().Set("HX-Redirect", loc)
		w.WriteHeader(http.StatusUnauthorized)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		http.Redirect(w, r, loc, http.StatusSeeOther)
	default:
		http.Error(w, "log in first: "+loc, http.StatusUnauthorized)
	}
}

// viewError is an error answered with a status of its own (bad query
// parameters, unknown pages).
type viewError struct {
	status  int
	message string
}

func (e viewError) Error() string { return e.message }

func badRequest(format string, a ...any) error {
	return viewError{status: http.StatusBadRequest, message: fmt.Sprintf(format, a...)}
}

// statusOf maps an error to an HTTP status and a message safe to show.
func (v *Viewer) statusOf(w http.ResponseWriter, r *http.Request, err error) (int, string) {
	var ve viewError
	var ke *kaizen.Error
	switch {
	case errors.As(err, &ve):
		return ve.status, ve.message
	case errors.Is(err, store.ErrClosed):
		return http.StatusServiceUnavailable, "the store is closed (the server is shutting down)"
	case r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return http.StatusServiceUnavailable, "request cancelled"
	case errors.As(err, &ke) && ke.Kind != kaizen.KindInternal:
		msg := ke.Error()
		switch ke.Kind {
		case kaizen.KindInvalid:
			return http.StatusBadRequest, msg
		case kaizen.KindNotFound:
			return http.StatusNotFound, msg
		case kaizen.KindConflict:
			return http.StatusConflict, msg
		}
	case kaizen.KindOf(err) == kaizen.KindNotFound:
		return http.StatusNotFound, "not found"
	}
	id := w.Header().Get("X-Request-Id") // set by the server on every response
	v.log.Error("viewer request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	return http.StatusInternalServerError, "internal error (request id " + id + "); see the server log"
}

// fail renders err: an error fragment for htmx (swapped into the target),
// else a full error page.
func (v *Viewer) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := v.statusOf(w, r, err)
	if isHTMX(r) {
		v.render(w, r, status, "fail", flash{Kind: "error", Message: msg, ID: r.Header.Get("HX-Target")}, "flash")
		return
	}
	b := v.base(r, "Error", "")
	v.render(w, r, status, "fail", struct {
		base
		Status  int
		Message string
	}{b, status, msg}, "layout")
}

// flash is a message shown after an action.
type flash struct {
	Kind    string // "ok" or "error"
	Message string
	Notes   []string
	ID      string // the element id to keep (the htmx target), if any
}

// render executes template name of page set into a buffer first, so a
// template error never leaves a half-written page, and writes it.
func (v *Viewer) render(w http.ResponseWriter, r *http.Request, status int, set string, data any, name string) {
	t, ok := v.pages[set]
	if !ok {
		panic("viewer: no template set " + set)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		v.log.Error("viewer template failed", "template", set+"/"+name, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// isHTMX reports whether r was sent by htmx (and expects a fragment),
// excluding history restores, which need the whole page.
func isHTMX(r *http.Request) bool {
	return r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-History-Restore-Request") != "true"
}

// target is the id of the element an htmx request will swap, "" for a
// full page load.
func target(r *http.Request) string {
	if !isHTMX(r) {
		return ""
	}
	return r.Header.Get("HX-Target")
}

// parseTemplates parses one template set per page: the shared layout and
// partials plus the page's own file.
func parseTemplates() (map[string]*template.Template, error) {
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	shared := []string{"templates/layout.html", "templates/partials.html"}
	out := map[string]*template.Template{}
	for _, f := range files {
		if slices.Contains(shared, f) {
			continue
		}
		name := f[len("templates/") : len(f)-len(".html")]
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, append(slices.Clone(shared), f)...)
		if err != nil {
			return nil, fmt.Errorf("viewer: templates: %w", err)
		}
		out[name] = t
	}
	return out, nil
}
