package main

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/mcp"
)

func init() { register(mcpCommand) }

func mcpCommand(a *app) *cobra.Command {
	var (
		logLevel string
		logJSON  bool
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
directory. See docs/mcp.md.`,
		Example: `  kaizen mcp
  claude mcp add kaizen -- kaizen mcp`,
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
			logger.Info("kaizen mcp serving on stdio", "backend", e.Version().Backend, "default_project", cfg.Project)
			return mcp.ServeStdio(ctx, e, a.stdin, a.stdout, mcp.Options{Project: explicit, Logger: logger})
		},
	}
	f := cmd.Flags()
	f.StringVar(&logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines instead of text")
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
	if asJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
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
