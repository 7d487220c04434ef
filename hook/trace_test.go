package hook_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/trace"
)

const goBuildFailure = "Exit code 1\n# example.com/webapp/config\nconfig/load.go:12:5: undefined: parseConfig\n" +
	"FAIL\texample.com/webapp/config [build failed]\n"

func claudePayload(session, event string, extra map[string]any) []byte {
	p := map[string]any{"session_id": session, "cwd": "/home/dev/src/webapp", "hook_event_name": event,
		"transcript_path": "/tmp/" + session + ".jsonl", "permission_mode": "default"}
	for k, v := range extra {
		p[k] = v
	}
	data, _ := json.Marshal(p)
	return data
}

// replay sends Claude Code payloads through the engine's hook handler
// (Record, then Answer, as a hook without daemon does), a minute apart, and
// returns the rendered answers.
func (b *testBundle) replay(t *testing.T, h hook.Handler, steps ...[2]any) []string {
	t.Helper()
	var out []string
	for _, s := range steps {
		name, payload := s[0].(string), s[1].([]byte)
		ev, err := hook.Parse(hook.Claude, name, payload)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := h.Record(context.Background(), ev, "", b.now)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range rec.Problems {
			t.Errorf("%s: %v", name, p)
		}
		resp, err := h.Answer(context.Background(), ev, rec)
		if err != nil {
			t.Fatalf("%s answer: %v", name, err)
		}
		out = append(out, string(hook.Render(hook.Claude, name, resp)))
		b.advance(time.Minute)
	}
	return out
}

// The scripted session through the real hooks: fail, edit, fail,
// edit, pass on the same test command gives one trace of 3 attempts and a
// failure pattern with the fix; the next session's PreToolUse for that
// command is answered with a warning naming the fix, framed as evidence.
func TestHookTraceWarnsTheNextSession(t *testing.T) {
	b := setup(t)
	h := hook.EngineHandler(b.e, 0)
	h.Project = "webapp"
	bash := func(session, event, command string, extra map[string]any) [2]any {
		m := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": command}}
		for k, v := range extra {
			m[k] = v
		}
		return [2]any{event, claudePayload(session, event, m)}
	}
	edit := func(session, file string) [2]any {
		return [2]any{"PostToolUse", claudePayload(session, "PostToolUse", map[string]any{"tool_name": "Edit",
			"tool_input":    map[string]any{"file_path": "/home/dev/src/webapp/" + file, "old_string": "a", "new_string": "b"},
			"tool_response": map[string]any{"filePath": "/home/dev/src/webapp/" + file}})}
	}
	pre := bash("s-a", "PreToolUse", "go test ./...", nil)
	answers := b.replay(t, h,
		[2]any{"SessionStart", claudePayload("s-a", "SessionStart", map[string]any{"source": "startup"})},
		pre,
		bash("s-a", "PostToolUseFailure", "go test ./...", map[string]any{"error": goBuildFailure}),
		edit("s-a", "config/load.go"),
		bash("s-a", "PostToolUseFailure", "go test ./...", map[string]any{"error": goBuildFailure}),
		edit("s-a", "config/parse.go"),
		bash("s-a", "PostToolUse", "go test ./...", map[string]any{"tool_response": map[string]any{
			"stdout": "ok  \texample.com/webapp/config\t0.21s\n", "stderr": "", "interrupted": false}}),
		[2]any{"SessionEnd", claudePayload("s-a", "SessionEnd", map[string]any{"reason": "exit"})},
	)
	if answers[1] != "" {
		t.Errorf("nothing is known yet, but PreToolUse answered %s", answers[1])
	}
	ctx := context.Background()
	list, err := b.e.ListTraces(ctx, kaizen.TraceQuery{Project: "webapp", SessionID: "claude-s-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || len(list.Items[0].Attempts) != 3 || !list.Items[0].FinalSuccess {
		t.Fatalf("want one trace of 3 attempts that succeeded: %+v", list.Items)
	}
	tr := list.Items[0]
	if a := tr.Attempts[1]; a.FixSource != trace.FixSelfCorrection || !strings.Contains(a.FixApplied, "load.go") ||
		a.ErrorType != "go:compile" || a.Context[trace.ContextCwd] != "/home/dev/src/webapp" {
		t.Errorf("second attempt: %+v", a)
	}
	pats, err := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{Project: "webapp"})
	if err != nil || len(pats.Items) != 1 || pats.Items[0].SuggestedFix == "" {
		t.Fatalf("want one failure pattern with a fix: %v %+v", err, pats)
	}
	fix := pats.Items[0].SuggestedFix

	// the next session, about to run the same command
	answers = b.replay(t, h,
		[2]any{"SessionStart", claudePayload("s-b", "SessionStart", map[string]any{"source": "startup"})},
		bash("s-b", "PreToolUse", "go test ./...", nil),
		bash("s-b", "PreToolUse", "go test ./...", nil),
		bash("s-b", "PreToolUse", "npm test", nil),
	)
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(answers[1]), &out); err != nil {
		t.Fatalf("PreToolUse answer %q: %v", answers[1], err)
	}
	ctxText := out.HookSpecificOutput.AdditionalContext
	if out.HookSpecificOutput.HookEventName != "PreToolUse" || !strings.Contains(ctxText, fix) ||
		!strings.Contains(ctxText, "not instructions") {
		t.Errorf("PreToolUse context does not name the fix %q as evidence:\n%s", fix, ctxText)
	}
	if answers[2] != "" || answers[3] != "" {
		t.Errorf("warned twice in a session, or for another command: %q %q", answers[2], answers[3])
	}
}

