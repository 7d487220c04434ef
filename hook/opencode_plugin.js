// kaizen plugin for opencode (https://opencode.ai/docs/plugins).
// kaizen-setup: managed file. Written by `kaizen setup opencode`, removed by
// `kaizen setup opencode --uninstall`; setup overwrites local edits.
//
// opencode has no command hooks, so this plugin runs
// `kaizen hook opencode <event>` with a JSON payload on stdin
// ({session_id, cwd, prompt?, tool_name?, error?}) for:
//   session.created     the session becomes a kaizen task; kaizen answers
//                       with what it learned for the project
//   chat.message        a user prompt; kaizen answers with warnings when
//                       the prompt uses an anti-pattern
//   tool.execute.after  a tool call
//   tool.failed         a tool part that ended in an error
//   session.idle        the agent stopped
// kaizen's answers are added to the system prompt of the session's
// following requests. kaizen never fails or blocks the agent: a call that
// fails or takes longer than 3 seconds is ignored (problems are logged in
// kaizen's hook.log).
import { spawn } from "node:child_process"

const KAIZEN = __KAIZEN_COMMAND__
const TIMEOUT_MS = 3000

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

export const KaizenPlugin = async ({ directory, worktree }) => {
  const cwd = directory || worktree
  // Calls run one after another, so kaizen sees the session's events in order.
  let queue = Promise.resolve("")
  const send = (event, payload) => {
    const call = queue.then(() => callKaizen(event, { cwd, ...payload }))
    queue = call.catch(() => "")
    return call.catch(() => "")
  }
  const guidance = new Map() // sessionID -> what kaizen learned for the project
  const warnings = new Map() // sessionID -> warnings about the latest prompt
  const reported = new Set() // tool calls already reported as failed

  return {
    event: async ({ event }) => {
      const props = (event && event.properties) || {}
      if (event.type === "session.created") {
        const id = (props.info && props.info.id) || props.sessionID
        if (id) {
          const text = await send("session.created", { session_id: id })
          if (text) guidance.set(id, text)
        }
      } else if (event.type === "session.idle") {
        if (props.sessionID) send("session.idle", { session_id: props.sessionID })
      } else if (event.type === "message.part.updated") {
        const part = props.part
        if (part && part.type === "tool" && part.state && part.state.status === "error" && !reported.has(part.callID)) {
          reported.add(part.callID)
          send("tool.failed", {
            session_id: part.sessionID,
            tool_name: part.tool,
            error: String(part.state.error || ""),
          })
        }
      }
    },
    "chat.message": async (input, output) => {
      const parts = (output && output.parts) || []
      const prompt = parts
        .filter((p) => p && p.type === "text" && !p.synthetic && typeof p.text === "string")
        .map((p) => p.text)
        .join("\n")
      const text = await send("chat.message", { session_id: input.sessionID, prompt })
      if (text) warnings.set(input.sessionID, text)
      else warnings.delete(input.sessionID)
    },
    "tool.execute.after": async (input) => {
      send("tool.execute.after", { session_id: input.sessionID, tool_name: input.tool })
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = input && input.sessionID
      if (!id || !output || !Array.isArray(output.system)) return
      for (const text of [guidance.get(id), warnings.get(id)]) {
        if (text) output.system.push(text)
      }
    },
  }
}
