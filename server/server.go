package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes bounds JSON request bodies (the engine's own
	// input limit).
	DefaultMaxBodyBytes = kaizen.MaxInputBytes
	// DefaultMaxImportBytes bounds a JSONL import body.
	DefaultMaxImportBytes = 64 << 20
	// DefaultShutdownTimeout is how long shutdown waits for in-flight
	// requests before closing their connections.
	DefaultShutdownTimeout = 10 * time.Second
)

// Options configure a Server. The zero value serves on DefaultAddr
// (loopback) without a token.
type Options struct {
	// Addr is the listen address of ListenAndServe (default
	// kaizen.DefaultAddr, 127.0.0.1:7411). An address that is not loopback
	// requires Token.
	Addr string
	// Token, when set, is required as "Authorization: Bearer <token>" by
	// every route that is not public (only /healthz is public here).
	Token string
	// Logger receives one line per request and server events (default:
	// discard). Request bodies and the token are never logged.
	Logger *slog.Logger
	// MaxBodyBytes bounds JSON request bodies (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxImportBytes bounds the body of POST /api/v1/import (default
	// DefaultMaxImportBytes).
	MaxImportBytes int64
	// ShutdownTimeout bounds the graceful drain (default
	// DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// TrustedOrigins are browser origins ("https://host:port") allowed to
	// send state-changing cross-origin requests. Empty: none.
	TrustedOrigins []string
	// OnRequest, when set, is called after every request (for metrics).
	OnRequest func(RequestInfo)
	// SessionTTL is how long a browser session cookie issued by
	// StartSession stays valid (default DefaultSessionTTL).
	SessionTTL time.Duration
	// AllowedHosts are extra host names (or IP literals) the Host and
	// Origin headers may name, besides the loopback names and the host of
	// Addr: e.g. the machine's name when serving on every interface. "*"
	// turns the check off (not recommended). See docs/security.md.
	AllowedHosts []string
	// MaxConns caps the connections Serve serves at once (default
	// DefaultMaxConns; negative: no cap).
	MaxConns int
	// ReadTimeout bounds reading one request including its body (default
	// DefaultReadTimeout); ReadHeaderTimeout bounds its headers (default
	// DefaultReadHeaderTimeout); IdleTimeout closes idle keep-alive
	// connections (default DefaultIdleTimeout).
	ReadTimeout, ReadHeaderTimeout, IdleTimeout time.Duration
	// LoginBurst and LoginEvery limit the viewer's login attempts per
	// client address: LoginBurst at once, then one per LoginEvery
	// (defaults DefaultLoginBurst, DefaultLoginEvery).
	LoginBurst int
	LoginEvery time.Duration
}

// RequestInfo describes a served request: the hook for request metrics.
type RequestInfo struct {
	Method string
	// Route is the matched pattern ("GET /api/v1/patterns/{ref}"), or ""
	// when no route matched.
	Route    string
	Status   int
	Bytes    int64
	Duration time.Duration
}

// Route is a handler mounted on the server. The REST API is a set of
// routes; later surfaces (MCP at /mcp, the viewer at /, /metrics) are
// mounted the same way with Server.Handle, and get the same
// authentication, cross-origin protection, body limits, security headers,
// panic recovery and logging.
type Route struct {
	// Pattern is a net/http ServeMux pattern, e.g. "POST /api/v1/outcomes"
	// or "/mcp".
	Pattern string
	Handler http.Handler
	// Public routes are served without the token (e.g. /healthz).
	Public bool
	// MaxBodyBytes bounds the request body (0: Options.MaxBodyBytes).
	MaxBodyBytes int64
	// Session lets a browser session cookie (see Server.StartSession)
	// authenticate requests to the route, as an alternative to the bearer
	// token. The viewer's routes set it; the REST API and MCP accept the
	// bearer token only.
	Session bool
	// Unauthorized, when set, answers the requests that fail
	// authentication instead of the JSON 401 (e.g. a redirect to a login
	// page). It must not change state.
	Unauthorized http.Handler
}

// Server serves the kaizen engine over HTTP.
type Server struct {
	engine *kaizen.Engine
	opts   Options
	log    *slog.Logger
	csrf   *http.CrossOriginProtection
	hosts  atomic.Pointer[hostGuard]
	logins *loginLimiter
	token  [sha256.Size]byte // SHA-256 of Options.Token, compared in constant time
	// sessionKey signs session cookies; derived from the token, so that
	// changing the token ends every session.
	sessionKey []byte

	mu     sync.RWMutex
	mux    *http.ServeMux
	routes map[string]Route // by pattern

	served     atomic.Bool
	onShutdown []func()
}

