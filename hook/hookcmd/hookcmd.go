// Package hookcmd is the `kaizen hook <client> <event>` command: it reads
// a client's hook payload, spools the event durably before anything else,
// and prints what the client should inject, within its budget. It links
// no database driver: the engine, needed only when no daemon runs, is
// opened by the function the kaizen command passes in.
package hookcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
)

// probe bounds the daemon's health check: a daemon that does not answer
// within it counts as down.
const probe = 200 * time.Millisecond

// DebugEnv, when set to 1, makes every hook call log a line (outcome,
// path, latency) to hook.log, not only the failed ones.
const DebugEnv = "KAIZEN_HOOK_DEBUG"

// Options are a hook call's global flags, streams and engine opener.
type Options struct {
	// Home, Project, DB and Now are the kaizen command's global flags
	// (empty when not given).
	Home, Project, DB, Now string
	// Args follow "hook": <client> <event> [--timeout D].
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	// Open opens the engine when no daemon runs.
	Open func(ctx context.Context, cfg kaizen.Config) (*kaizen.Engine, error)
}

// result is the outcome of the work of one hook call.
type result struct {
	out  []byte
	via  string // daemon, direct or spool (recorded later)
	task string
	err  error
}

// Run handles one hook call. It always returns 0: a hook never fails the
// agent's action (Claude Code treats exit status 2 as "block"). Problems
// go to hook.log in the kaizen home, and the client's no-op answer is
// printed.
func Run(ctx context.Context, o Options) int {
	start := time.Now()
	home := o.Home
	if home == "" {
		home = kaizen.DefaultHome()
	}
	logf := func(format string, args ...any) {
		_, _ = hook.AppendLog(home, time.Now(), fmt.Sprintf(format, args...))
	}
	args, timeout, err := parseArgs(o.Args)
	if err != nil {
		logf("hook: %v (see kaizen hook --help)", err)
		return 0
	}
	name := args[1]
	c, err := hook.ParseClient(args[0])
	if err != nil {
		logf("%s %s: %v", args[0], name, err)
		return 0
	}
	cfg, cfgErr := loadConfig(o)
	if cfgErr == nil {
		home = cfg.Home
		if timeout <= 0 {
			timeout = cfg.Hooks.Timeout
		}
	}
	if timeout <= 0 {
		timeout = kaizen.DefaultHookTimeout
	}
	// The budget counts from the start. Spooling is not bounded by it: an
	// event must be on disk before the hook exits, however slow the disk;
	// only the answer is given up at the deadline.
	deadline := start.Add(timeout)
	var sp *spooled
	if cfgErr == nil {
		var data []byte
		if data, err = readPayload(o.Stdin, deadline); err == nil {
			sp, err = spoolEvent(o, cfg, c, name, data)
		}
	} else {
		err = cfgErr
	}
	if err != nil {
		if errors.Is(err, hook.ErrNoSession) {
			err = fmt.Errorf("%w: nothing recorded", err)
		}
		logf("%s %s: %v", c, name, err)
		_, _ = o.Stdout.Write(hook.NoOp(c, name))
		return 0
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("panic: %v", r)}
			}
		}()
		done <- answer(ctx, o, sp)
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		// The work may be stuck (a locked database, a daemon that accepts
		// but does not answer): answer now and let the process exit. The
		// event is in the spool (unless spooling itself was stuck).
		r.err = fmt.Errorf("no answer within %v (the event stays spooled and is recorded later): %w", timeout, ctx.Err())
	}
	if r.err != nil {
		if errors.Is(r.err, hook.ErrNoSession) {
			r.err = fmt.Errorf("%w: nothing recorded", r.err)
		}
		logf("%s %s: %v", c, name, r.err)
		_, _ = o.Stdout.Write(hook.NoOp(c, name))
		return 0
	}
	_, _ = o.Stdout.Write(r.out)
	if os.Getenv(DebugEnv) == "1" {
		logf("%s %s: ok via %s in %v (task %s, %d bytes out)", c, name, r.via,
			time.Since(start).Round(time.Millisecond/10), r.task, len(r.out))
	}
	return 0
}

// parseArgs reads <client> <event> and --timeout.
func parseArgs(in []string) ([]string, time.Duration, error) {
	var args []string
	var timeout time.Duration
	for i := 0; i < len(in); i++ {
		a := in[i]
		switch {
		case a == "--timeout" || a == "-timeout":
			if i+1 >= len(in) {
				return nil, 0, errors.New("--timeout needs a duration")
			}
			i++
			a = "--timeout=" + in[i]
			fallthrough
		case strings.HasPrefix(a, "--timeout=") || strings.HasPrefix(a, "-timeout="):
			d, err := time.ParseDuration(a[strings.IndexByte(a, '=')+1:])
			if err != nil || d < 0 {
				return nil, 0, fmt.Errorf("--timeout %q is not a duration", a[strings.IndexByte(a, '=')+1:])
			}
			timeout = d
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, 0, fmt.Errorf("unknown flag %s", a)
		default:
			args = append(args, a)
		}
	}
	if len(args) != 2 {
		return nil, 0, fmt.Errorf("usage: kaizen hook <client> <event>, got %d arguments %q", len(args), args)
	}
	return args, timeout, nil
}

// loadConfig is the configuration with the global flags applied (the
// project is settled per event, from its directory).
func loadConfig(o Options) (kaizen.Config, error) {
	cfg, err := kaizen.LoadConfig(o.Home)
	if err != nil {
		return cfg, err
	}
	if o.DB != "" {
		cfg.DB = o.DB
	}
	if o.Now != "" {
		t, err := time.Parse(time.RFC3339Nano, o.Now)
		if err != nil {
			return cfg, fmt.Errorf("--now %q is not an RFC 3339 time", o.Now)
		}
		cfg.Now = func() time.Time { return t }
	}
	return cfg, nil
}

