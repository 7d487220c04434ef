package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
	"github.com/kaizenhq/kaizen/mcp"
	"github.com/kaizenhq/kaizen/metrics"
	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/store/sqlite"
	"github.com/kaizenhq/kaizen/viewer"
)

func init() { register(serveCommand) }

func serveCommand(a *app) *cobra.Command {
	var (
		addr, token, logLevel string
		logJSON               bool
		maxImport             int64
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the kaizen daemon (REST API, MCP, web viewer, metrics) on 127.0.0.1:7411",
		Long: `Run the kaizen daemon on the embedded SQLite store unless --db says otherwise:
the REST API under /api/v1/ and /healthz (docs/api.md), MCP over streamable
HTTP at /mcp (docs/mcp.md), the web viewer at / (docs/viewer.md) and
Prometheus metrics at /metrics.

It listens on loopback (127.0.0.1:7411) by default. Any other address needs
a token, which clients then send as "Authorization: Bearer <token>"; prefer
KAIZEN_TOKEN or [server] token in kaizen.toml over --token, which other
users can read in the process list. Logs go to stderr. SIGINT or SIGTERM
stops accepting connections, lets in-flight requests finish, then closes
the store.

When a chat model is configured ([[model.chat]]), the daemon extracts each
task's experience in the background once no outcome of the task arrived for
experience.auto_extract_delay (30s); on start it also picks up the tasks of
the last 7 days whose outcome has no extracted experience yet. Set
experience.auto_extract = false to turn this off (docs/experience.md).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			logger, err := newLogger(a.stderr, logLevel, logJSON)
			if err != nil {
				return err
			}

			cfg, err := a.config()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("addr") {
				cfg.Server.Addr = addr
			}
			if cmd.Flags().Changed("token") {
				cfg.Server.Token = token
			}
			if cfg.Server.Addr == "" {
				cfg.Server.Addr = kaizen.DefaultAddr
			}
			cfg.Logger = logger
			m := metrics.New()
			opts := server.Options{Addr: cfg.Server.Addr, Token: cfg.Server.Token, Logger: logger,
				MaxImportBytes: maxImport, OnRequest: m.ObserveRequest, AllowedHosts: cfg.Server.AllowedHosts}
			// Validate the exposure before opening anything.
			if !server.IsLoopback(opts.Addr) && opts.Token == "" {
				return usageError{fmt.Errorf("refusing to listen on %s without a token: it is not a loopback "+
					"address; set --token or KAIZEN_TOKEN, or use --addr 127.0.0.1:7411", opts.Addr)}
			}
			// One home has one daemon: the lock goes with the process, so
			// a killed daemon leaves none behind.
			release, err := client.LockHome(cfg.Home)
			if err != nil {
				return fmt.Errorf("serve %s: %w", cfg.Home, err)
			}
			defer release()
			e, err := kaizen.Open(ctx, cfg)
			if err != nil {
				return err
			}
			a.engine = e // closed by run after the server has stopped
			srv, err := server.New(e, opts)
			if err != nil {
				return usageError{err}
			}
			if err := mountSurfaces(srv, e, m, logger); err != nil {
				return err
			}
			ingester := hookIngester(e, cfg, logger)
			if err := srv.Handle(server.Route{Pattern: "POST " + hook.AnswerPath, MaxBodyBytes: spool.MaxEntryBytes + 4096,
				Handler: hook.AnswerHandler(ingester)}); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", opts.Addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", opts.Addr, err)
			}
			// Hooks reach the daemon over an owner-only Unix socket in the
			// home, never over TCP, so no other process can pose as it.
			sock, err := client.ListenSocket(cfg.Home)
			if err != nil {
				ln.Close()
				return fmt.Errorf("listen on the hook socket: %w", err)
			}
			stopSocket := serveSocket(srv, sock, logger)
			defer stopSocket()
			// Record the daemon so that hooks of this home use it instead of
			// opening the database themselves; before the start line, so that
			// whoever waits for that line finds the record.
			remove, err := client.WriteServeInfo(cfg.Home, client.ServeInfo{Addr: ln.Addr().String(),
				Socket: client.SocketPath(cfg.Home), PID: os.Getpid(), StartedAt: time.Now().UTC(),
				Version: kaizen.Version, Project: cfg.Project})
			if err != nil {
				logger.Warn("cannot record the daemon for hooks and the CLI", "home", cfg.Home, "err", err)
			} else {
				defer remove()
			}
			url := "http://" + ln.Addr().String()
			info := map[string]any{"url": url, "addr": ln.Addr().String(), "backend": e.Version().Backend,
				"project": cfg.Project, "auth": opts.Token != ""}
			if err := a.print(info, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "kaizen serving on %s (store: %s, default project: %s)\n",
					url, e.Version().Backend, cfg.Project)
				return err
			}); err != nil {
				ln.Close()
				return err
			}
			// Learn without being asked: the durable job runner extracts
			// each finished task's experience (and runs every other
			// background job) until the server stops.
			jobsCtx, stopJobs := context.WithCancel(ctx)
			jobsDone := make(chan struct{})
			go func() {
				defer close(jobsDone)
				if err := e.RunJobs(jobsCtx); err != nil {
					logger.Error("background jobs stopped", "err", err)
				}
			}()
			defer func() { stopJobs(); <-jobsDone }()
			if why := e.AutoExtractOff(); why != "" {
				logger.Info("background experience extraction is off", "reason", why)
			} else {
				logger.Info("background experience extraction is on", "mode", cfg.Experience.Mode, "delay", cfg.Experience.AutoExtractDelay)
			}
			// Record the hook events whose hooks gave up before the daemon
			// answered, and close the sessions idle for too long.
			ingestCtx, stopIngest := context.WithCancel(ctx)
			ingested := make(chan struct{})
			go func() {
				defer close(ingested)
				ingester.Run(ingestCtx, time.Second, idleSweeper(e, cfg, logger))
			}()
			defer func() { stopIngest(); <-ingested }()
			// Load the vector indexes now (from their snapshots when an
			// earlier run saved them), so that no recall waits for it.
			warmCtx, stopWarm := context.WithCancel(ctx)
			warmed := make(chan struct{})
			go func() {
				defer close(warmed)
				t0 := time.Now()
				n, err := e.WarmVectorIndexes(warmCtx)
				if err != nil && warmCtx.Err() == nil {
					logger.Warn("vector indexes not warmed", "err", err)
					return
				}
				st := e.VectorIndexStats()
				logger.Info("vector indexes ready", "indexes", n, "from_snapshots", st.Restores, "loaded", st.Loads,
					"took", time.Since(t0).Round(time.Millisecond))
				// Then plan guidance's pattern caches (from their snapshots
				// too), so that no first guidance request loads one.
				t0 = time.Now()
				if n, err = e.WarmGuidance(warmCtx); err != nil {
					if warmCtx.Err() == nil {
						logger.Warn("guidance not warmed", "err", err)
					}
					return
				}
				logger.Info("guidance ready", "projects", n, "took", time.Since(t0).Round(time.Millisecond))
			}()
			err = srv.Serve(ctx, ln)
			stopWarm()
			<-warmed
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", kaizen.DefaultAddr, "listen address (env KAIZEN_SERVER_ADDR, config [server] addr)")
	f.StringVar(&token, "token", "", "bearer token required by every request but /healthz (env KAIZEN_TOKEN, config [server] token)")
	f.Int64Var(&maxImport, "max-import-bytes", server.DefaultMaxImportBytes, "largest accepted POST /api/v1/import body")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines instead of text")
	return cmd
}

// mountSurfaces adds the agent and human surfaces to the REST server: MCP
// over streamable HTTP at /mcp, Prometheus metrics at /metrics and the web
// viewer at /. Every route shares the server's auth, limits and logging.
func mountSurfaces(srv *server.Server, e *kaizen.Engine, m *metrics.Metrics, logger *slog.Logger) error {
	if st, ok := e.Store().(*sqlite.Store); ok {
		m.WatchSQLite(st)
	}
	routes := []server.Route{
		{Pattern: "/mcp", MaxBodyBytes: mcp.DefaultMaxBodyBytes,
			Handler: mcp.HTTPHandler(e, mcp.Options{Logger: logger, OnToolCall: m.ObserveTool})},
		{Pattern: "GET /metrics", Handler: m.Handler()},
	}
	for _, r := range routes {
		if err := srv.Handle(r); err != nil {
			return err
		}
	}
	_, err := viewer.Register(srv, viewer.Options{Logger: logger})
	return err
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToLower(s))); err != nil {
		return l, usageError{fmt.Errorf("--log-level %q: use debug, info, warn or error", s)}
	}
	return l, nil
}

// hookIngester records the spooled hook events of the daemon's home.
func hookIngester(e *kaizen.Engine, cfg kaizen.Config, logger *slog.Logger) *hook.Ingester {
	return &hook.Ingester{Spool: spool.Open(cfg.Home), Handler: hook.EngineHandler(e, cfg.Hooks.IdleTimeout),
		Log: func(msg string) { logger.Warn("hook events", "msg", msg) }}
}

// idleSweeper closes, at most once a minute, the tracked sessions idle for
// longer than [hooks] idle_timeout, and forgets applied event ids older
// than a week.
func idleSweeper(e *kaizen.Engine, cfg kaizen.Config, logger *slog.Logger) func(context.Context) {
	var last time.Time
	return func(ctx context.Context) {
		if cfg.Hooks.IdleTimeout <= 0 || time.Since(last) < time.Minute {
			return
		}
		last = time.Now()
		res, err := e.CloseIdleTasks(ctx, kaizen.CloseIdleInput{IdleMs: cfg.Hooks.IdleTimeout.Milliseconds()})
		if err != nil {
			if ctx.Err() == nil {
				logger.Warn("close idle sessions", "err", err)
			}
			return
		}
		for _, c := range res.Closed {
			logger.Info("closed an idle session", "task", c.Task.ID, "project", c.Task.Project,
				"outcome", c.Outcome != nil, "skipped", c.Skipped)
		}
		if _, err := e.PruneAppliedEvents(ctx, 7*24*time.Hour); err != nil && ctx.Err() == nil {
			logger.Warn("prune applied event ids", "err", err)
		}
	}
}

// serveSocket serves the daemon's routes on its Unix socket until the
// returned function is called.
func serveSocket(srv *server.Server, ln net.Listener, logger *slog.Logger) func() {
	hs := srv.HTTPServer()
	ln = server.LimitListener(ln, srv.MaxConns())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("hook socket", "err", err)
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		<-done
	}
}