// New returns a server for engine. It validates the options: an address
// that is not loopback without a token is refused.
func New(engine *kaizen.Engine, opts Options) (*Server, error) {
	if engine == nil {
		return nil, errors.New("server: nil engine")
	}
	if opts.Addr == "" {
		opts.Addr = kaizen.DefaultAddr
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxImportBytes <= 0 {
		opts.MaxImportBytes = DefaultMaxImportBytes
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.ReadHeaderTimeout <= 0 {
		opts.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if err := checkToken(opts.Token); err != nil {
		return nil, err
	}
	if err := checkExposure(opts.Addr, opts.Token); err != nil {
		return nil, err
	}
	s := &Server{
		engine: engine, opts: opts, log: opts.Logger,
		csrf: http.NewCrossOriginProtection(),
		mux:  http.NewServeMux(), routes: map[string]Route{},
	}
	s.logins = newLoginLimiter(opts.LoginBurst, opts.LoginEvery, nil)
	s.hosts.Store(newHostGuard(opts.Addr, opts.AllowedHosts, opts.TrustedOrigins))
	if opts.Token != "" {
		s.token = sha256.Sum256([]byte(opts.Token))
		s.sessionKey = sessionKey(opts.Token)
	}
	for _, o := range opts.TrustedOrigins {
		if err := s.csrf.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("server: trusted origin: %w", err)
		}
	}
	for _, rt := range s.apiRoutes() {
		if err := s.Handle(rt); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Handle mounts a route. It may be called before or while serving; a
// pattern that is invalid or conflicts with a mounted one is an error.
func (s *Server) Handle(rt Route) (err error) {
	if rt.Pattern == "" || rt.Handler == nil {
		return errors.New("server: route needs a pattern and a handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.routes[rt.Pattern]; dup {
		return fmt.Errorf("server: route %q is already mounted", rt.Pattern)
	}
	defer func() { // ServeMux reports bad or conflicting patterns by panicking
		if p := recover(); p != nil {
			err = fmt.Errorf("server: route %q: %v", rt.Pattern, p)
		}
	}()
	s.mux.Handle(rt.Pattern, rt.Handler)
	s.routes[rt.Pattern] = rt
	return nil
}

// Routes lists the mounted route patterns, sorted.
func (s *Server) Routes() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.routes))
	for p := range s.routes {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Engine returns the engine served (for handlers mounted by other
// surfaces).
func (s *Server) Engine() *kaizen.Engine { return s.engine }

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Handler returns the server's HTTP handler: every mounted route behind
// the common middleware.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// RegisterOnShutdown registers a function called when graceful shutdown
// starts, e.g. to end long-lived streams (server-sent events) so that the
// drain does not wait for them. Call it before Serve.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onShutdown = append(s.onShutdown, f)
}

// ListenAndServe listens on Options.Addr and serves until ctx is done.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("server: listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is done, then shuts down gracefully:
// it stops accepting connections and waits up to Options.ShutdownTimeout
// for in-flight requests to complete. It returns nil after a complete
// drain, an error when the drain timed out (remaining connections are
// closed) or serving failed. Serve closes ln. It refuses a listener that
// is not on loopback when no token is configured.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := checkExposure(ln.Addr().String(), s.opts.Token); err != nil {
		ln.Close()
		return err
	}
	if !s.served.CompareAndSwap(false, true) {
		ln.Close()
		return errors.New("server: Serve called twice")
	}
	// The listener's own address is a name of this server too.
	s.hosts.Store(s.hosts.Load().with(ln.Addr().String()))
	hs := s.HTTPServer()
	ln = LimitListener(ln, s.opts.MaxConns)
	s.mu.RLock()
	for _, f := range s.onShutdown {
		hs.RegisterOnShutdown(f)
	}
	s.mu.RUnlock()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String(), "auth", s.opts.Token != "")
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "timeout", s.opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		hs.Close()
		err = fmt.Errorf("server: in-flight requests did not finish within %s: %w", s.opts.ShutdownTimeout, err)
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = fmt.Errorf("server: %w", serr)
	}
	s.log.Info("stopped")
	return err
}

// HTTPServer returns an http.Server for the server's handler with its
// timeouts (ReadHeaderTimeout, ReadTimeout, IdleTimeout) and header limit:
// Serve uses it, and so does the daemon for its hook socket. No
// WriteTimeout: event streams stay open for as long as the viewer is.
// Wrap the listener with LimitListener to cap connections.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// Request contexts deliberately do not derive from ctx: cancelling
		// ctx starts a drain, it does not abort in-flight requests.
	}
}

// MaxConns is the connection cap of Serve (0: none).
func (s *Server) MaxConns() int { return max(s.opts.MaxConns, 0) }

// checkToken rejects tokens that cannot travel in an Authorization header.
func checkToken(token string) error {
	if token == "" {
		return nil
	}
	if strings.TrimSpace(token) != token {
		return errors.New("server: token must not start or end with spaces")
	}
	for _, r := range token {
		if r < 0x21 || r > 0x7e {
			return errors.New("server: token must be printable ASCII without spaces")
		}
	}
	return nil
}

// checkExposure refuses to serve on an address other than loopback
// without a token.
func checkExposure(addr, token string) error {
	if token != "" || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("server: refusing to listen on %s without a token: "+
		"it is not a loopback address; set --token or KAIZEN_TOKEN, or listen on 127.0.0.1", addr)
}

// IsLoopback reports whether a host:port (or host) listens on loopback
// only: 127.0.0.0/8, ::1 or "localhost". An empty host (":7411") means
// every interface, which is not loopback.
func IsLoopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if i := strings.IndexByte(host, '%'); i >= 0 { // zone
		host = host[:i]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
