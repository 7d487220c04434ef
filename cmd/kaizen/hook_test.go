package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/hook/hookcmd"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// claudeEvent is a Claude Code hook payload of session id.
func claudeEvent(session, event string, extra map[string]any) []byte {
	p := map[string]any{"session_id": session, "cwd": "/home/dev/src/webapp", "hook_event_name": event,
		"transcript_path": "/home/dev/.claude/projects/x/" + session + ".jsonl", "permission_mode": "default"}
	for k, v := range extra {
		p[k] = v
	}
	data, _ := json.Marshal(p)
	return data
}

// claudeSession is a full session: start, prompt, tool call, tool failure,
// stop, and a retry prompt.
func claudeSession(session string) []struct {
	event   string
	payload []byte
} {
	return []struct {
		event   string
		payload []byte
	}{
		{"SessionStart", claudeEvent(session, "SessionStart", map[string]any{"source": "startup"})},
		{"UserPromptSubmit", claudeEvent(session, "UserPromptSubmit", map[string]any{"prompt": "Add OAuth login"})},
		{"PostToolUse", claudeEvent(session, "PostToolUse", map[string]any{"tool_name": "Read",
			"tool_input": map[string]any{"file_path": "/x"}, "tool_response": map[string]any{"ok": true}})},
		{"PostToolUseFailure", claudeEvent(session, "PostToolUseFailure", map[string]any{"tool_name": "Bash",
			"tool_input": map[string]any{"command": "npm test"}, "error": "Command exited with non-zero status code 1"})},
		{"Stop", claudeEvent(session, "Stop", map[string]any{"stop_hook_active": false})},
		{"UserPromptSubmit", claudeEvent(session, "UserPromptSubmit", map[string]any{"prompt": "still failing, fix it"})},
	}
}

