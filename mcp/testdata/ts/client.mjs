// An independent MCP client for kaizen's server: the official TypeScript SDK
// drives `kaizen mcp` over stdio, or the streamable HTTP endpoint, through
// the learning loop, and asserts on what comes back. Run by mcp/ts_test.go:
//
//   node client.mjs '{"mode":"stdio","command":"/path/kaizen","args":["mcp"],"cwd":"…","root":"…","expectProject":"…"}'
//   node client.mjs '{"mode":"http","url":"http://127.0.0.1:…/mcp?project=p","expectProject":"p","restart":true}'
//
// It prints JSON lines on stdout ({"event": …}) and exits non-zero on the
// first failed assertion. With "restart", it prints {"event":"restart"}
// after the scenario, waits for a line on stdin (the server has been
// restarted meanwhile), and checks that the same client keeps working.
//
// callTool of the SDK validates every structured result against the tool's
// output schema, so each successful call also checks the output schema.

import assert from "node:assert/strict";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const cfg = JSON.parse(process.argv[2]);
const report = (event, data = {}) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");

const SEED_ANTI_PATTERN = "AVOID: Split by file type. Failed 5/7 times (71% failure rate)";

const LEARNING_TOOLS = [
  "record_outcome", "plan_guidance", "observe_pattern", "list_patterns", "get_pattern", "explain_pattern",
  "promote_pattern", "deprecate_pattern", "reset_pattern", "criterion_weights", "explain_criterion",
  "extract_patterns", "record_error", "resolve_error", "error_context", "error_stats", "list_errors",
  "list_outcomes", "get_outcome",
];

const client = new Client(
  { name: "kaizen-ts-test", version: "1.0.0" },
  { capabilities: cfg.root ? { roots: { listChanged: true } } : {} },
);
if (cfg.root) {
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: pathToFileURL(cfg.root).href, name: "workspace" }],
  }));
}

