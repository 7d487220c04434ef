package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen/learning"
)

// project is the project of a call that names none: the HTTP request's,
// else Options.Project, else the client's roots', else "" (the engine's
// default). When the roots must be asked from a client on protocol
// 2026-07-28 or later, it returns instead the result asking for them: the
// client answers by calling the tool again with the roots (SEP-2322).
func (env *env) project(ctx context.Context, req *mcpsdk.CallToolRequest) (string, *mcpsdk.CallToolResult) {
	if req.Extra != nil {
		if p := req.Extra.Header.Get(ProjectHeader); p != "" {
			return p, nil
		}
	}
	if env.opts.Project != "" {
		return env.opts.Project, nil
	}
	if !env.askRoots {
		return "", nil
	}
	return env.roots.project(ctx, req)
}

// projectFromQuery copies ?project= into the Kaizen-Project header, which
// the tools read from the request (clients configure a URL more easily
// than a header). The two must agree when both are given.
func projectFromQuery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			http.Error(w, "malformed query string", http.StatusBadRequest)
			return
		}
		if ps, ok := q["project"]; ok {
			if len(ps) != 1 || ps[0] == "" {
				http.Error(w, "give ?project= once, with a project name", http.StatusBadRequest)
				return
			}
			if hp := r.Header.Get(ProjectHeader); hp != "" && hp != ps[0] {
				http.Error(w, "?project= and the "+ProjectHeader+" header name different projects", http.StatusBadRequest)
				return
			}
			r = r.Clone(r.Context())
			r.Header.Set(ProjectHeader, ps[0])
		}
		h.ServeHTTP(w, r)
	})
}

// rootsCache remembers, per client session, the project derived from the
// client's roots, so that they are asked once per session. An entry is
// dropped when its session ends and forgotten when the client says its
// roots changed.
type rootsCache struct {
	timeout time.Duration
	log     *slog.Logger

	mu       sync.Mutex
	sessions map[*mcpsdk.ServerSession]*rootsEntry
}

type rootsEntry struct {
	mu      sync.Mutex // held while asking a legacy client
	known   bool
	project string
}

// rootsInput names the roots request in a multi round-trip call.
const rootsInput = "kaizen_roots"

// multiRoundTrip is the first protocol version where servers ask clients
// for input by returning input requests instead of sending requests.
const multiRoundTrip = "2026-07-28"

func newRootsCache(timeout time.Duration, log *slog.Logger) *rootsCache {
	return &rootsCache{timeout: timeout, log: log, sessions: map[*mcpsdk.ServerSession]*rootsEntry{}}
}

// entry returns the session's entry, creating it (and the goroutine that
// drops it when the session ends) on first use.
func (c *rootsCache) entry(ss *mcpsdk.ServerSession) *rootsEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.sessions[ss]
	if e == nil {
		e = &rootsEntry{}
		c.sessions[ss] = e
		go func() {
			_ = ss.Wait()
			c.mu.Lock()
			delete(c.sessions, ss)
			c.mu.Unlock()
		}()
	}
	return e
}

// invalidate forgets a session's project; the next call asks again.
func (c *rootsCache) invalidate(ss *mcpsdk.ServerSession) {
	c.mu.Lock()
	e := c.sessions[ss]
	c.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		e.known = false
		e.mu.Unlock()
	}
}

// project returns the project of the first root of the calling client,
// "" when it has none or does not support roots. A client on protocol
// 2026-07-28 or later is asked with an input request (the returned
// result); an older one with a roots/list request, once per session.
func (c *rootsCache) project(ctx context.Context, req *mcpsdk.CallToolRequest) (string, *mcpsdk.CallToolResult) {
	ss := req.Session
	if ss == nil {
		return "", nil
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.RootsV2 == nil {
		return "", nil
	}
	e := c.entry(ss)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.known {
		return e.project, nil
	}
	if ip := ss.InitializeParams(); ip == nil || ip.ProtocolVersion >= multiRoundTrip {
		resp, ok := req.Params.InputResponses[rootsInput]
		if !ok {
			return "", &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{rootsInput: &mcpsdk.ListRootsParams{}}}
		}
		res, _ := resp.(*mcpsdk.ListRootsResult)
		e.known, e.project = true, firstRootProject(res)
		return e.project, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded {
			return "", nil // the call itself was cancelled: ask again next time
		}
		c.log.Warn("mcp: cannot list the client's roots; using the default project", "err", err)
		e.known, e.project = true, ""
		return "", nil
	}
	e.known, e.project = true, firstRootProject(res)
	c.log.Debug("mcp: project from the client's roots", "project", e.project)
	return e.project, nil
}

func firstRootProject(res *mcpsdk.ListRootsResult) string {
	if res == nil || len(res.Roots) == 0 {
		return ""
	}
	return rootProject(res.Roots[0].URI)
}

// rootProject names the project of a root the way the CLI names the
// project of its working directory: the directory name of the git root
// containing it (when the directory exists on this machine), else of the
// root itself. It returns "" for a root that is not a usable directory
// name.
func rootProject(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return ""
	}
	dir := filepath.Clean(filepath.FromSlash(u.Path))
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			dir = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	name := filepath.Base(dir)
	if name == "." || name == ".." || name == string(filepath.Separator) || strings.ContainsAny(name, `/\`) ||
		learning.ValidateName("project", name) != nil {
		return ""
	}
	return name
}
