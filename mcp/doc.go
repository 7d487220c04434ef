// Package mcp serves kaizen's engine to AI agents over the Model Context
// Protocol, with the official Go SDK: one tool per engine action, over stdio
// (ServeStdio, used by `kaizen mcp`) and streamable HTTP in stateless mode
// (HTTPHandler, mounted at /mcp by `kaizen serve`).
//
// Every tool is a thin adapter over one kaizen.Engine method: its input is
// decoded strictly into the engine's input type (field names of the seed:
// bead_id, duration_ms, …), the engine validates it, and its result is
// returned both as structured content (the engine's JSON) and as readable
// text (markdown for guidance and error context). Invalid input is a tool
// result with isError set, naming the field and a hint, never a protocol
// error.
//
// # Adding tools
//
// Tools live in a registry. A subsystem declares its tools in its own file
// with define and registers them from an init function:
//
//	func init() { registerTools(experienceTools) }
//
// NewServer, and so both transports, serve every registered tool; nothing
// else changes. learning.go holds the learning system's tools and is the
// example to follow. Each input property must be described (the registry
// refuses a tool with an undescribed property), because the descriptions are
// what an LLM reads to call the tool correctly.
//
// # Projects
//
// A call works on the project named by its "project" argument, else the
// project of the HTTP request (?project= or the Kaizen-Project header),
// else Options.Project, else the project of the client's workspace (the
// directory name of the git root of its first root, asked once per session
// when the client supports roots), else the engine's default project.
package mcp
