package hook_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kaizenhq/kaizen/hook"
)

// fixture reads testdata/<client>/<event>[.<variant>].json.
func fixture(t *testing.T, c hook.Client, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", string(c), file+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// eventName is the event of a fixture file name (the part before a variant).
func eventName(file string) string {
	if i := strings.Index(file, ".json"); i >= 0 {
		file = file[:i]
	}
	for _, c := range hook.Clients {
		for _, e := range hook.AllEvents(c) {
			if file == e {
				return e
			}
		}
	}
	name, _, _ := strings.Cut(file, ".")
	if strings.HasPrefix(file, "session.") || strings.HasPrefix(file, "tool.") || strings.HasPrefix(file, "chat.") {
		return file
	}
	return name
}

// Every fixture of every client parses into the task event it stands for.
func TestParseFixtures(t *testing.T) {
	t.Parallel()
	const (
		claudeSession = "9f0c1e52-6a8e-4c55-b1d2-2f0a6d3c7e11"
		codexSession  = "019a2f4c-7d1e-7c3b-9a55-0d6b3e2f8c41"
		cursorSession = "5c0b7a8e-2f7d-4f0e-9a0e-1d3c8e6f4b21"
		opencodeSess  = "ses_6f2a9c1d4b7e8f0a3c5d"
		dir           = "/home/dev/src/webapp"
	)
	tests := []struct {
		client hook.Client
		file   string
		want   hook.Event
	}{
		{hook.Claude, "SessionStart", hook.Event{Kind: hook.KindStart, SessionID: claudeSession, Source: "startup"}},
		{hook.Claude, "UserPromptSubmit", hook.Event{Kind: hook.KindPrompt, SessionID: claudeSession,
			Prompt: "Add OAuth login. Plan: split by file type, one file per subtask."}},
		{hook.Claude, "PreToolUse", hook.Event{Kind: hook.KindPreTool, SessionID: claudeSession, ToolName: "Bash"}},
		{hook.Claude, "PostToolUse", hook.Event{Kind: hook.KindTool, SessionID: claudeSession, ToolName: "Write",
			Files: []string{"/home/dev/src/webapp/src/auth/oauth.ts"}}},
		{hook.Claude, "PostToolUseFailure", hook.Event{Kind: hook.KindToolFailure, SessionID: claudeSession, ToolName: "Bash",
			Error: "Command exited with non-zero status code 1", Signal: "test_fail"}},
		// an interrupt by the user is a tool call, not a failure
		{hook.Claude, "PostToolUseFailure.interrupt", hook.Event{Kind: hook.KindTool, SessionID: claudeSession, ToolName: "Bash"}},
		{hook.Claude, "Stop", hook.Event{Kind: hook.KindStop, SessionID: claudeSession,
			LastMessage: "The tests fail in src/auth/oauth.test.ts; I need the client secret format."}},
		{hook.Claude, "StopFailure", hook.Event{Kind: hook.KindStop, SessionID: claudeSession, Signal: "stop_error",
			LastMessage: "I was about to run the tests."}},
		{hook.Claude, "PreCompact", hook.Event{Kind: hook.KindActivity, SessionID: claudeSession, Source: "compact"}},
		{hook.Claude, "SessionEnd", hook.Event{Kind: hook.KindEnd, SessionID: claudeSession, EndReason: "prompt_input_exit"}},

		{hook.Codex, "SessionStart", hook.Event{Kind: hook.KindStart, SessionID: codexSession, Source: "startup"}},
		{hook.Codex, "UserPromptSubmit", hook.Event{Kind: hook.KindPrompt, SessionID: codexSession, Prompt: "Fix the failing OAuth callback test"}},
		{hook.Codex, "PostToolUse", hook.Event{Kind: hook.KindTool, SessionID: codexSession, ToolName: "Bash"}},
		// Codex has no failure event: a non-zero exit code in the response is one
		{hook.Codex, "PostToolUse.failure", hook.Event{Kind: hook.KindToolFailure, SessionID: codexSession, ToolName: "Bash",
			Error: "Exit code: 1\nWall time: 3.2 seconds\nOutput:\nFAIL src/auth/callback.test.ts\n  expected 302, got 500\n", Signal: "test_fail"}},
		{hook.Codex, "PostToolUse.mcp-error", hook.Event{Kind: hook.KindToolFailure, SessionID: codexSession, ToolName: "mcp__github__get_issue"}},
		{hook.Codex, "Stop", hook.Event{Kind: hook.KindStop, SessionID: codexSession, LastMessage: "The callback test passes now."}},
		{hook.Codex, "PreCompact", hook.Event{Kind: hook.KindActivity, SessionID: codexSession, Source: "compact"}},
		{hook.Codex, "SessionEnd", hook.Event{Kind: hook.KindEnd, SessionID: codexSession, EndReason: "other"}},

		{hook.Cursor, "sessionStart", hook.Event{Kind: hook.KindStart, SessionID: cursorSession}},
		{hook.Cursor, "beforeSubmitPrompt", hook.Event{Kind: hook.KindPrompt, SessionID: cursorSession,
			Prompt: "Split by file type and add the OAuth callback"}},
		{hook.Cursor, "postToolUse", hook.Event{Kind: hook.KindTool, SessionID: cursorSession, ToolName: "Read"}},
		{hook.Cursor, "postToolUseFailure", hook.Event{Kind: hook.KindToolFailure, SessionID: cursorSession, ToolName: "Shell",
			Error: "Command failed with exit code 1: 1 failing test", Signal: "test_fail"}},
		{hook.Cursor, "afterShellExecution", hook.Event{Kind: hook.KindTool, SessionID: cursorSession, ToolName: "Shell"}},
		{hook.Cursor, "stop", hook.Event{Kind: hook.KindStop, SessionID: cursorSession, Signal: "stop_completed"}},
		{hook.Cursor, "afterFileEdit", hook.Event{Kind: hook.KindActivity, SessionID: cursorSession,
			Files: []string{"/home/dev/src/webapp/src/auth/callback.ts"}}},
		{hook.Cursor, "preCompact", hook.Event{Kind: hook.KindActivity, SessionID: cursorSession, Source: "compact"}},
		{hook.Cursor, "sessionEnd", hook.Event{Kind: hook.KindEnd, SessionID: cursorSession, EndReason: "user_closed", Signal: "stop_completed"}},

		{hook.Opencode, "session.created", hook.Event{Kind: hook.KindStart, SessionID: opencodeSess}},
		{hook.Opencode, "chat.message", hook.Event{Kind: hook.KindPrompt, SessionID: opencodeSess, Prompt: "Add OAuth; split by file type"}},
		{hook.Opencode, "tool.execute.after", hook.Event{Kind: hook.KindTool, SessionID: opencodeSess, ToolName: "edit"}},
		{hook.Opencode, "tool.failed", hook.Event{Kind: hook.KindToolFailure, SessionID: opencodeSess, ToolName: "bash", Error: "npm test exited with code 1"}},
		{hook.Opencode, "session.idle", hook.Event{Kind: hook.KindStop, SessionID: opencodeSess}},
		{hook.Opencode, "file.edited", hook.Event{Kind: hook.KindActivity, SessionID: opencodeSess, Files: []string{"/home/dev/src/webapp/src/auth/oauth.ts"}}},
		{hook.Opencode, "session.compacted", hook.Event{Kind: hook.KindActivity, SessionID: opencodeSess, Source: "compact"}},
		{hook.Opencode, "session.end", hook.Event{Kind: hook.KindEnd, SessionID: opencodeSess, EndReason: "deleted"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.client)+"/"+tc.file, func(t *testing.T) {
			t.Parallel()
			name := eventName(tc.file)
			got, err := hook.Parse(tc.client, name, fixture(t, tc.client, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Client, tc.want.Name, tc.want.Dir = tc.client, name, dir
			if tc.want.Kind == hook.KindToolFailure && tc.want.Error == "" {
				tc.want.Error = got.Error // checked below: the raw MCP result
				if !strings.Contains(got.Error, "issue 42 not found") {
					t.Errorf("error %q does not carry the MCP result", got.Error)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(hook.Event{}, "ToolInput", "ToolResponse")); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

// Every event setup installs has a fixture, so no event goes untested.
func TestEveryInstalledEventHasAFixture(t *testing.T) {
	t.Parallel()
	for _, c := range hook.Clients {
		for _, e := range hook.Events(c) {
			if _, err := os.Stat(filepath.Join("testdata", string(c), e+".json")); err != nil {
				t.Errorf("%s %s: no fixture", c, e)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		client hook.Client
		event  string
		data   string
		want   string
	}{
		{hook.Claude, "SessionStart", `not json`, "not a JSON object"},
		{hook.Claude, "SessionStart", `[1, 2]`, "not a JSON object"},
		{hook.Claude, "SessionStart", `null`, "null"},
		{hook.Claude, "NoSuchEvent", `{}`, `unknown claude event "NoSuchEvent"`},
		{hook.Cursor, "SessionStart", `{}`, "use one of afterFileEdit, afterMCPExecution"},
		{hook.Claude, "Stop", `{"cwd": "/x"}`, "no session id"},
		{hook.Cursor, "stop", `{"conversation_id": "  "}`, "no session id"},
	} {
		_, err := hook.Parse(tc.client, tc.event, []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s %s: error %v, want it to contain %q", tc.client, tc.event, tc.data, err, tc.want)
		}
	}
	if _, err := hook.Parse(hook.Claude, "Stop", []byte(`{}`)); !errors.Is(err, hook.ErrNoSession) {
		t.Errorf("no session: %v", err)
	}
}

// A field of an unexpected type reads as absent instead of failing the
// whole payload: clients change their payloads.
func TestParseToleratesUnexpectedTypes(t *testing.T) {
	t.Parallel()
	ev, err := hook.Parse(hook.Claude, "PostToolUseFailure",
		[]byte(`{"session_id": "s", "cwd": 42, "tool_name": ["x"], "error": {"code": 1, "text": "boom"}, "is_interrupt": "no"}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Dir != "" || ev.ToolName != "" || ev.Kind != hook.KindToolFailure || !strings.Contains(ev.Error, "boom") {
		t.Errorf("event %+v", ev)
	}
}

func TestTaskID(t *testing.T) {
	t.Parallel()
	if got := hook.TaskID(hook.Claude, "abc-123"); got != "claude-abc-123" {
		t.Errorf("TaskID = %q", got)
	}
	got := hook.TaskID(hook.Cursor, " a b\tc\n"+strings.Repeat("x", 400))
	if strings.ContainsAny(got, " \t\n") || len(got) > 200 || !strings.HasPrefix(got, "cursor-a_b_c_") {
		t.Errorf("TaskID of an odd session id = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range hook.Clients {
		entries, _ := os.ReadDir(filepath.Join("testdata", string(c)))
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join("testdata", string(c), e.Name()))
			f.Add(string(c), eventName(e.Name()), data)
		}
	}
	f.Fuzz(func(t *testing.T, client, event string, data []byte) {
		c, err := hook.ParseClient(client)
		if err != nil {
			return
		}
		ev, err := hook.Parse(c, event, data)
		if err != nil {
			return
		}
		if ev.Client != c || ev.Name != event || ev.Kind == "" || strings.TrimSpace(ev.SessionID) == "" {
			t.Fatalf("parsed event %+v", ev)
		}
		if id := ev.TaskID(); strings.ContainsAny(id, "\n\r\t") || strings.TrimSpace(id) != id || len(id) > 200 {
			t.Fatalf("task id %q", id)
		}
	})
}
