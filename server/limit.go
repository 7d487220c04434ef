package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Defaults of the connection and login limits.
const (
	// DefaultMaxConns caps the connections served at once; further ones
	// wait in the kernel's accept queue.
	DefaultMaxConns = 512
	// DefaultReadTimeout bounds reading one request, body included: a
	// client trickling a body cannot hold a connection longer.
	DefaultReadTimeout = 2 * time.Minute
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes keep-alive connections idle this long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultLoginBurst is how many login attempts one client may make at
	// once; afterwards one more every DefaultLoginEvery.
	DefaultLoginBurst = 10
	// DefaultLoginEvery is the refill period of the login limit.
	DefaultLoginEvery = 6 * time.Second
)

// LimitListener returns a listener that accepts at most n connections at
// once: Accept waits while n accepted connections are open. (The same idea
// as golang.org/x/net/netutil.LimitListener, without the dependency.)
func LimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// loginLimiter is a token bucket per client address: each login attempt
// takes a token; a client has burst tokens at most and gets one back every
// period. It guards the viewer's login form against guessing the token.
type loginLimiter struct {
	burst int
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	clients map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// maxLoginClients bounds the limiter's memory; when full, buckets that
// have refilled are dropped.
const maxLoginClients = 10_000

func newLoginLimiter(burst int, every time.Duration, now func() time.Time) *loginLimiter {
	if burst <= 0 {
		burst = DefaultLoginBurst
	}
	if every <= 0 {
		every = DefaultLoginEvery
	}
	if now == nil {
		now = time.Now
	}
	return &loginLimiter{burst: burst, every: every, now: now, clients: map[string]*bucket{}}
}

// allow takes a token for client, or says how long until one is available.
func (l *loginLimiter) allow(client string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= maxLoginClients {
			l.prune(now)
		}
		b = &bucket{tokens: float64(l.burst), at: now}
		l.clients[client] = b
	}
	b.refill(now, l.burst, l.every)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) * float64(l.every))
	return false, wait
}

func (b *bucket) refill(now time.Time, burst int, every time.Duration) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(burst), b.tokens+float64(d)/float64(every))
		b.at = now
	}
}

func (l *loginLimiter) prune(now time.Time) {
	for k, b := range l.clients {
		if b.refill(now, l.burst, l.every); b.tokens >= float64(l.burst) {
			delete(l.clients, k)
		}
	}
	if len(l.clients) >= maxLoginClients { // all busy: forget them all
		clear(l.clients)
	}
}

// LoginAttempt counts one login attempt of r's client (its IP address)
// against the login limit (Options.LoginBurst, Options.LoginEvery). When
// the client is over it, it returns false and how long to wait; the caller
// answers 429 without checking the token.
func (s *Server) LoginAttempt(r *http.Request) (bool, time.Duration) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return s.logins.allow(host)
}
