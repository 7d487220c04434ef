package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// hookStep is one hook call of a client session.
type hookStep struct {
	client, event string
	payload       map[string]any
}

// clientSessions are one session of every client through its hooks, each
// with two prompts, three tool calls of which one fails, and its end.
func clientSessions(dir, suffix string) [][]hookStep {
	claude := func(event string, extra map[string]any) hookStep {
		p := map[string]any{"session_id": "cl-" + suffix, "cwd": dir, "hook_event_name": event, "transcript_path": "/t.jsonl"}
		for k, v := range extra {
			p[k] = v
		}
		return hookStep{"claude", event, p}
	}
	codex := func(event string, extra map[string]any) hookStep {
		p := map[string]any{"session_id": "cx-" + suffix, "cwd": dir, "hook_event_name": event, "model": "gpt-5-codex", "turn_id": "t1"}
		for k, v := range extra {
			p[k] = v
		}
		return hookStep{"codex", event, p}
	}
	cursor := func(event string, extra map[string]any) hookStep {
		p := map[string]any{"conversation_id": "cu-" + suffix, "session_id": "cu-" + suffix, "workspace_roots": []string{dir},
			"hook_event_name": event, "cursor_version": "2.1.0"}
		for k, v := range extra {
			p[k] = v
		}
		return hookStep{"cursor", event, p}
	}
	oc := func(event string, extra map[string]any) hookStep {
		p := map[string]any{"session_id": "oc-" + suffix, "cwd": dir}
		for k, v := range extra {
			p[k] = v
		}
		return hookStep{"opencode", event, p}
	}
	bash := func(cmd string) map[string]any { return map[string]any{"command": cmd} }
	return [][]hookStep{
		{
			claude("SessionStart", map[string]any{"source": "startup"}),
			claude("UserPromptSubmit", map[string]any{"prompt": "Add OAuth login; split by feature"}),
			claude("PostToolUse", map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": dir + "/auth.go"}, "tool_response": map[string]any{}}),
			claude("PostToolUseFailure", map[string]any{"tool_name": "Bash", "tool_input": bash("go test ./..."), "error": "exit status 1"}),
			claude("UserPromptSubmit", map[string]any{"prompt": "the test still fails, fix it"}),
			claude("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": bash("go test ./..."), "tool_response": map[string]any{"stdout": "ok"}}),
			claude("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "Done: the tests pass."}),
			claude("SessionEnd", map[string]any{"reason": "prompt_input_exit"}),
		},
		{
			codex("SessionStart", map[string]any{"source": "startup"}),
			codex("UserPromptSubmit", map[string]any{"prompt": "Fix the callback test"}),
			codex("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": bash("git status"), "tool_response": "Exit code: 0\nOutput:\n"}),
			codex("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": bash("npm test"), "tool_response": "Exit code: 1\nOutput:\nFAIL\n"}),
			codex("UserPromptSubmit", map[string]any{"prompt": "try again"}),
			codex("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": bash("npm test"), "tool_response": "Exit code: 0\nOutput:\nok\n"}),
			codex("Stop", map[string]any{"stop_hook_active": false, "last_assistant_message": "Fixed."}),
			codex("SessionEnd", map[string]any{"reason": "other"}),
		},
		{
			cursor("sessionStart", map[string]any{"is_background_agent": false}),
			cursor("beforeSubmitPrompt", map[string]any{"prompt": "Add the OAuth callback"}),
			cursor("postToolUse", map[string]any{"tool_name": "Read", "tool_input": map[string]any{"path": "a.ts"}, "tool_output": "x"}),
			cursor("postToolUseFailure", map[string]any{"tool_name": "Shell", "tool_input": bash("npm test"), "error_message": "exit 1", "failure_type": "error"}),
			cursor("beforeSubmitPrompt", map[string]any{"prompt": "the test fails"}),
			cursor("postToolUse", map[string]any{"tool_name": "Shell", "tool_input": bash("npm test"), "tool_output": "ok"}),
			cursor("afterFileEdit", map[string]any{"file_path": dir + "/cb.ts", "edits": []any{}}),
			cursor("stop", map[string]any{"status": "completed", "loop_count": 0}),
			cursor("sessionEnd", map[string]any{"reason": "user_closed", "final_status": "completed"}),
		},
		{
			oc("session.created", nil),
			oc("chat.message", map[string]any{"prompt": "Add OAuth"}),
			oc("tool.execute.after", map[string]any{"tool_name": "read"}),
			oc("tool.failed", map[string]any{"tool_name": "bash", "tool_input": bash("npm test"), "error": "exit 1"}),
			oc("chat.message", map[string]any{"prompt": "again"}),
			oc("tool.execute.after", map[string]any{"tool_name": "bash", "tool_input": bash("npm test")}),
			oc("session.idle", nil),
			oc("session.end", map[string]any{"reason": "deleted"}),
		},
	}
}

