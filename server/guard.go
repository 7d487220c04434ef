package server

import (
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostGuard decides which Host and Origin headers a request may carry: the
// defence against DNS rebinding. A web page on evil.example whose name is
// made to resolve to 127.0.0.1 reaches the server with "Host: evil.example"
// and "Origin: http://evil.example"; since the browser considers that page
// same-origin with the server, cross-origin protection alone lets it read
// and write. Rebinding needs a DNS name, so the guard accepts only names it
// knows: the loopback names, the host of the configured address, and
// Options.AllowedHosts. IP literals are accepted when they are loopback,
// equal to the configured host, or when the server listens on every
// interface (an IP literal cannot be rebound).
type hostGuard struct {
	names    map[string]bool // lower-case host names and IP literals, without port
	anyIP    bool            // the server listens on an unspecified address
	origins  map[string]bool // trusted origins ("scheme://host:port"), lower-case
	disabled bool
}

func newHostGuard(addr string, extra, trustedOrigins []string) *hostGuard {
	g := &hostGuard{names: map[string]bool{"localhost": true}, origins: map[string]bool{}}
	g.addAddr(addr)
	for _, h := range extra {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			g.disabled = true
			continue
		}
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		if h = strings.Trim(h, "[]"); h != "" {
			g.names[h] = true
		}
	}
	for _, o := range trustedOrigins {
		g.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

// addAddr allows the host of a listen address; an unspecified one
// ("", 0.0.0.0, ::) allows every IP literal.
func (g *hostGuard) addAddr(addr string) {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		g.anyIP = true
	} else {
		g.names[host] = true
	}
}

// with returns a copy of g that also allows the host of addr.
func (g *hostGuard) with(addr string) *hostGuard {
	c := *g
	c.names = maps.Clone(g.names)
	c.addAddr(addr)
	return &c
}

// allowedHost reports whether a Host header value (host or host:port) names
// this server.
func (g *hostGuard) allowedHost(hostport string) bool {
	if g.disabled {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if i := strings.IndexByte(host, '%'); i >= 0 { // IPv6 zone
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	if g.names[host] {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || g.anyIP
	}
	return false
}

// allowedOrigin reports whether an Origin header value is acceptable: absent
// (non-browser clients), a trusted origin, or an http(s) origin whose host is
// allowed.
func (g *hostGuard) allowedOrigin(origin string) bool {
	if origin == "" || g.disabled {
		return true
	}
	o := strings.ToLower(origin)
	if g.origins[o] {
		return true
	}
	if o == "null" {
		// An opaque origin: browsers send it for a same-origin form post
		// under "Referrer-Policy: no-referrer" (which this server sets), as
		// well as from sandboxed frames. The Host check above already
		// stops rebinding; cross-origin protection (Sec-Fetch-Site) judges
		// the rest.
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return g.allowedHost(u.Host)
}

// guard answers a request whose Host or Origin is not allowed: 421
// Misdirected Request for a foreign Host, 403 for a foreign Origin. It
// reports whether the request was refused.
func (s *Server) guard(w http.ResponseWriter, r *http.Request) bool {
	if !s.hosts.Load().allowedHost(r.Host) {
		writeError(w, r, apiError{status: http.StatusMisdirectedRequest, code: "misdirected", op: "host check",
			message: "request for host " + quoteHost(r.Host) + " refused (DNS rebinding protection)",
			hint:    "use http://127.0.0.1 or http://localhost, or add the name to [server] allowed_hosts"})
		return true
	}
	if !s.hosts.Load().allowedOrigin(r.Header.Get("Origin")) {
		writeError(w, r, apiError{status: http.StatusForbidden, code: "forbidden", op: "origin check",
			message: "request from a foreign origin refused",
			hint:    "call the server from its own origin, or add the origin to the trusted origins"})
		return true
	}
	return false
}

func quoteHost(h string) string {
	if len(h) > 100 {
		h = h[:100] + "…"
	}
	return "\"" + strings.ToValidUTF8(h, "?") + "\""
}
