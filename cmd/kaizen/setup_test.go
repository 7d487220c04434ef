package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
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
	setup := exec.Command(bin, "--home", home, "setup", "opencode", "--dir", dir, "--command", bin, "--allow-temporary")
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
	harness := `import plugin from "./plugin.mjs"
if (plugin.id !== "kaizen" || typeof plugin.server !== "function" || typeof plugin.setup !== "function") {
  throw new Error("the default export must be {id, server, setup}")
}
const dir = process.argv[2]
const hooks = await plugin.server({ directory: dir, worktree: dir })
const tool = (callID, status) => ({ event: { type: "message.part.updated", properties: { part: {
  type: "tool", tool: "bash", callID, sessionID: "ses_1", state: { status, error: "npm test exited with code 1" } } } } })
await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1" } } } })
await hooks["chat.message"]({ sessionID: "ses_1" }, { message: {}, parts: [
  { type: "text", text: "Plan: split by file type" }, { type: "text", text: "ignored", synthetic: true }] })
await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_1", callID: "c1" }, { args: { filePath: "/x" } })
await hooks["tool.execute.after"]({ tool: "read", sessionID: "ses_1", callID: "c1" }, { title: "", output: "", metadata: {} })
await hooks.event(tool("c2", "running"))
await hooks.event(tool("c2", "error"))
await hooks.event(tool("c2", "error"))
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } })
const out = { system: ["base"] }
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_1" }, out)
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_2" }, { system: [] })
console.log(JSON.stringify(out.system))
// the session ends: kaizen records its outcome (node waits for the call)
await hooks.event({ event: { type: "session.deleted", properties: { info: { id: "ses_1" } } } })
`
	if err := os.WriteFile(filepath.Join(dir, "harness.mjs"), []byte(harness), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "harness.mjs", dir)
	cmd.Dir = dir
	// answers within the test's patience, however loaded the machine
	cmd.Env = append(os.Environ(), "KAIZEN_HOME="+home, "KAIZEN_HOOKS_TIMEOUT=2m", "KAIZEN_PLUGIN_TIMEOUT_MS=120000")
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
	outs, err := e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{Project: project, TaskID: "opencode-ses_1"})
	if err != nil || outs.Total != 1 || !outs.Items[0].Inferred {
		t.Fatalf("the ended session's outcome: %+v %v", outs, err)
	}
	if o := outs.Items[0]; len(o.Patterns) != 1 {
		t.Errorf("the prompt's strategy as the outcome's pattern: %+v", o)
	}
}

// The plugin's opencode 2.x entry point, driven through the V2 plugin
// context as its documentation describes it (ctx.session.hook "prompt" and
// "context", ctx.tool.hook "execute.after", ctx.event.subscribe): it
// records the session and injects kaizen's answers as system parts; with a
// partial context (the catalog) it does nothing.
func TestOpencodePluginV2EntryPoint(t *testing.T) {
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
	if err := os.WriteFile(filepath.Join(dir, "plugin.mjs"), hook.OpencodePlugin([]string{bin}), 0o644); err != nil {
		t.Fatal(err)
	}
	project := filepath.Base(dir)
	for i := range 3 {
		out, err := exec.Command(bin, "--home", home, "--project", project, "outcome", "record", "--task", "bd-"+string(rune('1'+i)),
			"--duration", "5m", "--success=false", "--strategy", "Split by file type").CombinedOutput()
		if err != nil {
			t.Fatalf("seed: %v\n%s", err, out)
		}
	}
	harness := `import plugin from "./plugin.mjs"
const dir = process.argv[2]
// the catalog's partial context: no session domain, nothing registered
await plugin.setup({ options: {}, agent: {}, catalog: {} })
const hooks = {}
const queue = []
let wake
const ctx = {
  location: { directory: dir },
  session: { hook: (name, fn) => { hooks["session." + name] = fn; return { dispose() {} } } },
  tool: { hook: (name, fn) => { hooks["tool." + name] = fn; return { dispose() {} } } },
  event: { subscribe: () => ({ async *[Symbol.asyncIterator]() {
    for (;;) { while (queue.length) { const e = queue.shift(); if (!e) return; yield e } await new Promise((r) => (wake = r)) }
  } }) },
}
const cleanup = await plugin.setup(ctx)
const emit = (e) => { queue.push(e); if (wake) wake() }
await hooks["session.prompt"]({ sessionID: "ses_9", messageID: "m1", prompt: { text: "Plan: split by file type" }, delivery: "queued" })
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_9", id: "c1", input: { command: "npm test" }, status: "error", error: "1 failing" })
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_9", id: "c2", input: { command: "npm test" }, status: "completed", result: "ok" })
const e = { sessionID: "ses_9", system: [{ type: "text", text: "base" }] }
await hooks["session.context"](e)
console.log(JSON.stringify(e.system))
emit({ type: "session.deleted", properties: { sessionID: "ses_9" } })
emit(null)
// the subscription's loop runs on microtasks: let it take both events
await new Promise((r) => setImmediate(r))
cleanup()
`
	if err := os.WriteFile(filepath.Join(dir, "harness.mjs"), []byte(harness), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "harness.mjs", dir)
	cmd.Dir = dir
	// answers within the test's patience, however loaded the machine
	cmd.Env = append(os.Environ(), "KAIZEN_HOME="+home, "KAIZEN_HOOKS_TIMEOUT=2m", "KAIZEN_PLUGIN_TIMEOUT_MS=120000")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `{"type":"text","text":"## Learned guidance`) || !strings.Contains(string(out), "anti-pattern") {
		t.Errorf("system parts: %s", out)
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
	outs, err := e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{Project: project, TaskID: "opencode-ses_9"})
	if err != nil || outs.Total != 1 || !outs.Items[0].Inferred || !outs.Items[0].Success || outs.Items[0].ErrorCount != 1 {
		t.Fatalf("the V2 session's inferred outcome (the last test run passed): %+v %v", outs, err)
	}
}