// startDaemon runs `kaizen serve` (this test binary, as set up by
// TestMain) on a free loopback port for home, with a token, and returns
// a client of it.
func startDaemon(t *testing.T, bin, home, token string) *client.Client {
	t.Helper()
	cmd := exec.Command(bin, "--home", home, "--project", "webapp", "serve", "--addr", "127.0.0.1:0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "KAIZEN_TOKEN="+token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(testkit.Patience):
			_ = cmd.Process.Kill()
		}
	})
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("kaizen serve did not start: %v\n%s", err, stderr.String())
	}
	// serve.json is written just after the start line
	deadline := time.Now().Add(20 * time.Second)
	for {
		cl, err := client.Discover(context.Background(), home, token, time.Second, 10*time.Second)
		if err == nil {
			return cl
		}
		if time.Now().After(deadline) {
			t.Fatalf("discover: %v\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func kaizenBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("kaizen")
	if err != nil {
		t.Skipf("kaizen command not set up by TestMain: %v", err)
	}
	return bin
}

// runHookProcess runs `kaizen hook` as the client would: a new process
// with the payload on stdin. It returns stdout and the exit error.
func runHookProcess(bin string, env []string, payload []byte, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

// With the daemon running, hooks talk to it (it owns the database) with
// the configured token, and the session's outcome is recorded through it
// with no numbers.
func TestHookWithDaemon(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	home := t.TempDir()
	const token = "hook-test-token-0123456789"
	cl := startDaemon(t, bin, home, token)
	env := []string{"KAIZEN_TOKEN=" + token, hookcmd.DebugEnv + "=1"}
	for _, step := range claudeSession("daemon-1") {
		out, stderr, err := runHookProcess(bin, env, step.payload, "--home", home, "hook", "claude", step.event)
		if err != nil || len(out) != 0 || len(stderr) != 0 {
			t.Fatalf("%s: %v, stdout %q, stderr %q", step.event, err, out, stderr)
		}
	}
	log, err := os.ReadFile(filepath.Join(home, "hook.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "ok via daemon"); n != 6 || strings.Contains(string(log), "via direct") {
		t.Errorf("%d calls via the daemon:\n%s", n, log)
	}
	ctx := context.Background()
	task, err := cl.GetTask(ctx, "webapp", "claude-daemon-1")
	if err != nil {
		t.Fatal(err)
	}
	if task.Prompts != 2 || task.ToolCalls != 2 || task.ToolFailures != 1 || task.RetryCount != 1 || task.ErrorCount != 1 || task.Source != "claude" {
		t.Errorf("task %+v", task)
	}
	yes := true
	res, err := cl.RecordOutcome(ctx, kaizen.OutcomeInput{Project: "webapp", TaskID: "claude-daemon-1", Success: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Outcome; o.DurationMs != task.DurationMs || o.RetryCount != 1 || o.ErrorCount != 1 {
		t.Errorf("outcome %+v, task duration %d", o, task.DurationMs)
	}

	// a wrong token: the daemon refuses to answer, and the hook logs it
	// and exits 0; the event was spooled, and the daemon records it
	out, _, err := runHookProcess(bin, []string{"KAIZEN_TOKEN=wrong-token-0123456789"}, claudeEvent("daemon-2", "Stop", nil),
		"--home", home, "hook", "claude", "Stop")
	if err != nil || len(out) != 0 {
		t.Errorf("wrong token: %v, %q", err, out)
	}
	log, _ = os.ReadFile(filepath.Join(home, "hook.log"))
	if !strings.Contains(string(log), "claude Stop: daemon:") {
		t.Errorf("the refused call is not logged:\n%s", log)
	}
	testkit.Eventually(t, "the spooled Stop recorded by the daemon", func() bool {
		task, err := cl.GetTask(ctx, "webapp", "claude-daemon-2")
		return err == nil && task.ID == "claude-daemon-2"
	})
}

// serveFakeDaemon serves h on the home's Unix socket from this process and
// records it in serve.json as the home's daemon.
func serveFakeDaemon(t *testing.T, home string, h http.Handler) {
	t.Helper()
	ln, err := client.ListenSocket(home)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	if _, err := client.WriteServeInfo(home, client.ServeInfo{Addr: "127.0.0.1:1", Socket: client.SocketPath(home), PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
}

// A daemon that answers its health check and then hangs: the hook gives
// up at its deadline, prints nothing and exits 0.
func TestHookGivesUpAtItsDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			fmt.Fprint(w, `{"status":"ok"}`)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	home := t.TempDir()
	serveFakeDaemon(t, home, srv.Config.Handler)
	var stdout, stderr bytes.Buffer
	// The daemon never answers (until the test ends): only the hook's own
	// deadline lets it return.
	codes := make(chan int, 1)
	go func() {
		codes <- run([]string{"--home", home, "hook", "--timeout", "300ms", "claude", "SessionStart"},
			bytes.NewReader(claudeEvent("slow", "SessionStart", nil)), &stdout, &stderr)
	}()
	var code int
	select {
	case code = <-codes:
	case <-time.After(testkit.Patience):
		t.Fatal("the hook did not give up at its deadline")
	}
	if code != 0 || stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	log, _ := os.ReadFile(filepath.Join(home, "hook.log"))
	if !strings.Contains(string(log), "claude SessionStart: no answer within 300ms") {
		t.Errorf("hook.log:\n%s", log)
	}
	// the event waits in the spool: the next command records it
	var out bytes.Buffer
	if code := run([]string{"--home", home, "--project", "webapp", "--json", "task", "show", "claude-slow"}, nil, &out, &stderr); code != 0 {
		t.Fatalf("task show: %d %s %s", code, out.String(), stderr.String())
	}
}

// The hook never talks to whatever listens on the TCP address of a dead
// daemon's serve.json (an impostor that took over the port): it sends it
// no token and no prompt, and records the event itself.
func TestHookIgnoresAnImpostorOnTheOldPort(t *testing.T) {
	var hits atomic.Int64
	impostor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"status":"ok"}`)
	}))
	t.Cleanup(impostor.Close)
	home := t.TempDir()
	// the record of a killed daemon: its port, a pid that is not running,
	// and the socket path it had
	if _, err := client.WriteServeInfo(home, client.ServeInfo{Addr: strings.TrimPrefix(impostor.URL, "http://"),
		Socket: client.SocketPath(home), PID: 1 << 22}); err != nil {
		t.Fatal(err)
	}
	// an impostor socket not closed to others is not trusted either
	if err := os.MkdirAll(filepath.Join(home, client.RunDir), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	payload := claudeEvent("imp", "UserPromptSubmit", map[string]any{"prompt": "secret plan: split by file type"})
	t.Setenv("KAIZEN_TOKEN", "impostor-test-token-0123456789")
	// a budget no loaded machine reaches: the test is about where the
	// event goes, not about the deadline (a hook past its budget leaves
	// the event in the spool, TestHookGivesUpAtItsDeadline)
	if code := run([]string{"--home", home, "--project", "webapp", "hook", "--timeout", "10m", "claude", "UserPromptSubmit"},
		bytes.NewReader(payload), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d %s", code, stderr.String())
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the hook sent %d requests to the impostor on the old port", n)
	}
	cfg := kaizen.DefaultConfig()
	cfg.Home, cfg.Project = home, "webapp"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if task, err := e.GetTask(context.Background(), "webapp", "claude-imp"); err != nil || task.Prompts != 1 {
		t.Fatalf("the event was not recorded directly: %+v %v", task, err)
	}
	// a socket in the home served by another process than serve.json's
	// pid is refused before anything is sent
	var sockHits atomic.Int64
	ln, err := client.ListenSocket(home)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sockHits.Add(1) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	if _, err := client.Discover(context.Background(), home, "tok", time.Second, time.Second); !errors.Is(err, client.ErrNoDaemon) {
		t.Fatalf("a socket served by another pid than serve.json's: %v", err)
	}
	if n := sockHits.Load(); n != 0 && runtime.GOOS == "linux" {
		t.Fatalf("%d requests reached the socket of a process serve.json does not name", n)
	}
}

// Failure safety in-process: a payload over the size limit, garbage, and a
// home that cannot be created all exit 0 with nothing printed, and are logged.
func TestHookFailureSafety(t *testing.T) {
	home := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	huge := append([]byte(`{"session_id": "s", "prompt": "`), bytes.Repeat([]byte("x"), 5<<20)...)
	huge = append(huge, `"}`...)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, home string
		stdin      []byte
		args       []string
		log        string
	}{
		{"huge stdin", home, huge, []string{"claude", "UserPromptSubmit"}, "the payload is larger than 4194304 bytes"},
		{"binary garbage", home, []byte{0xff, 0x00, 0x7b}, []string{"codex", "Stop"}, "not a JSON object"},
		{"unwritable home", filepath.Join(blocker, "home"), claudeEvent("s", "SessionStart", nil), []string{"claude", "SessionStart"}, "claude SessionStart:"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"--home", tc.home, "hook"}, tc.args...), bytes.NewReader(tc.stdin), &stdout, &stderr)
		if code != 0 || stdout.Len() != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, code, stdout.String(), stderr.String())
		}
		logPath := filepath.Join(tc.home, "hook.log")
		if tc.name == "unwritable home" {
			logPath = filepath.Join(os.Getenv("TMPDIR"), fmt.Sprintf("kaizen-%d", os.Getuid()), "hook.log")
		}
		log, err := os.ReadFile(logPath)
		if err != nil || !strings.Contains(string(log), tc.log) {
			t.Errorf("%s: %s: %v\n%s", tc.name, logPath, err, log)
		}
	}
}

// TestHookLatency measures hook start-to-exit as a client sees it: a new
// process of the built binary per event, with the daemon running and
// without. It builds kaizen, so it runs only with KAIZEN_HOOK_LATENCY=1:
//
//	KAIZEN_HOOK_LATENCY=1 go test ./cmd/kaizen -run TestHookLatency -v
//
// KAIZEN_HOOK_LATENCY_RUNS sets the runs per case (default 300).
func TestHookLatency(t *testing.T) {
	if os.Getenv("KAIZEN_HOOK_LATENCY") != "1" {
		t.Skip("set KAIZEN_HOOK_LATENCY=1 to measure hook latency")
	}
	runs := 300
	if n, err := fmt.Sscan(os.Getenv("KAIZEN_HOOK_LATENCY_RUNS"), &runs); n != 1 || err != nil {
		runs = 300
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "kaizen")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("%s, %d CPUs, %d runs per case", runtime.Version(), runtime.NumCPU(), runs)

	// KAIZEN_HOOK_LATENCY_BASELINE names an older kaizen binary: each case
	// is then measured for it too, alternating calls, in the same run.
	bins := map[string]string{"": bin}
	if base := os.Getenv("KAIZEN_HOOK_LATENCY_BASELINE"); base != "" {
		bins["baseline "] = base
	}
	measure := func(name, home string, env []string, event string, payload func(i int) []byte) {
		times := map[string][]time.Duration{}
		for label, b := range bins {
			// warm the page cache and the database
			for i := range 5 {
				if _, _, err := runHookProcess(b, env, payload(i), "--home", home, "hook", "claude", event); err != nil {
					t.Fatal(err)
				}
			}
			times[label] = make([]time.Duration, 0, runs)
		}
		for i := range runs {
			for label, b := range bins {
				start := time.Now()
				_, stderr, err := runHookProcess(b, env, payload(i), "--home", home, "hook", "claude", event)
				times[label] = append(times[label], time.Since(start))
				if err != nil || len(stderr) != 0 {
					t.Fatalf("%s%s: %v %s", label, name, err, stderr)
				}
			}
		}
		for label, ts := range times {
			slices.Sort(ts)
			pct := func(p float64) time.Duration { return ts[int(p*float64(len(ts)-1))] }
			t.Logf("%-53s p50 %6.1f ms  p95 %6.1f ms  max %6.1f ms", label+name,
				ms(pct(0.50)), ms(pct(0.95)), ms(ts[len(ts)-1]))
		}
	}
	tool := func(i int) []byte {
		return claudeEvent("lat", "PostToolUse", map[string]any{"tool_name": "Read", "tool_input": map[string]any{"n": i}})
	}
	start := func(i int) []byte { return claudeEvent(fmt.Sprintf("lat-%d", i), "SessionStart", nil) }
	prompt := func(i int) []byte {
		return claudeEvent("lat", "UserPromptSubmit", map[string]any{"prompt": "split by file type, one file per subtask"})
	}
	noop := func(int) []byte { return []byte("not json") }

	// the process itself: a payload rejected before any I/O
	measure("process start + exit (invalid payload)", t.TempDir(), nil, "PostToolUse", noop)

	direct := t.TempDir()
	seedLatencyProject(t, bin, direct)
	measure("no daemon: PostToolUse", direct, nil, "PostToolUse", tool)
	measure("no daemon: SessionStart (guidance)", direct, nil, "SessionStart", start)
	measure("no daemon: UserPromptSubmit (warnings)", direct, nil, "UserPromptSubmit", prompt)

	daemon := t.TempDir()
	seedLatencyProject(t, bin, daemon)
	startDaemon(t, bin, daemon, "latency-token-0123456789")
	env := []string{"KAIZEN_TOKEN=latency-token-0123456789"}
	measure("daemon: PostToolUse", daemon, env, "PostToolUse", tool)
	measure("daemon: SessionStart (guidance)", daemon, env, "SessionStart", start)
	measure("daemon: UserPromptSubmit (warnings)", daemon, env, "UserPromptSubmit", prompt)

	// Exploration on: each tool call is also a round of the session's
	// tracker (a new session every 10 calls, so that none ends).
	explore := func(i int) []byte {
		return claudeEvent(fmt.Sprintf("explore-%d", i/10), "PostToolUse", map[string]any{"tool_name": "Grep",
			"tool_input":    map[string]any{"pattern": fmt.Sprint("term", i)},
			"tool_response": map[string]any{"filenames": []string{fmt.Sprintf("src/f%d.ts", i)}, "numFiles": 1}})
	}
	for _, home := range []string{direct, daemon} {
		if out, err := exec.Command(bin, "--home", home, "--project", "webapp", "explore", "enable", "--strategy", "analyst").CombinedOutput(); err != nil {
			t.Fatalf("explore enable: %v\n%s", err, out)
		}
	}
	measure("no daemon: PostToolUse, exploration on", direct, nil, "PostToolUse", explore)
	measure("daemon: PostToolUse, exploration on", daemon, env, "PostToolUse", explore)

	// Failure learning's pre-execution check: a learned failure pattern of
	// `go test ./...`; each call is a new session, so each one warns (and
	// records its warning); another command finds nothing.
	for _, home := range []string{direct, daemon} {
		seedTracePattern(t, bin, home)
	}
	preWarn := func(i int) []byte {
		return claudeEvent(fmt.Sprintf("pre-%d", i), "PreToolUse", map[string]any{"tool_name": "Bash",
			"tool_input": map[string]any{"command": "go test ./..."}})
	}
	preNone := func(i int) []byte {
		return claudeEvent("pre-none", "PreToolUse", map[string]any{"tool_name": "Bash",
			"tool_input": map[string]any{"command": fmt.Sprintf("npm run build-%d", i)}})
	}
	measure("no daemon: PreToolUse, trace check warns", direct, nil, "PreToolUse", preWarn)
	measure("daemon: PreToolUse, trace check warns", daemon, env, "PreToolUse", preWarn)
	measure("daemon: PreToolUse, trace check finds nothing", daemon, env, "PreToolUse", preNone)
	if log, err := os.ReadFile(filepath.Join(daemon, "hook.log")); err == nil {
		t.Errorf("problems:\n%s", log)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// seedLatencyProject records outcomes so that guidance has patterns and an
// anti-pattern to render.
func seedLatencyProject(t *testing.T, bin, home string) {
	t.Helper()
	for i, s := range []string{"Split by file type", "Split by file type", "Split by file type", "Split by feature", "Split by feature"} {
		ok := strings.HasSuffix(s, "feature")
		args := []string{"--home", home, "--project", "webapp", "outcome", "record", "--task", fmt.Sprint("seed-", i),
			"--duration", "5m", fmt.Sprintf("--success=%v", ok), "--strategy", s}
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("seed: %v\n%s", err, out)
		}
	}
}

// seedTracePattern records a fail, fail, pass chain of `go test ./...` in
// /home/dev/src/webapp, so that the check before that command warns.
func seedTracePattern(t *testing.T, bin, home string) {
	t.Helper()
	tr := `{"skill_id":"cmd:go test","attempts":[
{"index":1,"timestamp":"2026-01-05T10:00:00Z","context":{"command":"go test ./...","cwd":"/home/dev/src/webapp"},"error":"config/load.go:12:5: undefined: parseConfig"},
{"index":2,"timestamp":"2026-01-05T10:01:00Z","context":{"command":"go test ./...","cwd":"/home/dev/src/webapp"},"error":"config/load.go:12:5: undefined: parseConfig"},
{"index":3,"timestamp":"2026-01-05T10:02:00Z","context":{"command":"go test ./...","cwd":"/home/dev/src/webapp"},"success":true,"fix_applied":"edited config/load.go","fix_source":"self_correction"}]}`
	cmd := exec.Command(bin, "--home", home, "--project", "webapp", "trace", "record")
	cmd.Stdin = strings.NewReader(tr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trace record: %v\n%s", err, out)
	}
}
