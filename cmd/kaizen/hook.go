package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/hook"
)

func init() { register(hookCommand) }

// Hook timing: the whole call gives up after hookDeadline, and a daemon
// that does not answer its health check within hookProbe counts as down.
const (
	hookDeadline = 2 * time.Second
	hookProbe    = 100 * time.Millisecond
)

// hookDebugEnv, when set to 1, makes every hook call log a line (outcome,
// backend, latency) to hook.log, not only the failed ones.
const hookDebugEnv = "KAIZEN_HOOK_DEBUG"

func hookCommand(a *app) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "hook <client> <event>",
		Short: "Handle a coding agent's hook event (installed by kaizen setup)",
		Long: `Handle one hook event of a coding agent: read the client's hook JSON on
standard input, record it as an event of the session's task, and print what
the client should inject (plan guidance at session start, warnings about a
prompt that uses an anti-pattern). Clients run this command themselves once
'kaizen setup <client>' has registered it.

Clients and events:
  claude    SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, Stop
  codex     SessionStart, UserPromptSubmit, PostToolUse, Stop
  cursor    sessionStart, beforeSubmitPrompt, postToolUse, postToolUseFailure, stop
            (also afterShellExecution, afterMCPExecution)
  opencode  session.created, chat.message, tool.execute.after, tool.failed,
            session.idle (sent by the plugin kaizen setup writes)

The session is tracked as task <client>-<session id> (claude-<session_id>),
so its outcome can be recorded without numbers at the end:
  kaizen outcome record --task claude-<session_id> --success

A hook never fails the agent's action: on any problem (kaizen down, bad
input, timeout) it prints nothing, exits 0, and appends the problem to
hook.log in the kaizen home. It talks to the running daemon ('kaizen serve'
of the same home) when there is one, and opens the database itself only
when there is none. Set KAIZEN_HOOK_DEBUG=1 to log every call. See
docs/clients.md.`,
		Example: `  echo '{"session_id":"abc","cwd":"/src/app","hook_event_name":"SessionStart"}' | kaizen hook claude SessionStart`,
		// Validated in RunE: a usage error must not fail the agent either
		// (Claude Code treats exit status 2 as "block the prompt").
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a.runHook(cmd.Context(), args, timeout)
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		a.hookProblem("", "", fmt.Errorf("usage: %v (see kaizen hook --help)", err))
		return nil
	})
	cmd.Flags().DurationVar(&timeout, "timeout", hookDeadline, "give up (printing nothing) after this long")
	return cmd
}

// hookResult is the outcome of the work of one hook call.
type hookResult struct {
	out []byte
	via string // daemon or direct
	ev  hook.Event
	err error
}

// runHook handles one hook call. It never returns an error: problems are
// logged and the client's no-op answer is printed.
func (a *app) runHook(ctx context.Context, args []string, timeout time.Duration) {
	start := time.Now()
	if len(args) != 2 {
		a.hookProblem("", "", fmt.Errorf("usage: kaizen hook <client> <event>, got %d arguments %q", len(args), args))
		return
	}
	name := args[1]
	c, err := hook.ParseClient(args[0])
	if err != nil {
		a.hookProblem(args[0], name, err)
		return
	}
	if timeout <= 0 {
		timeout = hookDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan hookResult, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- hookResult{err: fmt.Errorf("panic: %v", r)}
			}
		}()
		done <- a.hookWork(ctx, c, name)
	}()
	var r hookResult
	select {
	case r = <-done:
	case <-ctx.Done():
		// The work may be stuck (a locked database, a daemon that accepts
		// but does not answer): answer now and let the process exit.
		r.err = fmt.Errorf("gave up after %v: %w", timeout, ctx.Err())
	}
	if r.err != nil {
		if errors.Is(r.err, hook.ErrNoSession) {
			r.err = fmt.Errorf("%w: nothing recorded", r.err)
		}
		a.hookProblem(string(c), name, r.err)
		_, _ = a.stdout.Write(hook.NoOp(c, name))
		return
	}
	_, _ = a.stdout.Write(r.out)
	if os.Getenv(hookDebugEnv) == "1" {
		a.hookLog(fmt.Sprintf("%s %s: ok via %s in %v (task %s, %d bytes out)", c, name, r.via,
			time.Since(start).Round(time.Millisecond/10), r.ev.TaskID(), len(r.out)))
	}
}

