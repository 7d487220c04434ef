package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
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
				MaxImportBytes: maxImport, OnRequest: m.ObserveRequest}
			// Validate the exposure before opening anything.
			if !server.IsLoopback(opts.Addr) && opts.Token == "" {
				return usageError{fmt.Errorf("refusing to listen on %s without a token: it is not a loopback "+
					"address; set --token or KAIZEN_TOKEN, or use --addr 127.0.0.1:7411", opts.Addr)}
			}
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
			ln, err := net.Listen("tcp", opts.Addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", opts.Addr, err)
			}
			// Record the daemon so that hooks and the CLI of this home use it
			// instead of opening the database themselves; before the start line,
			// so that whoever waits for that line finds the record.
			remove, err := client.WriteServeInfo(cfg.Home, client.ServeInfo{Addr: ln.Addr().String(),
				PID: os.Getpid(), StartedAt: time.Now().UTC(), Version: kaizen.Version})
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
