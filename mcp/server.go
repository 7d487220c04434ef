package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
)

// Options configure a server. The zero value is usable.
type Options struct {
	// Project is the project of calls that name none, chosen explicitly
	// (--project, KAIZEN_PROJECT): it wins over the client's roots. Empty:
	// the client's roots, else the engine's default project.
	Project string
	// Logger receives the server's logs (default: discard). It must not
	// write to the stdio transport's output.
	Logger *slog.Logger
	// OnToolCall, when set, is called after every tool call with the tool's
	// name, the call's duration and its error (nil on success; a
	// *kaizen.Error otherwise, classify it with kaizen.KindOf). It must be
	// safe for concurrent use.
	OnToolCall func(tool string, d time.Duration, err error)
	// MaxBodyBytes bounds an HTTP request body (default
	// DefaultMaxBodyBytes). Larger requests get 413.
	MaxBodyBytes int64
	// RootsTimeout bounds the wait for a client's answer to roots/list
	// (default 2 s). A client that does not answer in time gets the default
	// project for the session.
	RootsTimeout time.Duration
	// Tools is the tool profile served: "" or ProfileFull for every tool,
	// ProfileCore for the few an agent uses in every task (see
	// ProfileTools). An unknown profile serves every tool and logs it.
	Tools string
}

// DefaultMaxBodyBytes bounds an HTTP request body: the engine's input limit
// plus room for the JSON-RPC envelope.
const DefaultMaxBodyBytes = kaizen.MaxInputBytes + 64<<10

// ProjectHeader is the HTTP header naming the project of the calls of a
// request (the ?project= query parameter is equivalent).
const ProjectHeader = "Kaizen-Project"

// instructions tell the client's model when to use the tools.
const instructions = `kaizen learns which ways of decomposing and executing tasks work in this project, from the outcomes you report.
Loop: call plan_guidance before planning or decomposing a task (it ranks proven patterns and lists anti-patterns to avoid);
call record_error when something fails while you work, and error_context before retrying;
call record_outcome once when the task ends, with the patterns (strategies) you used, so the next plan learns from it.
Use the same bead_id (task id) across these calls. Omit "project": it is derived from your workspace.`

// env is what the tool handlers of one server share.
type env struct {
	engine *kaizen.Engine
	opts   Options
	log    *slog.Logger
	// askRoots: the client's roots name the project. Not over stateless
	// HTTP, where no session outlives a request to remember them.
	askRoots bool
	roots    *rootsCache
}

// NewServer returns an MCP server exposing every registered tool over e.
// Connect it to any transport; ServeStdio and HTTPHandler do it for stdio
// and streamable HTTP.
func NewServer(e *kaizen.Engine, opts Options) *mcpsdk.Server {
	return newServer(e, opts, true, nil)
}

func newServer(e *kaizen.Engine, opts Options, askRoots bool, tools []*toolDef) *mcpsdk.Server {
	if e == nil {
		panic("mcp: NewServer with a nil engine")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RootsTimeout <= 0 {
		opts.RootsTimeout = 2 * time.Second
	}
	env := &env{engine: e, opts: opts, log: opts.Logger, askRoots: askRoots,
		roots: newRootsCache(opts.RootsTimeout, opts.Logger)}
	if tools == nil {
		var err error
		if tools, err = profileDefs(opts.Tools); err != nil {
			opts.Logger.Warn("mcp: serving every tool", "err", err)
			tools = profileDefsFull()
		}
	}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "kaizen", Title: "kaizen", Version: kaizen.Version},
		&mcpsdk.ServerOptions{
			Instructions: instructions,
			Logger:       opts.Logger,
			RootsListChangedHandler: func(_ context.Context, req *mcpsdk.RootsListChangedRequest) {
				env.roots.invalidate(req.Session)
			},
		})
	for _, d := range tools {
		s.AddTool(d.sdkTool(), d.serve(env))
	}
	addResources(s, env)
	return s
}

// observe reports a finished call to Options.OnToolCall.
func (env *env) observe(tool string, d time.Duration, err error) {
	if env.opts.OnToolCall != nil {
		env.opts.OnToolCall(tool, d, err)
	}
}

// HTTPHandler serves the tools over streamable HTTP in stateless mode: no
// session is kept between requests, so clients keep working across server
// restarts. Mount it at /mcp. Responses are JSON (no server-sent events:
// the tools send no notifications). The project of a request's calls can
// be named with ?project= or the Kaizen-Project header. Authentication,
// cross-origin protection and logging are the mounting server's job;
// requests from loopback with a non-loopback Host are refused (DNS
// rebinding protection).
func HTTPHandler(e *kaizen.Engine, opts Options) http.Handler {
	s := newServer(e, opts, false, nil)
	limit := opts.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s },
		&mcpsdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: opts.Logger,
			MaxRequestBodyBytes: limit})
	return projectFromQuery(h)
}

// ServeStdio serves the tools on in and out (newline-delimited JSON-RPC)
// until in ends or ctx is done. A line that is not a valid JSON-RPC message
// is answered with a JSON-RPC error and serving goes on (stdio.go). Nothing
// else may write to out. It returns
// nil when the client closes the connection or ctx is cancelled.
func ServeStdio(ctx context.Context, e *kaizen.Engine, in io.Reader, out io.Writer, opts Options) error {
	r, ok := in.(io.ReadCloser)
	if !ok {
		r = io.NopCloser(in)
	}
	err := NewServer(e, opts).Run(ctx, &lineTransport{in: r, out: out})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
