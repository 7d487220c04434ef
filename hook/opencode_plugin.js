// kaizen plugin for opencode 1.x and 2.x (one file for both generations).
// kaizen-setup: managed file. Written by `kaizen setup opencode`, removed by
// `kaizen setup opencode --uninstall`; setup overwrites local edits.
//
// opencode has no command hooks, so this plugin runs
// `kaizen hook opencode <event>` with a JSON payload on stdin
// ({session_id, cwd, prompt?, tool_name?, tool_input?, error?, files?,
// reason?}) for:
//   session.created     the session becomes a kaizen task; kaizen answers
//                       with what it learned for the project
//   chat.message        a user prompt; kaizen answers with warnings when
//                       the prompt uses an anti-pattern, and what it recalls
//   tool.execute.after  a tool call
//   tool.failed         a tool call that ended in an error
//   file.edited         a file the agent edited
//   session.compacted   the context was compacted
//   session.idle        the agent stopped
//   session.end         the session was deleted: kaizen records its outcome
// kaizen's answers are added to the system prompt of the session's
// following requests. kaizen never fails or blocks the agent: a call that
// fails or takes longer than 3 seconds is ignored (problems are logged in
// kaizen's hook.log); kaizen keeps every event it received even when it
// answers too late.
//
// opencode 1.x (1.18.28 and later) calls `server` of the default export;
// opencode 2.x calls `setup` (and ignores `server`). Both register the same
// calls through each generation's own hooks.
import { spawn } from "node:child_process"

const KAIZEN = __KAIZEN_COMMAND__
// KAIZEN_PLUGIN_TIMEOUT_MS lengthens the wait (tests on a loaded machine).
const TIMEOUT_MS = Number((globalThis.process && process.env.KAIZEN_PLUGIN_TIMEOUT_MS) || 0) || 3000