// hookWork reads the payload, records the event and renders the answer.
func (a *app) hookWork(ctx context.Context, c hook.Client, name string) hookResult {
	data, err := io.ReadAll(io.LimitReader(a.stdin, hook.MaxPayloadBytes+1))
	if err != nil {
		return hookResult{err: fmt.Errorf("read the payload: %w", err)}
	}
	if len(data) > hook.MaxPayloadBytes {
		return hookResult{err: fmt.Errorf("the payload is larger than %d bytes: ignored", hook.MaxPayloadBytes)}
	}
	ev, err := hook.Parse(c, name, data)
	if err != nil {
		return hookResult{err: err}
	}
	cfg, err := a.hookConfig(ev.Dir)
	if err != nil {
		return hookResult{ev: ev, err: err}
	}
	backend, via, closeBackend, err := a.hookBackend(ctx, cfg)
	if err != nil {
		return hookResult{ev: ev, err: err}
	}
	defer closeBackend()
	h := &hook.Handler{Backend: backend, Project: cfg.Project, Advisors: hookAdvisors(backend)}
	if xb, ok := backend.(hook.ExperienceBackend); ok {
		h.Experience = xb // capture prompts and answers, inject recall
	}
	resp, err := h.Handle(ctx, ev)
	if err != nil {
		return hookResult{ev: ev, via: via, err: fmt.Errorf("%s (via %s, project %s)", err, via, cfg.Project)}
	}
	return hookResult{out: hook.Render(c, name, resp), via: via, ev: ev}
}

// hookAdvisors are the advisors consulted after tool calls and stops: the
// exploration tracker, which records the tool call into the session's
// tracker and returns its nudge (when the project has opted in).
func hookAdvisors(b hook.Backend) []hook.Advisor {
	var out []hook.Advisor
	if eb, ok := b.(hook.ExploreBackend); ok {
		out = append(out, hook.ExploreAdvisor{Backend: eb})
	}
	return out
}

// hookConfig is the configuration of a hook call. The project is the
// explicit one (--project, KAIZEN_PROJECT, kaizen.toml), else the git root
// of the directory the agent works in (from the payload), else the one of
// the working directory.
func (a *app) hookConfig(dir string) (kaizen.Config, error) {
	loaded, err := kaizen.LoadConfig(a.home)
	if err != nil {
		return loaded, err
	}
	explicit := a.project != "" || loaded.Project != ""
	cfg, err := a.config()
	if err != nil {
		return cfg, err
	}
	if !explicit && dir != "" {
		cfg.Project = projectForDir(dir)
	}
	return cfg, nil
}

// projectForDir names the project of a directory like deriveProject does
// for the working directory: its git root's name, else its own name.
func projectForDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := projectName(gitRoot(dir))
	check := kaizen.DefaultConfig()
	check.Project = name
	if check.Validate() != nil {
		return kaizen.DefaultProject
	}
	return name
}

// gitRoot is the nearest directory from dir up holding .git, else dir.
func gitRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// hookBackend is the running daemon of the home when there is one (unless
// --db names another database), else the database opened in-process.
func (a *app) hookBackend(ctx context.Context, cfg kaizen.Config) (hook.Backend, string, func(), error) {
	if a.db == "" {
		remaining := time.Second
		if dl, ok := ctx.Deadline(); ok {
			remaining = time.Until(dl)
		}
		cl, err := client.Discover(ctx, cfg.Home, cfg.Server.Token, hookProbe, remaining)
		if err == nil {
			return cl, "daemon", func() {}, nil
		}
	}
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		return nil, "", nil, err
	}
	return e, "direct", func() { e.Close() }, nil
}

// hookHome is where hook.log goes: --home, else KAIZEN_HOME, else the default home.
func (a *app) hookHome() string {
	if a.home != "" {
		return a.home
	}
	return kaizen.DefaultHome()
}

func (a *app) hookProblem(c, name string, err error) {
	who := strings.TrimSpace(c + " " + name)
	if who == "" {
		who = "hook"
	}
	a.hookLog(fmt.Sprintf("%s: %v", who, err))
}

func (a *app) hookLog(msg string) {
	// Nowhere left to report a failure to log: a hook stays silent.
	_, _ = hook.AppendLog(a.hookHome(), time.Now(), msg)
}
