package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
)

// The security suite (go test ./... -run Security) for hooks: every event
// of every client, given malformed JSON, a NUL byte, a batch, null, and
// oversize strings, exits without crashing and without blocking the agent
// (a hook's failure must never stop the user's session), and the
// malformed events record nothing.
func TestSecurityEveryHookEventBadInput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	big := strings.Repeat("x", 2<<20)
	malformed := map[string]string{
		"not json":     "not json",
		"null":         "null",
		"batch":        `[{"session_id":"s","hook_event_name":"Stop"}]`,
		"nul byte":     "{\"session_id\":\"s\x00\"}\x00",
		"duplicate":    `{"session_id":"a","session_id":"b","hook_event_name":"Stop","cwd":"/x","cwd":"/y"}`,
		"invalid utf8": "{\"session_id\":\"\xff\",\"prompt\":\"\xfe\"}",
		"truncated":    `{"session_id":"s","prompt":`,
		"empty":        "",
	}
	clients := []hook.Client{hook.Claude, hook.Codex, hook.Cursor, hook.Opencode}
	for _, c := range clients {
		for _, ev := range hook.AllEvents(c) {
			for what, in := range malformed {
				var stdout, stderr bytes.Buffer
				code := run([]string{"--home", home, "--project", "webapp", "hook", string(c), ev}, strings.NewReader(in), &stdout, &stderr)
				if code != 0 {
					t.Errorf("%s %s %s: exit %d: %s", c, ev, what, code, stderr.String())
				}
			}
		}
	}
	cfg := kaizen.DefaultConfig()
	cfg.Home, cfg.Project = home, "webapp"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := e.ListTasks(context.Background(), kaizen.TaskQuery{})
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	if l.Total != 0 {
		t.Errorf("malformed hook events recorded %d task(s): %+v", l.Total, l.Items)
	}
	// Oversize but well-formed events: no crash, no failure of the agent.
	for _, c := range clients {
		for _, ev := range hook.AllEvents(c) {
			payload := claudeEvent("big-"+ev, ev, map[string]any{"prompt": big, "tool_name": big[:300_000],
				"tool_input": map[string]any{"command": big}, "error": big, "last_assistant_message": big})
			var stdout, stderr bytes.Buffer
			if code := run([]string{"--home", home, "--project", "webapp", "hook", string(c), ev}, bytes.NewReader(payload), &stdout, &stderr); code != 0 {
				t.Errorf("%s %s oversize: exit %d: %.300s", c, ev, code, stderr.String())
			}
		}
	}
}