// TestHookEventsSurviveASaturatedMachine runs every client's hook sequence
// while every core is busy and another writer holds the database for
// longer than the hooks' budget, with and without a daemon: each hook
// gives up on its answer, yet afterwards every event is in the store,
// exactly once, and every ended session has one inferred outcome.
func TestHookEventsSurviveASaturatedMachine(t *testing.T) {
	bin := kaizenBinary(t)
	for _, mode := range []string{"direct", "daemon"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			home, dir := t.TempDir(), filepath.Join(t.TempDir(), "webapp")
			if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			// a short budget keeps the test short: the lock outlasts it
			const token = "saturation-token-0123456789"
			toml := "[hooks]\ntimeout = \"300ms\"\n[server]\ntoken = \"" + token + "\"\n"
			if err := os.WriteFile(filepath.Join(home, "kaizen.toml"), []byte(toml), 0o600); err != nil {
				t.Fatal(err)
			}
			// create the database, then hold its write lock
			if out, err := runHook(bin, home, "", "hook", "claude", "SessionStart"); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			if mode == "daemon" {
				startDaemon(t, bin, home, token)
			}
			// the daemon may be writing as it starts (its jobs): wait
			// for the write lock rather than fail on SQLITE_BUSY
			db, err := sql.Open("sqlite", "file:"+filepath.Join(home, "kaizen.db")+"?_pragma=busy_timeout(600000)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			conn, err := db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var hogs sync.WaitGroup
			for range runtime.NumCPU() {
				hogs.Add(1)
				go func() {
					defer hogs.Done()
					for x := 0; ; x++ {
						select {
						case <-stop:
							return
						default:
						}
						_ = x * x
					}
				}()
			}
			sessions := clientSessions(dir, mode)
			for _, s := range sessions {
				for i, st := range s {
					payload, _ := json.Marshal(st.payload)
					// the first events twice, as hooks installed in two
					// scopes send them
					for range 1 + min(1, 2-min(i, 2)) {
						if out, err := runHook(bin, home, string(payload), "hook", st.client, st.event); err != nil {
							t.Fatalf("%s %s: %v %s", st.client, st.event, err, out)
						}
					}
				}
			}
			// Cursor runs a Claude Code hook of the same settings with its
			// own payload: ignored, not a second task.
			foreign, _ := json.Marshal(sessions[2][1].payload)
			if out, err := runHook(bin, home, string(foreign), "hook", "claude", "UserPromptSubmit"); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			close(stop)
			hogs.Wait()
			if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			log, _ := os.ReadFile(filepath.Join(home, "hook.log"))
			if !strings.Contains(string(log), "no answer within 300ms") && !strings.Contains(string(log), "database is locked") {
				t.Errorf("no hook gave up while the database was locked: the lock proved nothing\n%s", log)
			}

			// The daemon records the spool by itself; without one, the next
			// command does.
			cfg := kaizen.DefaultConfig()
			cfg.Home, cfg.Project = home, "webapp"
			if mode == "daemon" {
				testkit.Eventually(t, "the daemon drains the spool", func() bool {
					entries, _ := filepath.Glob(filepath.Join(home, "spool", "*", "*.json"))
					return len(entries) == 0
				})
			} else if out, err := runHook(bin, home, "", "--project", "webapp", "task", "list"); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			e, err := kaizen.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			for _, id := range []string{"claude-cl-", "codex-cx-", "cursor-cu-", "opencode-oc-"} {
				id += mode
				task, err := e.GetTask(context.Background(), "webapp", id)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if task.Prompts != 2 || task.ToolCalls != 3 || task.ToolFailures != 1 || task.ErrorCount != 1 || task.RetryCount != 1 {
					t.Errorf("%s: prompts %d, tool calls %d, failures %d, errors %d, retries %d; want 2, 3, 1, 1, 1",
						id, task.Prompts, task.ToolCalls, task.ToolFailures, task.ErrorCount, task.RetryCount)
				}
				outs, err := e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{Project: "webapp", TaskID: id})
				if err != nil || outs.Total != 1 || !outs.Items[0].Inferred || !outs.Items[0].Success {
					t.Errorf("%s: outcomes %+v %v, want one inferred success", id, outs, err)
				}
			}
			if _, err := e.GetTask(context.Background(), "webapp", "claude-cu-"+mode); kaizen.KindOf(err) != kaizen.KindNotFound {
				t.Errorf("Cursor's run of a Claude hook made a task: %v", err)
			}
			if rejected, _ := filepath.Glob(filepath.Join(home, "spool", "rejected", "*")); len(rejected) > 0 {
				t.Errorf("events set aside: %v", rejected)
			}
		})
	}
}

