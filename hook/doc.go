// Package hook connects coding agents to kaizen through their own hook
// mechanisms: it reads the hook payloads of Claude Code, Codex, Cursor and
// opencode (Parse), turns them into task events and guidance requests
// (Handler), answers in each client's output format (Render), and plans the
// configuration files `kaizen setup` writes (PlanSetup): MCP server entries
// and hook registrations, merged into existing files without losing what
// they hold.
//
// Everything here but AppendLog is free of I/O: the kaizen backend (the
// engine or a daemon client) and file reads are passed in. See
// docs/clients.md.
package hook