const transport = cfg.mode === "stdio"
  ? new StdioClientTransport({ command: cfg.command, args: cfg.args, cwd: cfg.cwd, env: cfg.env, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(cfg.url));

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const succeeded = new Set();
let calls = 0;

async function ok(name, args) {
  calls++;
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name}(${JSON.stringify(args)}) failed: ${text(res)}`);
  assert.ok(res.structuredContent && typeof res.structuredContent === "object", `${name}: no structured content`);
  assert.ok(text(res).trim().length > 0, `${name}: no text content`);
  succeeded.add(name);
  return { data: res.structuredContent, text: text(res) };
}

async function fail(name, args, ...wants) {
  calls++;
  const res = await client.callTool({ name, arguments: args });
  const t = text(res);
  assert.equal(res.isError, true, `${name}(${JSON.stringify(args)}) should fail, got: ${t}`);
  assert.equal(res.structuredContent, undefined, `${name}: an error result carries structured content`);
  for (const w of [...wants, "Hint:"]) {
    assert.ok(t.includes(w), `${name}: error text lacks ${JSON.stringify(w)}: ${t}`);
  }
  return t;
}

function checkSchemas(tools) {
  const names = tools.map((t) => t.name);
  for (const n of LEARNING_TOOLS) assert.ok(names.includes(n), `tool ${n} is missing`);
  for (const tool of tools) {
    assert.ok(tool.description && tool.description.length > 80, `${tool.name}: description too short`);
    assert.equal(tool.inputSchema.type, "object", `${tool.name}: input type`);
    assert.equal(tool.outputSchema?.type, "object", `${tool.name}: output schema`);
    for (const [p, s] of Object.entries(tool.inputSchema.properties ?? {})) {
      assert.ok(s.description && s.description.length >= 10, `${tool.name}.${p}: no description`);
      if (s.type === "integer") assert.ok(s.minimum >= 0, `${tool.name}.${p}: integer without minimum >= 0`);
    }
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  const ro = byName.record_outcome.inputSchema;
  for (const f of ["bead_id", "duration_ms", "error_count", "retry_count", "success", "files_touched", "strategy",
    "failure_mode", "failure_details", "patterns", "criteria", "timestamp", "project"]) {
    assert.ok(ro.properties[f], `record_outcome has no ${f}`);
  }
  assert.deepEqual([...ro.required].sort(), ["bead_id", "success"]);
  assert.equal(ro.properties.duration_ms.type, "integer");
  assert.equal(ro.properties.success.type, "boolean");
  assert.deepEqual(byName.record_error.inputSchema.properties.error_type.enum,
    ["validation", "timeout", "conflict", "tool_failure", "unknown"]);
  assert.deepEqual([...byName.record_error.inputSchema.required].sort(), ["bead_id", "message"]);
  assert.deepEqual(byName.list_patterns.inputSchema.properties.kind.enum, ["pattern", "anti_pattern"]);
  assert.deepEqual(byName.deprecate_pattern.inputSchema.required, ["pattern", "reason"]);
  assert.equal(byName.plan_guidance.annotations?.readOnlyHint, true);
  assert.equal(byName.reset_pattern.annotations?.destructiveHint, true);
  return names;
}

async function scenario(names) {
  // The seed's example: 2 successes then 5 failures of "Split by file type".
  let project;
  const results = [true, true, false, false, false, false, false];
  for (const [i, success] of results.entries()) {
    const { data } = await ok("record_outcome", {
      bead_id: `ts-${i}`, duration_ms: 120000, error_count: success ? 0 : 3, retry_count: success ? 0 : 2,
      success, files_touched: ["src/a.ts"], patterns: ["Split by file type"],
    });
    project = data.outcome.project;
    assert.equal(data.outcome.bead_id, `ts-${i}`);
  }
  assert.equal(project, cfg.expectProject, "the project of calls that name none");

  const anti = await ok("list_patterns", { kind: "anti_pattern" });
  assert.equal(anti.data.total, 1);
  assert.equal(anti.data.items[0].content, SEED_ANTI_PATTERN);
  assert.equal(anti.data.items[0].is_negative, true);

  const plan = await ok("plan_guidance", { task: "Add OAuth: split by file type, one file per subtask", limit: 5 });
  assert.ok(plan.text.includes(`- ${SEED_ANTI_PATTERN}`), plan.text);
  assert.ok(plan.text.includes("Your plan uses an anti-pattern"), plan.text);
  assert.equal(plan.data.anti_patterns[0].content, SEED_ANTI_PATTERN);

  // Errors of a task, its retry context, and an outcome counting them.
  const e1 = await ok("record_error", {
    bead_id: "ts-err", error_type: "validation", message: "Type error in src/auth.ts", tool_name: "tsc",
    context: "after adding OAuth types",
  });
  const e2 = await ok("record_error", { bead_id: "ts-err", error_type: "timeout", message: "tests timed out" });
  const ctx = await ok("error_context", { bead_id: "ts-err" });
  assert.ok(ctx.text.includes("## Previous Errors") && ctx.text.includes("**Type error in src/auth.ts**"), ctx.text);
  await ok("resolve_error", { id: e2.data.id });
  const stats = await ok("error_stats", { bead_id: "ts-err" });
  assert.deepEqual([stats.data.total, stats.data.unresolved], [2, 1]);
  const errs = await ok("list_errors", { unresolved_only: true, bead_id: "ts-err" });
  assert.equal(errs.data.items[0].id, e1.data.id);

  const ex = await ok("extract_patterns", { description: "按文件类型拆分,每个子任务一个文件" });
  assert.deepEqual(ex.data.labels, ["按文件类型拆分", "每个子任务一个文件"]);

  const out = await ok("record_outcome", {
    bead_id: "ts-err", duration_ms: 240000, success: true, strategy: "Split by feature",
    description: "handle shared types first", criteria: ["type_safe", "readable"],
  });
  assert.equal(out.data.outcome.error_count, 2, "error_count from the accumulator");
  assert.equal(out.data.pattern_updates.length, 2);
  const outs = await ok("list_outcomes", { bead_id: "ts-err" });
  assert.equal(outs.data.total, 1);
  await ok("get_outcome", { id: out.data.outcome.id });

  // Patterns by hand.
  const obs = await ok("observe_pattern", { pattern: "Split by feature", success: true, bead_id: "ts-obs" });
  assert.equal(obs.data.pattern.success_count, 2);
  const detail = await ok("get_pattern", { pattern: obs.data.pattern.id });
  assert.equal(detail.data.recent_observations.length, 2);
  const why = await ok("explain_pattern", { pattern: "Split by file type" });
  assert.equal(why.data.inverted, true);
  assert.ok(why.data.why.length > 0);
  const promoted = await ok("promote_pattern", { pattern: "Split by feature", reason: "validated in review" });
  assert.equal(promoted.data.pattern.maturity.state, "proven");
  await ok("deprecate_pattern", { pattern: "Handle shared types first", reason: "our types are generated" });
  const reset = await ok("reset_pattern", { pattern: "Split by file type" });
  assert.equal(reset.data.pattern.failure_count, 0);
  const gone = await ok("list_patterns", { kind: "anti_pattern" });
  assert.equal(gone.data.total, 0, "reset removes the anti-pattern");

  const crit = await ok("criterion_weights", {});
  assert.ok(crit.data.items.some((c) => c.criterion === "type_safe"));
  const cx = await ok("explain_criterion", { criterion: "type_safe" });
  assert.equal(cx.data.weight.criterion, "type_safe");

  // An exploration session: rounds in, phase and nudges out.
  const started = await ok("explore_start", { session_id: "ts-explore", strategy: "analyst" });
  assert.equal(started.data.strategy, "analyst");
  const round = await ok("explore_event", {
    session_id: "ts-explore", events: [
      { type: "tick" }, { type: "tool_call", name: "grep", args: { pattern: "OAuth" }, output: "src/auth.ts:12: oauth" },
      { type: "end_round" }],
  });
  assert.equal(round.data.session.iteration, 1);
  assert.ok(round.text.includes(`Phase ${round.data.session.phase}, round 1.`), round.text);
  const st = await ok("explore_state", { session_id: "ts-explore" });
  assert.equal(st.data.metrics.total_tool_calls, 1);
  assert.equal(st.data.metrics.unique_files, 1);
  await fail("explore_event", { session_id: "ts-explore", events: [{ type: "jump" }] }, "jump");

  // The experience system, the agent being the extractor (the server has
  // no chat model: generate_skill says so and names extraction_request).
  await experienceScenario();
  await teamScenario();

  // Failure learning: a trace recorded whole teaches a pattern that the
  // check before the next run names, with its fix.
  await traceScenario();

  // Bad input: isError results naming the field, never protocol errors.
  await fail("record_outcome", { bead_id: "ts-bad", duration_ms: -5, success: true }, '"duration_ms"', ">= 0");
  await fail("record_outcome", { duration_ms: 5, success: true }, '"bead_id"');
  await fail("record_outcome", { bead_id: "ts-bad", duration_ms: 5 }, '"success"');
  await fail("record_outcome", { bead_id: "ts-bad", duration_ms: 5, success: true, timestamp: "yesterday" }, '"timestamp"');
  await fail("record_error", { bead_id: "ts-bad", error_type: "oops", message: "x" }, '"error_type"');
  await fail("get_pattern", { pattern: "pattern-doesnotexist" }, "not_found");
  await fail("deprecate_pattern", { pattern: "Split by feature" }, '"reason"');
  const after = await ok("list_outcomes", { bead_id: "ts-bad" });
  assert.equal(after.data.total, 0, "rejected calls recorded nothing");

  const other = await ok("list_outcomes", { project: "ts-other-project" });
  assert.equal(other.data.total, 0, "projects are isolated");

  for (const n of names) {
    if (NEEDS_CHAT_MODEL.includes(n)) continue;
    assert.ok(succeeded.has(n), `tool ${n} was not called successfully`);
  }
  return project;
}

// Tools that need a chat model on the server; the scenario's server has none.
const NEEDS_CHAT_MODEL = ["generate_skill"];

async function traceScenario() {
  const cmd = "cargo build";
  const err = "error[E0432]: unresolved import `serde_json`\n --> src/main.rs:1:5";
  const at = (s) => `2026-01-02T09:00:0${s}Z`;
  const rec = await ok("trace_record", { trace: { task_id: "ts-trace", attempts: [
    { index: 1, timestamp: at(1), context: { command: cmd }, error: err },
    { index: 2, timestamp: at(2), context: { command: cmd }, error: err },
    { index: 3, timestamp: at(3), context: { command: cmd }, success: true, fix_applied: "add serde_json to Cargo.toml", fix_source: "self_correction" },
  ] } });
  assert.equal(rec.data.learned.length, 1, rec.text);
  const chk = await ok("trace_check", { command: cmd, session_id: "ts-trace-s" });
  assert.equal(chk.data.warnings.length, 1, chk.text);
  assert.ok(chk.text.includes("serde_json"), chk.text);
  const v = await ok("trace_verify", { command: cmd, expectation: { exit_code: 0 }, observation: { exit_code: 101, output: err } });
  assert.equal(v.data.action, "correct", v.text);
  await ok("trace_review", { bead_id: "ts-trace" });
  const pats = await ok("list_failure_patterns", { command_family: "cargo build" });
  assert.equal(pats.data.total, 1, pats.text);
  const trs = await ok("list_traces", { bead_id: "ts-trace" });
  assert.equal(trs.data.total, 1, trs.text);
  await fail("trace_check", { command: "" }, '"command"');
}

async function experienceScenario() {
  const task = "ts-proto";
  const turns = [
    { role: "user", content: "Add an email field to the User message.", turn_id: "t1" },
    { role: "assistant", content: "I edited gen/user.pb.go directly to add the field.", turn_id: "t1" },
    { role: "user", content: "不要改生成的文件. Don't edit generated files: change proto/user.proto and run make generate.", turn_id: "t2" },
    { role: "assistant", content: "Changed proto/user.proto and ran make generate; the tests pass.", turn_id: "t2" },
  ];
  const cap = await ok("capture", { bead_id: task, source: "ts", turns });
  assert.equal(cap.data.stored, 4);
  const sigs = await ok("extract_signals", { bead_id: task, extractor: "rules" });
  assert.ok(sigs.data.signals.length > 0, sigs.text);
  const sigList = await ok("list_signals", { bead_id: task });
  assert.equal(sigList.data.total, sigs.data.signals.length);
  const noModel = await ok("extract_experience", { bead_id: task });
  assert.ok(noModel.text.includes("extraction_request"), noModel.text);

  const req = await ok("extraction_request", { bead_id: task });
  assert.equal(req.data.schema.type, "object");
  assert.ok(req.text.includes("Call extraction_submit"), req.text);
  const sub = await ok("extraction_submit", {
    bead_id: task, kind: "experience", result: {
      goal: "Add an email field to the User message",
      working_approach: "change proto/user.proto, then run make generate",
      transferable_heuristics: [{
        kind: "avoid", trigger: "changing protobuf generated code under gen/",
        rule: "never edit generated files under gen/; change the .proto file and run make generate",
        why: "the generator overwrites hand edits", evidence: "不要改生成的文件",
      }],
    },
  });
  const hid = sub.data.experience.heuristics[0].heuristic_id;
  await ok("get_experience", { bead_id: task });
  const exps = await ok("list_experiences", {});
  assert.equal(exps.data.total, 1);
  const hs = await ok("list_heuristics", { status: ["candidate"] });
  assert.equal(hs.data.items[0].id, hid);
  await ok("get_heuristic", { heuristic_id: hid });

  const rec = await ok("recall", { query: "edit the generated protobuf files under gen/", bead_id: "ts-next" });
  assert.equal(rec.data.heuristics[0].id, hid);
  assert.ok(rec.text.startsWith("## Experience from past tasks (kaizen)"), rec.text);
  const fb = await ok("heuristic_feedback", { heuristic_id: hid, verdict: "helpful", recall_id: rec.data.recall_id });
  assert.equal(fb.data.heuristic.helpful_count, 1);
  const recalls = await ok("list_recalls", { bead_id: "ts-next" });
  assert.equal(recalls.data.total, 1);

  await ok("extraction_request", { bead_id: task, kind: "skill" });
  const skill = await ok("extraction_submit", {
    bead_id: task, kind: "skill", result: {
      name: "regenerate-protobuf-code", description: "Change protobuf messages through their .proto files.",
      when_to_use: "When a change touches generated protobuf code.", steps: ["Edit proto/*.proto", "Run make generate"],
      heuristic_ids: [hid],
    },
  });
  const name = skill.data.skill.skill.name;
  await ok("set_skill_status", { skill: name, status: "active" });
  const skills = await ok("list_skills", { status: "active" });
  assert.equal(skills.data.total, 1);
  const doc = await ok("get_skill", { skill: name });
  assert.ok(doc.text.includes("make generate"), doc.text);
  await fail("generate_skill", { bead_id: task }, "no chat model", "extraction_request");
  const archived = await ok("heuristic_action", { heuristic_id: hid, action: "archive", reason: "moved to buf" });
  assert.equal(archived.data.heuristic.status, "archived");
  await fail("heuristic_feedback", { heuristic_id: hid, verdict: "fine" }, '"verdict"');
  // The data the user owns: correct a heuristic, read the digest, forget it.
  const edited = await ok("edit_heuristic", { heuristic_id: hid, why: "generated files are overwritten" });
  assert.equal(edited.data.heuristic.why, "generated files are overwritten");
  const learned = await ok("learned", { days: 7 });
  assert.ok(learned.data.heuristics_created.length >= 1, learned.text);
  const curve = await ok("learning_curve", { window: 5 });
  assert.equal(curve.data.window, 5, curve.text);
  const forgot = await ok("forget", { kind: "heuristic", id: hid });
  assert.equal(forgot.data.forgotten.id, hid);
  await fail("forget", { kind: "heuristic", id: hid }, "not_found");
  // The retention policy applied on demand (the recalls above are kept:
  // they are recent and few).
  const gc = await ok("gc", {});
  assert.equal(gc.data.recalls_pruned, 0, gc.text);
  assert.equal(gc.data.policy.recall_items, "injected", gc.text);
}

// The team engine: a team, a task claimed under a lease, reported with its
// epoch (a stale epoch is refused), a message delivered and acknowledged.
async function teamScenario() {
  const agent = { kind: "agent" };
  await ok("team_create", { name: "ts-crew", members: [
    { name: "lead", role: "coordinator", worker: agent }, { name: "ann", role: "executor", worker: agent }] });
  await ok("team_show", { team: "ts-crew" });
  const teams = await ok("team_list", {});
  assert.deepEqual(teams.data.items.map((t) => t.name), ["ts-crew"]);
  assert.equal(teams.data.total, 1);
  await ok("team_task_create", { team: "ts-crew", id: "t1", subject: "implement", metadata: { size: 1 } });
  await ok("team_task_create", { team: "ts-crew", id: "t2", subject: "later", blocked_by: ["t1"] });
  const claim = await ok("team_claim", { team: "ts-crew", member: "ann" });
  assert.equal(claim.data.task.id, "t1");
  await ok("team_heartbeat", { team: "ts-crew", member: "ann", task: "t1", epoch: claim.data.epoch, progress: { percent: 50 } });
  await fail("team_report", { team: "ts-crew", member: "ann", task: "t1", epoch: claim.data.epoch + 1, status: "completed" }, "stale");
  await ok("team_report", { team: "ts-crew", member: "ann", task: "t1", epoch: claim.data.epoch, status: "completed", result: { ok: true } });
  await ok("team_task_get", { team: "ts-crew", task: "t1" });
  await ok("team_task_update", { team: "ts-crew", task: "t2", status: "cancelled" });
  const tasks = await ok("team_task_list", { team: "ts-crew" });
  assert.deepEqual(tasks.data.items.map((t) => t.id), ["t1", "t2"]);
  assert.equal(tasks.data.total, 2);
  assert.equal(tasks.data.offset, 0);
  await ok("team_send", { team: "ts-crew", from: "lead", to: "ann", type: "fix_required", data: { suggestion: "rename" } });
  const inbox = await ok("team_inbox", { team: "ts-crew", member: "ann" });
  assert.equal(inbox.data.items.length, 1);
  await ok("team_ack", { team: "ts-crew", member: "ann", seqs: [inbox.data.items[0].message.seq] });
  const run = await ok("team_start_pattern", { team: "ts-crew", pattern: "CP-2", input: { artifact: "login.go", reviewer: "executor" } });
  assert.equal(run.data.run.state, "REVIEW");
  await ok("team_run_state", { run: run.data.run.id });
  const runs = await ok("team_run_list", { team: "ts-crew" });
  assert.equal(runs.data.items.length, 1);
  assert.equal(runs.data.items[0].id, run.data.run.id);
  assert.equal(runs.data.total, 1);
  await ok("team_run_cancel", { run: run.data.run.id, reason: "done testing" });
  await ok("team_select_pattern", { task_type: "feature", complexity: "high", risk_level: "low" });
  await ok("team_dissolve", { team: "ts-crew" });
}

async function afterRestart() {
  const outs = await ok("list_outcomes", { limit: 1000 });
  assert.equal(outs.data.total, 8, "the outcomes recorded before the restart");
  await ok("record_outcome", { bead_id: "ts-after-restart", duration_ms: 1000, success: true, patterns: ["Split by feature"] });
  const plan = await ok("plan_guidance", { task: "split by feature" });
  assert.ok(plan.text.includes("Split by feature"), plan.text);
}

function nextLine() {
  const rl = createInterface({ input: process.stdin });
  return new Promise((resolve) => rl.once("line", (line) => { rl.close(); resolve(line); }));
}

try {
  await client.connect(transport);
  report("connected", { server: client.getServerVersion() });
  const { tools } = await client.listTools();
  const names = checkSchemas(tools);
  const project = await scenario(names);
  if (cfg.restart) {
    report("restart");
    await nextLine();
    await afterRestart();
  }
  report("done", { tools: names, calls, project });
  await client.close();
  process.exit(0);
} catch (err) {
  process.stderr.write(`FAIL: ${err?.stack ?? err}\n`);
  report("failed", { error: String(err?.message ?? err) });
  try { await client.close(); } catch { /* already broken */ }
  process.exit(1);
}