// Project is the project of a hook event: the explicit one (--project,
// KAIZEN_PROJECT, kaizen.toml), else the git root of the directory the
// agent works in (from the payload), else the one of the working
// directory.
func Project(o Options, cfg kaizen.Config, dir string) string {
	switch {
	case o.Project != "":
		return o.Project
	case cfg.Project != "":
		return cfg.Project
	case dir != "":
		return hook.ProjectForDir(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return kaizen.DefaultProject
	}
	return hook.ProjectForDir(wd)
}

// spooled is an event read, parsed and spooled, ready to be answered.
type spooled struct {
	cfg  kaizen.Config
	c    hook.Client
	name string
	ev   hook.Event
	rec  hook.Record
	sp   *spool.Spool
}

// readPayload reads the hook's standard input, giving up at the deadline
// (a client that never closes it gets no answer, and nothing is recorded).
func readPayload(in io.Reader, deadline time.Time) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(in, hook.MaxPayloadBytes+1))
		ch <- read{data, err}
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("read the payload: %w", r.err)
		}
		if len(r.data) > hook.MaxPayloadBytes {
			return nil, fmt.Errorf("the payload is larger than %d bytes: ignored", hook.MaxPayloadBytes)
		}
		return r.data, nil
	case <-t.C:
		return nil, errors.New("the payload did not arrive (standard input not closed) within the budget: nothing recorded")
	}
}

// spoolEvent parses the payload and appends the event to the spool,
// synced to disk (unless its kind is answered only).
func spoolEvent(o Options, cfg kaizen.Config, c hook.Client, name string, data []byte) (*spooled, error) {
	ev, err := hook.Parse(c, name, data)
	if err != nil {
		return nil, err
	}
	ev = hook.BindTeam(ev, os.Getenv)
	cfg.Project = Project(o, cfg, ev.Dir)
	at := time.Now()
	if cfg.Now != nil {
		at = cfg.Now()
	}
	s := &spooled{cfg: cfg, c: c, name: name, ev: ev, sp: spool.Open(cfg.Home),
		rec: hook.NewRecord(ev, hook.EventID(c, name, data), cfg.Project, at)}
	if ev.Kind.Recorded() {
		if _, err := hook.Append(s.sp, s.rec, time.Now()); err != nil {
			// Not durable: still try to record it right away.
			_, _ = hook.AppendLog(cfg.Home, time.Now(), fmt.Sprintf("%s %s: spool: %v", c, name, err))
		}
	}
	_ = hook.WriteStatus(cfg.Home, hook.Status{Client: c, Event: name, Task: ev.TaskID(), Project: cfg.Project, At: at.UTC(), Dir: ev.Dir})
	return s, nil
}

// answer answers a spooled event through the daemon, else from the engine
// opened here (which first records the session's spooled events).
func answer(ctx context.Context, o Options, s *spooled) result {
	cfg, c, name, ev, rec, sp := s.cfg, s.c, s.name, s.ev, s.rec, s.sp
	r := result{task: ev.TaskID()}
	if o.DB == "" {
		remaining := time.Second
		if dl, ok := ctx.Deadline(); ok {
			remaining = time.Until(dl)
		}
		if cl, err := client.Discover(ctx, cfg.Home, cfg.Server.Token, probe, remaining); err == nil {
			var resp hook.AnswerResponse
			if err := cl.Call(ctx, "POST", hook.AnswerPath, hook.AnswerRequest{Record: rec}, &resp); err != nil {
				return result{task: r.task, via: "daemon", err: fmt.Errorf("daemon: %w", err)}
			}
			r.via, r.out = "daemon", hook.Render(c, name, hook.Response{Context: resp.Context, Continue: resp.Continue})
			return r
		}
	}
	e, err := o.Open(ctx, cfg)
	if err != nil {
		return result{task: r.task, via: "direct", err: err}
	}
	defer e.Close()
	g := &hook.Ingester{Spool: sp, Handler: hook.EngineHandler(e, cfg.Hooks.IdleTimeout),
		Log: func(msg string) { _, _ = hook.AppendLog(cfg.Home, time.Now(), msg) }}
	var recorded *hook.Recorded
	if ev.Kind.Recorded() {
		if _, err := g.Session(ctx, rec.Session()); err != nil {
			return result{task: r.task, via: "direct", err: err}
		}
		recorded, _ = g.Recent(rec.ID)
	}
	h := g.Handler
	h.Project = cfg.Project
	resp, err := h.Answer(ctx, ev, recorded)
	if err != nil {
		// best effort, as in the daemon: what could be answered is
		// printed (team messages delivered are not lost), the rest logged
		_, _ = hook.AppendLog(cfg.Home, time.Now(), fmt.Sprintf("%s %s: %v (project %s)", c, name, err, cfg.Project))
	}
	r.via, r.out = "direct", hook.Render(c, name, resp)
	return r
}

// IngestPending records every spooled event with an engine the kaizen
// command opened (when no daemon does it), waiting at most wait for
// another ingester. Problems go to hook.log.
func IngestPending(ctx context.Context, cfg kaizen.Config, e *kaizen.Engine, wait time.Duration) (hook.IngestStats, error) {
	sp := spool.Open(cfg.Home)
	if _, err := os.Stat(filepath.Join(cfg.Home, spool.Dir)); err != nil {
		return hook.IngestStats{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	g := &hook.Ingester{Spool: sp, Handler: hook.EngineHandler(e, cfg.Hooks.IdleTimeout),
		Log: func(msg string) { _, _ = hook.AppendLog(cfg.Home, time.Now(), msg) }}
	return g.All(ctx)
}
