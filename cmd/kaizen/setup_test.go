package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// The opencode plugin that setup writes, loaded by Node the way opencode
// loads it and driven through a session, calls `kaizen hook opencode` for
// every event, and injects kaizen's answers into the system prompt.
func TestOpencodePluginDrivesHooks(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	bin := kaizenBinary(t)
	dir, home := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	setup := exec.Command(bin, "--home", home, "setup", "opencode", "--dir", dir, "--command", bin)
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	project := filepath.Base(dir)
	for i := range 3 {
		out, err := exec.Command(bin, "--home", home, "--project", project, "outcome", "record", "--task", "bd-"+string(rune('1'+i)),
			"--duration", "5m", "--success=false", "--strategy", "Split by file type").CombinedOutput()
		if err != nil {
			t.Fatalf("seed: %v\n%s", err, out)
		}
	}
	// Node loads the plugin as an ES module, as opencode's Bun does.
	plugin, err := os.ReadFile(filepath.Join(dir, ".opencode", "plugins", "kaizen.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.mjs"), plugin, 0o644); err != nil {
		t.Fatal(err)
	}
	harness := `import { KaizenPlugin } from "./plugin.mjs"
const dir = process.argv[2]
const hooks = await KaizenPlugin({ directory: dir, worktree: dir })
const tool = (callID, status) => ({ event: { type: "message.part.updated", properties: { part: {
  type: "tool", tool: "bash", callID, sessionID: "ses_1", state: { status, error: "npm test exited with code 1" } } } } })
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1" } } } })
await hooks["chat.message"]({ sessionID: "ses_1" }, { message: {}, parts: [
  { type: "text", text: "Plan: split by file type" }, { type: "text", text: "ignored", synthetic: true }] })
await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_1", callID: "c1" }, { title: "", output: "", metadata: {} })
await hooks.event(tool("c2", "running"))
await hooks.event(tool("c2", "error"))
await hooks.event(tool("c2", "error"))
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } })
const out = { system: ["base"] }
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1" }, out)
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_2" }, { system: [] })
console.log(JSON.stringify(out.system))
`
	if err := os.WriteFile(filepath.Join(dir, "harness.mjs"), []byte(harness), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "harness.mjs", dir)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KAIZEN_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "## Learned guidance") || !strings.Contains(string(out), "Your plan uses an anti-pattern") {
		t.Errorf("system prompt: %s", out)
	}
	if log, err := os.ReadFile(filepath.Join(home, "hook.log")); err == nil {
		t.Errorf("hook problems:\n%s", log)
	}

	cfg := kaizen.DefaultConfig()
	cfg.Home, cfg.Project = home, project
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	task, err := e.GetTask(context.Background(), project, "opencode-ses_1")
	if err != nil {
		t.Fatal(err)
	}
	if task.Prompts != 1 || task.ToolCalls != 2 || task.ToolFailures != 1 || task.Description != "Plan: split by file type" || task.Source != "opencode" {
		t.Errorf("task %+v", task)
	}
}