// runHook runs the kaizen binary with --home and stdin, as a client does.
func runHook(bin, home, stdin string, args ...string) ([]byte, error) {
	out, stderr, err := runHookProcess(bin, nil, []byte(stdin), append([]string{"--home", home}, args...)...)
	if err != nil {
		return append(out, stderr...), fmt.Errorf("%v", err)
	}
	return out, nil
}

// A replayed Claude Code session, from SessionStart to SessionEnd through
// `kaizen hook`, records exactly one outcome by itself: success inferred
// (the last test run passed), the prompt's strategies as patterns, the
// first prompt as the task's description.
func TestReplayedClaudeSessionClosesItself(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	home, dir := t.TempDir(), filepath.Join(t.TempDir(), "webapp")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, st := range clientSessions(dir, "replay")[0] {
		payload, _ := json.Marshal(st.payload)
		if out, err := runHook(bin, home, string(payload), "hook", st.client, st.event); err != nil {
			t.Fatalf("%s: %v %s", st.event, err, out)
		}
	}
	out, err := runHook(bin, home, "", "--project", "webapp", "--json", "outcome", "list", "--bead-id", "claude-cl-replay")
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	var list struct {
		Items []struct {
			Success   bool     `json:"success"`
			Inferred  bool     `json:"inferred"`
			Inference string   `json:"inference"`
			Patterns  []string `json:"patterns"`
			Files     []string `json:"files_touched"`
			Errors    int      `json:"error_count"`
			Retries   int      `json:"retry_count"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d outcomes, want exactly one: %s", len(list.Items), out)
	}
	o := list.Items[0]
	if !o.Success || !o.Inferred || !strings.HasPrefix(o.Inference, "the last test run passed") || len(o.Patterns) != 1 ||
		o.Errors != 1 || o.Retries != 1 || len(o.Files) != 1 || o.Files[0] != dir+"/auth.go" {
		t.Errorf("outcome %+v", o)
	}
	out, err = runHook(bin, home, "", "--project", "webapp", "--json", "pattern", "show", o.Patterns[0])
	if err != nil || !strings.Contains(string(out), `"content": "Split by feature"`) {
		t.Errorf("the outcome's pattern: %v %s", err, out)
	}
	out, err = runHook(bin, home, "", "--project", "webapp", "--json", "task", "show", "claude-cl-replay")
	if err != nil || !strings.Contains(string(out), `"description": "Add OAuth login; split by feature"`) {
		t.Errorf("the task's description: %v %s", err, out)
	}
}