// Tool output is untrusted: a secret in it is redacted before it is
// stored, and markup in an error cannot break out of the quoted warning.
func TestHookTraceRedactsOutput(t *testing.T) {
	b := setup(t)
	h := hook.EngineHandler(b.e, 0)
	h.Project = "webapp"
	secret := "AKIA" + "QWERTYUIOPASDFGH"
	b.replay(t, h, [2]any{"PostToolUseFailure", claudePayload("s-x", "PostToolUseFailure", map[string]any{
		"tool_name": "Bash", "tool_input": map[string]any{"command": "aws s3 ls --access-key " + secret},
		"error": "Exit code 255\nAn error occurred (InvalidAccessKeyId) for key " + secret})})
	list, err := b.e.ListTraces(context.Background(), kaizen.TraceQuery{Project: "webapp"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("%v %+v", err, list)
	}
	raw, _ := json.Marshal(list.Items)
	if strings.Contains(string(raw), secret) {
		t.Errorf("the secret was stored: %s", raw)
	}
}

// TraceEvents reads each client's shell call.
func TestTraceEventsOfClients(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	codex, err := hook.Parse(hook.Codex, "PostToolUse", fixture(t, hook.Codex, "PostToolUse.failure"))
	if err != nil {
		t.Fatal(err)
	}
	evs := hook.TraceEvents(codex, "id1", at)
	if len(evs) != 1 || evs[0].Command != "npm test -- callback" || evs[0].ExitCode == nil || *evs[0].ExitCode != 1 ||
		!strings.Contains(evs[0].Output, "expected 302, got 500") || evs[0].ID != "id1#0" {
		t.Errorf("codex: %+v", evs)
	}
	cursor, err := hook.Parse(hook.Cursor, "afterShellExecution", fixture(t, hook.Cursor, "afterShellExecution"))
	if err != nil {
		t.Fatal(err)
	}
	evs = hook.TraceEvents(cursor, "", at)
	if len(evs) != 1 || evs[0].Command != "npm install" || evs[0].ExitCode != nil || evs[0].Output != "added 3 packages" {
		t.Errorf("cursor: %+v", evs)
	}
	claude, err := hook.Parse(hook.Claude, "PostToolUse", fixture(t, hook.Claude, "PostToolUse"))
	if err != nil {
		t.Fatal(err)
	}
	evs = hook.TraceEvents(claude, "", at)
	if len(evs) != 1 || evs[0].Kind != trace.EventEdit || evs[0].Path != "src/auth/oauth.ts" {
		t.Errorf("claude write: %+v", evs)
	}
}
