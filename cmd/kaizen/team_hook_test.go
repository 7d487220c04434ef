package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/hook/hookcmd"
)

// TestHookDeliversTeamMessages: an agent session bound to a team member by
// KAIZEN_TEAM and KAIZEN_MEMBER gets a teammate's fix_required in the
// answer to its next tool call (kaizen hook claude PreToolUse), once,
// first answered by the hook itself (no daemon), then through a running
// daemon; a resumed session gets every message it has not acknowledged.
func TestHookDeliversTeamMessages(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	home := t.TempDir()
	const token = "team-hook-token-0123456789"
	kz := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--home", home, "--project", "webapp"}, args...)...)
		cmd.Env = append(os.Environ(), "KAIZEN_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kaizen %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	kz("team", "create", "crew", "--member", "rev:reviewer", "--member", "ann:executor")
	send := func(summary string) {
		kz("msg", "send", "--team", "crew", "--from", "rev", "--to", "ann", "--type", "fix_required", "--task", "impl",
			"--summary", summary, "--data", `{"suggestion":"check the error of Close"}`)
	}
	env := []string{"KAIZEN_TOKEN=" + token, "KAIZEN_TEAM=crew", "KAIZEN_MEMBER=ann", "KAIZEN_PROJECT=webapp", hookcmd.DebugEnv + "=1"}
	hookCall := func(event string, extra map[string]any) string {
		t.Helper()
		if extra == nil {
			extra = map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "go build"}}
		}
		out, stderr, err := runHookProcess(bin, env, claudeEvent("bound-1", event, extra), "--home", home, "hook", "claude", event)
		if err != nil || len(stderr) != 0 {
			t.Fatalf("%s: %v %s", event, err, stderr)
		}
		if len(out) == 0 {
			return ""
		}
		var doc struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%s printed %s: %v", event, out, err)
		}
		return doc.HookSpecificOutput.AdditionalContext
	}

	send("Close error ignored in store.go")
	got := hookCall("PreToolUse", nil)
	if !strings.Contains(got, `<team-message seq="1" type="fix_required" from="rev" task="impl">`) ||
		!strings.Contains(got, "Close error ignored") {
		t.Fatalf("direct PreToolUse did not deliver #1:\n%s", got)
	}
	if got := hookCall("PreToolUse", nil); strings.Contains(got, "team-message") {
		t.Errorf("#1 delivered twice:\n%s", got)
	}

	startDaemon(t, bin, home, token)
	send("second finding")
	got = hookCall("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "go vet"},
		"tool_response": map[string]any{"stdout": ""}})
	if !strings.Contains(got, `seq="2"`) || strings.Contains(got, `seq="1"`) {
		t.Errorf("daemon PostToolUse answer:\n%s", got)
	}
	kz("msg", "ack", "--team", "crew", "--member", "ann", "2")
	got = hookCall("SessionStart", map[string]any{"source": "resume"})
	if !strings.Contains(got, `seq="1"`) || strings.Contains(got, `seq="2"`) {
		t.Errorf("resumed session answer (want #1 only, #2 is acknowledged):\n%s", got)
	}
	log, err := os.ReadFile(filepath.Join(home, "hook.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "ok via direct") || !strings.Contains(string(log), "ok via daemon") {
		t.Errorf("want calls answered directly and by the daemon:\n%s", log)
	}
}