function callKaizen(event, payload) {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    const finish = (text) => {
      if (!done) {
        done = true
        resolve(text)
      }
    }
    let child
    try {
      child = spawn(KAIZEN[0], [...KAIZEN.slice(1), "hook", "opencode", event], {
        stdio: ["pipe", "pipe", "ignore"],
      })
    } catch {
      finish("")
      return
    }
    const timer = setTimeout(() => {
      try {
        child.kill()
      } catch {}
      finish("")
    }, TIMEOUT_MS)
    child.stdout.on("data", (chunk) => {
      out += chunk
    })
    child.on("error", () => {
      clearTimeout(timer)
      finish("")
    })
    child.on("close", () => {
      clearTimeout(timer)
      finish(out.trim())
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

// session tracks what kaizen said about each session, and sends the
// session's events one after another, so kaizen sees them in order.
function tracker(cwd) {
  let queue = Promise.resolve("")
  const guidance = new Map() // sessionID -> what kaizen learned for the project
  const warnings = new Map() // sessionID -> what kaizen said about the latest prompt
  const started = new Set()
  const reported = new Set() // tool calls already reported as failed
  const send = (event, payload) => {
    const call = queue.then(() => callKaizen(event, { cwd, ...payload }))
    queue = call.catch(() => "")
    return call.catch(() => "")
  }
  const t = {
    send,
    async start(id) {
      if (!id || started.has(id)) return
      started.add(id)
      const text = await send("session.created", { session_id: id })
      if (text) guidance.set(id, text)
    },
    async prompt(id, prompt) {
      if (!id) return
      await t.start(id)
      const text = await send("chat.message", { session_id: id, prompt })
      if (text) warnings.set(id, text)
      else warnings.delete(id)
    },
    tool(id, tool, input) {
      if (id) send("tool.execute.after", { session_id: id, tool_name: String(tool || "tool"), tool_input: input })
    },
    failed(id, callID, tool, input, error) {
      if (!id || (callID && reported.has(callID))) return
      if (callID) reported.add(callID)
      send("tool.failed", { session_id: id, tool_name: String(tool || "tool"), tool_input: input, error: String(error || "") })
    },
    edited(id, file) {
      if (id && file) send("file.edited", { session_id: id, files: [String(file)] })
    },
    compacted(id) {
      if (id) send("session.compacted", { session_id: id })
    },
    idle(id) {
      if (id) send("session.idle", { session_id: id })
    },
    end(id, reason) {
      if (!id) return
      send("session.end", { session_id: id, reason: reason || "deleted" })
      started.delete(id)
      guidance.delete(id)
      warnings.delete(id)
    },
    context(id) {
      return [guidance.get(id), warnings.get(id)].filter((x) => x)
    },
  }
  return t
}

const textOf = (parts) =>
  (Array.isArray(parts) ? parts : [])
    .filter((p) => p && p.type === "text" && !p.synthetic && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n")

// opencode 1.x: server(input) returns the hooks.
async function server(input) {
  const { directory, worktree } = input || {}
  const k = tracker(directory || worktree || process.cwd())
  const args = new Map() // callID -> tool arguments (from tool.execute.before)
  return {
    event: async ({ event }) => {
      const props = (event && event.properties) || {}
      switch (event && event.type) {
        case "session.created":
          await k.start((props.info && props.info.id) || props.sessionID)
          break
        case "session.idle":
          k.idle(props.sessionID)
          break
        case "session.deleted":
          k.end((props.info && props.info.id) || props.sessionID, "deleted")
          break
        case "session.compacted":
          k.compacted(props.sessionID)
          break
        case "file.edited":
          // not tied to a session: reported with the latest prompt's
          break
        case "message.part.updated": {
          const part = props.part
          if (part && part.type === "tool" && part.state && part.state.status === "error") {
            k.failed(part.sessionID, part.callID, part.tool, part.state.input, part.state.error)
          }
          break
        }
      }
    },
    "chat.message": async (input, output) => {
      await k.prompt(input && input.sessionID, textOf(output && output.parts))
    },
    "tool.execute.before": async (input, output) => {
      if (input && input.callID && output) args.set(input.callID, output.args)
    },
    "tool.execute.after": async (input) => {
      if (!input) return
      const a = args.get(input.callID)
      args.delete(input.callID)
      k.tool(input.sessionID, input.tool, a)
    },
    "experimental.session.compacting": async (input) => {
      k.compacted(input && input.sessionID)
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = input && input.sessionID
      if (!id || !output || !Array.isArray(output.system)) return
      for (const text of k.context(id)) output.system.push(text)
    },
  }
}

// opencode 2.x: setup(ctx) registers the hooks and returns their cleanup.
// opencode also calls it with partial contexts (its catalog), where it does
// nothing.
async function setup(ctx) {
  if (!ctx || !ctx.session || typeof ctx.session.hook !== "function") return
  const dir =
    (ctx.location && (ctx.location.directory || ctx.location.worktree)) ||
    (ctx.app && ctx.app.directory) ||
    process.cwd()
  const k = tracker(dir)
  const regs = []
  const keep = (r) => {
    if (r) regs.push(r)
  }
  keep(
    ctx.session.hook("prompt", async (e) => {
      const p = (e && e.prompt) || {}
      const text = typeof p === "string" ? p : p.text || textOf(p.parts)
      await k.prompt(e && e.sessionID, text)
    }),
  )
  keep(
    ctx.session.hook("context", async (e) => {
      if (!e || !Array.isArray(e.system)) return
      for (const text of k.context(e.sessionID)) e.system.push({ type: "text", text })
    }),
  )
  if (ctx.tool && typeof ctx.tool.hook === "function") {
    keep(
      ctx.tool.hook("execute.after", async (e) => {
        if (!e) return
        if (e.status === "error") k.failed(e.sessionID, e.id, e.tool, e.input, e.error)
        else k.tool(e.sessionID, e.tool, e.input)
      }),
    )
  }
  let stopped = false
  if (ctx.event && typeof ctx.event.subscribe === "function") {
    ;(async () => {
      try {
        for await (const ev of ctx.event.subscribe()) {
          if (stopped) break
          const type = String((ev && ev.type) || "")
          const p = (ev && (ev.properties || ev.data)) || {}
          const id = p.sessionID || (p.info && p.info.id) || (p.session && p.session.id)
          if (/^session\.(next\.)?created$/.test(type)) await k.start(id)
          else if (/^session\.(next\.)?idle$/.test(type)) k.idle(id)
          else if (/^session\.(next\.)?(deleted|ended|closed)$/.test(type)) k.end(id, type.split(".").pop())
          else if (/^session\.(next\.)?compacted$/.test(type)) k.compacted(id)
          else if (type === "file.edited") k.edited(id, p.file)
        }
      } catch {}
    })()
  }
  return () => {
    stopped = true
    for (const r of regs) {
      try {
        if (typeof r === "function") r()
        else if (r && typeof r.dispose === "function") r.dispose()
      } catch {}
    }
  }
}

export default { id: "kaizen", server, setup }
