package main

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook/hookcmd"
	appsvc "github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/mcp"
)

func init() { register(mcpCommand) }

func mcpCommand(a *app) *cobra.Command {
	var (
		logLevel, tools string
		logJSON         bool
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve kaizen's tools over MCP on stdin/stdout (for clients that spawn servers)",
		Long: `Serve kaizen's MCP tools (plan_guidance, record_outcome, record_error, …) on
standard input and output, for MCP clients that start their servers as
processes (Claude Code, opencode, Codex, Cursor). Standard output carries
the protocol only; logs go to standard error.

The project of a call is its "project" argument, else --project or
KAIZEN_PROJECT when set, else the git root of the client's first root
(when the client supports roots), else the git root of the working
directory.

--tools core serves the few tools an agent uses in every task (plan
guidance, record outcome, record error, recall, heuristic feedback): every
tool definition costs the client's context on each request, and the full
set is some 40 tools. kaizen setup configures clients with --tools core.
Every profile also offers the guidance digest as the resource
kaizen://guidance and the prompt plan_with_kaizen. See docs/mcp.md.`,
		Example: `  kaizen mcp
  kaizen mcp --tools core
  claude mcp add kaizen -- kaizen mcp --tools core`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			logger, err := newLogger(a.stderr, logLevel, logJSON)
			if err != nil {
				return err
			}
			if _, err := mcp.ProfileTools(tools); err != nil {
				return usageError{fmt.Errorf("--tools: %w", err)}
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			cfg.Logger = logger
			explicit, err := a.explicitProject()
			if err != nil {
				return err
			}
			e, err := kaizen.Open(ctx, cfg)
			if err != nil {
				return err
			}
			a.engine = e // closed by run
			// hook events a hook could not record yet (no daemon runs)
			if _, err := hookcmd.IngestPending(ctx, cfg, e, 5*time.Second); err != nil {
				logger.Warn("some spooled hook events are not recorded yet", "err", err)
			}
			logger.Info("kaizen mcp serving on stdio", "backend", e.Version().Backend, "default_project", cfg.Project, "tools", tools)
			return mcp.ServeStdio(ctx, e, a.stdin, a.stdout, mcp.Options{Project: explicit, Logger: logger, Tools: tools})
		},
	}
	f := cmd.Flags()
	f.StringVar(&logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines instead of text")
	f.StringVar(&tools, "tools", mcp.ProfileFull, "tool profile: core (a few tools, cheap in context) or full (every tool)")
	return cmd
}

// newLogger returns a logger writing text (or JSON lines) to w at the
// named level.
func newLogger(w io.Writer, level string, asJSON bool) (*slog.Logger, error) {
	l, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: l}
	// Every record is scrubbed of secrets (ScrubLogger): logs quote
	// untrusted input.
	if asJSON {
		return appsvc.ScrubLogger(slog.New(slog.NewJSONHandler(w, opts))), nil
	}
	return appsvc.ScrubLogger(slog.New(slog.NewTextHandler(w, opts))), nil
}

// explicitProject is the project chosen explicitly (--project, then
// KAIZEN_PROJECT or kaizen.toml), or "" when the project is only derived
// from the working directory: the client's roots then come first.
func (a *app) explicitProject() (string, error) {
	if a.project != "" {
		return a.project, nil
	}
	cfg, err := kaizen.LoadConfig(a.home)
	return cfg.Project, err
}
