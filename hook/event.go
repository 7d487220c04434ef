package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/internal/app"
)

// Client is a coding agent kaizen integrates with.
type Client string

// The supported clients.
const (
	Claude   Client = "claude"
	Codex    Client = "codex"
	Cursor   Client = "cursor"
	Opencode Client = "opencode"
)

// Clients lists the supported clients.
var Clients = []Client{Claude, Codex, Cursor, Opencode}

// ParseClient validates a client name.
func ParseClient(s string) (Client, error) {
	for _, c := range Clients {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown client %q: use one of %s", s, joinClients())
}

func joinClients() string {
	s := make([]string, len(Clients))
	for i, c := range Clients {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// Kind is the task event a hook call becomes (kaizen.TaskEventInput.Kind).
type Kind string

// Task event kinds.
const (
	KindStart       Kind = "start"
	KindPrompt      Kind = "prompt"
	KindTool        Kind = "tool"
	KindToolFailure Kind = "tool_failure"
	KindStop        Kind = "stop"
	// KindActivity: a file edit reported on its own, a context compaction.
	KindActivity Kind = "activity"
	// KindEnd: the session ended; kaizen closes its task.
	KindEnd Kind = "end"
	// KindPreTool is a tool about to run: nothing is recorded, the hook
	// only answers (the seam of a pre-execution check).
	KindPreTool Kind = "pre_tool"
)

// Recorded reports whether events of the kind are recorded (spooled and
// ingested); the others only get an answer.
func (k Kind) Recorded() bool { return k != KindPreTool }

// eventSpec describes one client event: the task event it records, and
// what kaizen may inject in answer.
type eventSpec struct {
	kind Kind
	// guidance: inject plan guidance for the project (session start).
	guidance bool
	// warnings: inject the guidance warnings about the prompt.
	warnings bool
	// install: setup registers this event (others are accepted when a
	// user wires them by hand).
	install bool
}

// The events of each client, by the client's own event name. Targeted
// versions and sources: docs/clients.md (Claude Code 2.1.332, Codex
// 0.169.0, Cursor's agent runtime 1.0.32, opencode 1.18.33 and 2.x).
//
//   - Claude Code: events, stdin fields and hookSpecificOutput from the
//     Agent SDK's hook types (sdk.d.ts) and the settings schema.
//   - Codex CLI: the hook schemas embedded in the binary (Claude-compatible
//     payloads; no tool-failure event: PostToolUse also fires after a
//     failed command, whose tool_response starts "Exit code: N").
//   - Cursor: hooks.json version 1 and the runtime's hook validators
//     (conversation_id, workspace_roots; additional_context accepted on
//     sessionStart, beforeSubmitPrompt, preToolUse, postToolUse and
//     postToolUseFailure).
//   - opencode: no command hooks; the plugin that setup writes sends
//     kaizen's own payload.
var events = map[Client]map[string]eventSpec{
	Claude: {
		"SessionStart":       {kind: KindStart, guidance: true, install: true},
		"UserPromptSubmit":   {kind: KindPrompt, warnings: true, install: true},
		"PreToolUse":         {kind: KindPreTool, install: true},
		"PostToolUse":        {kind: KindTool, install: true},
		"PostToolUseFailure": {kind: KindToolFailure, install: true},
		"Stop":               {kind: KindStop, install: true},
		"StopFailure":        {kind: KindStop, install: true},
		"PreCompact":         {kind: KindActivity, install: true},
		"SessionEnd":         {kind: KindEnd, install: true},
	},
	Codex: {
		"SessionStart":     {kind: KindStart, guidance: true, install: true},
		"UserPromptSubmit": {kind: KindPrompt, warnings: true, install: true},
		"PreToolUse":       {kind: KindPreTool},
		"PostToolUse":      {kind: KindTool, install: true}, // tool_failure when the tool failed
		"Stop":             {kind: KindStop, install: true},
		"PreCompact":       {kind: KindActivity, install: true},
		"SessionEnd":       {kind: KindEnd, install: true},
	},
	Cursor: {
		"sessionStart":       {kind: KindStart, guidance: true, install: true},
		"beforeSubmitPrompt": {kind: KindPrompt, warnings: true, install: true},
		"preToolUse":         {kind: KindPreTool},
		"postToolUse":        {kind: KindTool, install: true},
		"postToolUseFailure": {kind: KindToolFailure, install: true},
		"afterFileEdit":      {kind: KindActivity, install: true},
		"preCompact":         {kind: KindActivity, install: true},
		"stop":               {kind: KindStop, install: true},
		"sessionEnd":         {kind: KindEnd, install: true},
		// older Cursor versions without the generic tool events
		"afterShellExecution": {kind: KindTool},
		"afterMCPExecution":   {kind: KindTool},
	},
	Opencode: {
		"session.created":    {kind: KindStart, guidance: true, install: true},
		"chat.message":       {kind: KindPrompt, warnings: true, install: true},
		"tool.execute.after": {kind: KindTool, install: true},
		"tool.failed":        {kind: KindToolFailure, install: true},
		"file.edited":        {kind: KindActivity, install: true},
		"session.compacted":  {kind: KindActivity, install: true},
		"session.idle":       {kind: KindStop, install: true},
		"session.end":        {kind: KindEnd, install: true},
	},
}

// ClientEvents are the hook event names each client accepts in its
// configuration at the version kaizen targets (docs/clients.md). Cursor
// rejects a whole hooks.json that names an event outside its list, so
// setup writes no name that is not here.
var ClientEvents = map[Client][]string{
	Claude: {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit",
		"UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop",
		"PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup",
		"TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate",
		"WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay",
		"PreSkillShellCommand"},
	Codex: {"PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact", "SessionStart", "SessionEnd",
		"UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop", "Interrupt"},
	Cursor: {"beforeShellExecution", "beforeMCPExecution", "afterShellExecution", "afterMCPExecution", "beforeReadFile",
		"afterFileEdit", "beforeTabFileRead", "afterTabFileEdit", "stop", "beforeSubmitPrompt", "afterAgentResponse",
		"afterAgentThought", "sessionStart", "sessionEnd", "preCompact", "subagentStart", "subagentStop", "preToolUse",
		"postToolUse", "postToolUseFailure", "workspaceOpen"},
}

// Events lists the events of a client that setup installs, in lifecycle order.
func Events(c Client) []string {
	order := map[Kind]int{KindStart: 0, KindPrompt: 1, KindPreTool: 2, KindTool: 3, KindToolFailure: 4, KindActivity: 5,
		KindStop: 6, KindEnd: 7}
	var names []string
	for name, spec := range events[c] {
		if spec.install {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := events[c][names[i]], events[c][names[j]]
		if order[a.kind] != order[b.kind] {
			return order[a.kind] < order[b.kind]
		}
		return names[i] < names[j]
	})
	return names
}

// AllEvents lists every event a client's hook accepts, sorted.
func AllEvents(c Client) []string {
	var names []string
	for name := range events[c] {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func lookupEvent(c Client, name string) (eventSpec, error) {
	spec, ok := events[c][name]
	if !ok {
		return eventSpec{}, fmt.Errorf("unknown %s event %q: use one of %s", c, name, strings.Join(AllEvents(c), ", "))
	}
	return spec, nil
}

// Event is one hook call, normalized across clients.
type Event struct {
	Client Client `json:"client"`
	// Name is the client's event name (the command's argument).
	Name string `json:"event"`
	// Kind is the task event to record.
	Kind      Kind   `json:"kind"`
	SessionID string `json:"session_id"`
	// Dir is the directory the agent works in (the project is named after
	// its git root).
	Dir      string `json:"dir,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	ToolName string `json:"tool_name,omitempty"`
	// Error is the message of a tool failure.
	Error string `json:"error,omitempty"`
	// ToolInput and ToolResponse are the tool call's raw JSON, when the
	// client sends them (for advisors such as the exploration tracker).
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// LastMessage is the agent's final reply at a stop (Claude Code and
	// Codex last_assistant_message), when the client sends it.
	LastMessage string `json:"last_message,omitempty"`
	// StopHookActive: the agent is already continuing because of a stop
	// hook (Claude Code, Codex); advisors must not ask it to continue again.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// Source is how a session started (startup, resume, clear, compact).
	Source string `json:"source,omitempty"`
	// Plan is the text of a plan or to-do list the agent wrote with a
	// planning tool (its strategies count as the task's).
	Plan string `json:"plan,omitempty"`
	// Files are the files the event edited.
	Files []string `json:"files,omitempty"`
	// Signal is the event's decisive signal about the task's success
	// (learning.Signal: a test run's result, the user's verdict on the
	// agent's work, the client's stop status).
	Signal string `json:"signal,omitempty"`
	// EndReason is why the client ended the session.
	EndReason string `json:"end_reason,omitempty"`
	// Team and Member bind the session to a member of a team (from
	// KAIZEN_TEAM and KAIZEN_MEMBER in the hook's environment, see
	// BindTeam): its hooks deliver the member's messages.
	Team   string `json:"team,omitempty"`
	Member string `json:"member,omitempty"`
}

// TaskID is the kaizen task of the event's session: the client name, a
// dash, and the client's session id (claude-<session_id>).
func (ev Event) TaskID() string { return TaskID(ev.Client, ev.SessionID) }

// TaskID names the task of a client session.
func TaskID(c Client, sessionID string) string {
	return oneLine(string(c)+"-"+strings.TrimSpace(sessionID), maxIDBytes)
}

// payload is a tolerant view of a hook's JSON object: fields are read by
// name and a field of an unexpected type reads as absent, so a client
// adding or changing a field it does not matter to kaizen breaks nothing.
type payload map[string]json.RawMessage

func (p payload) str(key string) string {
	var s string
	if json.Unmarshal(p[key], &s) != nil {
		return ""
	}
	return s
}

func (p payload) boolean(key string) bool {
	var b bool
	return json.Unmarshal(p[key], &b) == nil && b
}

func (p payload) strings(key string) []string {
	var s []string
	if json.Unmarshal(p[key], &s) != nil {
		return nil
	}
	return s
}

// text reads a field that is a string, or else renders its JSON.
func (p payload) text(key string) string {
	raw := p[key]
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func (p payload) raw(key string) json.RawMessage {
	raw := p[key]
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// ErrNoSession: the payload names no session, so there is no task to track.
var ErrNoSession = errors.New("the payload has no session id")

// ErrForeignPayload: the payload was sent by another client than the one
// the command names (Cursor runs the hooks of Claude Code's settings files
// with its own payloads); it is ignored, as that client's own hook
// records the event.
var ErrForeignPayload = errors.New("the payload comes from another client")

// Parse reads one hook payload of a client's event.
func Parse(c Client, name string, data []byte) (Event, error) {
	spec, err := lookupEvent(c, name)
	if err != nil {
		return Event{}, err
	}
	var p payload
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("the %s %s payload is not a JSON object: %w", c, name, err)
	}
	if p == nil {
		return Event{}, fmt.Errorf("the %s %s payload is null, not a JSON object", c, name)
	}
	// the engine's one set of rules for every input: valid UTF-8 (never
	// repaired), no duplicate keys, bounded nesting
	if err := app.CheckJSON(data, "hook"); err != nil {
		return Event{}, fmt.Errorf("the %s %s payload is refused: %w", c, name, err)
	}
	ev := Event{Client: c, Name: name, Kind: spec.kind}
	interrupted := false
	switch c {
	case Claude, Codex:
		// Claude Code: common fields session_id, transcript_path, cwd,
		// permission_mode, hook_event_name; prompt (UserPromptSubmit);
		// tool_name, tool_input, tool_response, tool_use_id (PreToolUse,
		// PostToolUse); error, is_interrupt (PostToolUseFailure);
		// stop_hook_active, last_assistant_message (Stop); error
		// (StopFailure); source (SessionStart); reason (SessionEnd);
		// trigger (PreCompact). Codex sends the same names (plus turn_id
		// and model).
		if p["cursor_version"] != nil || p["conversation_id"] != nil {
			return ev, fmt.Errorf("%w: %s %s received a Cursor payload (Cursor also runs Claude Code's hooks)", ErrForeignPayload, c, name)
		}
		ev.SessionID = p.str("session_id")
		ev.Dir = p.str("cwd")
		ev.Source = p.str("source")
		ev.Prompt = p.str("prompt")
		ev.ToolName = p.str("tool_name")
		ev.ToolInput = p.raw("tool_input")
		ev.ToolResponse = p.raw("tool_response")
		ev.StopHookActive = p.boolean("stop_hook_active")
		ev.LastMessage = p.str("last_assistant_message")
		interrupted = p.boolean("is_interrupt")
		switch {
		case ev.Kind == KindToolFailure && interrupted:
			// the user interrupted the tool: not a failure of the agent
			ev.Kind = KindTool
		case ev.Kind == KindToolFailure:
			ev.Error = p.text("error")
		case c == Codex && ev.Kind == KindTool:
			if msg, failed := codexToolFailure(ev.ToolResponse); failed {
				ev.Kind, ev.Error = KindToolFailure, msg
			}
		}
		switch name {
		case "StopFailure":
			ev.Signal = "stop_error"
		case "SessionEnd":
			ev.EndReason = p.str("reason")
		}
	case Cursor:
		// Cursor: common fields conversation_id, generation_id,
		// session_id (= conversation_id), workspace_roots,
		// hook_event_name; prompt (beforeSubmitPrompt); tool_name,
		// tool_input, tool_output (postToolUse); error_message,
		// failure_type (postToolUseFailure); command, output, cwd
		// (afterShellExecution); file_path, edits (afterFileEdit); status
		// (stop); reason, final_status (sessionEnd).
		ev.SessionID = p.str("conversation_id")
		if ev.SessionID == "" {
			ev.SessionID = p.str("session_id")
		}
		if roots := p.strings("workspace_roots"); len(roots) > 0 {
			ev.Dir = roots[0]
		} else {
			ev.Dir = p.str("cwd")
		}
		ev.Prompt = p.str("prompt")
		ev.ToolName = p.str("tool_name")
		ev.ToolInput = p.raw("tool_input")
		ev.ToolResponse = p.raw("tool_output")
		switch name {
		case "afterShellExecution":
			ev.ToolName = "Shell"
			if cmd := p.str("command"); cmd != "" && ev.ToolInput == nil {
				ev.ToolInput, _ = json.Marshal(map[string]string{"command": cmd})
			}
			if out := p.raw("output"); out != nil && ev.ToolResponse == nil {
				ev.ToolResponse = out
			}
		case "postToolUseFailure":
			ev.Error = p.text("error_message")
			if ev.Error == "" {
				ev.Error = p.text("failure_type")
			}
			if p.boolean("is_interrupt") {
				ev.Kind, ev.Error, interrupted = KindTool, "", true
			}
		case "afterFileEdit":
			if f := p.str("file_path"); f != "" {
				ev.Files = []string{f}
			}
		case "stop":
			ev.Signal = stopSignal(p.str("status"))
		case "sessionEnd":
			ev.EndReason = p.str("reason")
			ev.Signal = stopSignal(p.str("final_status"))
		}
	case Opencode:
		// kaizen's own payload, sent by the plugin setup writes:
		// session_id, cwd, prompt, tool_name, tool_input, error, files,
		// reason.
		ev.SessionID = p.str("session_id")
		ev.Dir = p.str("cwd")
		ev.Prompt = p.str("prompt")
		ev.ToolName = p.str("tool_name")
		ev.ToolInput = p.raw("tool_input")
		ev.Error = p.str("error")
		ev.Files = p.strings("files")
		ev.EndReason = p.str("reason")
	}
	if strings.TrimSpace(ev.SessionID) == "" {
		return ev, ErrNoSession
	}
	if name == "PreCompact" || name == "preCompact" || name == "session.compacted" {
		ev.Source = "compact"
	}
	derive(&ev)
	if interrupted && (ev.Signal == "test_pass" || ev.Signal == "test_fail") {
		ev.Signal = "" // an interrupted test run says nothing
	}
	return ev, nil
}

var exitCodeLine = regexp.MustCompile(`^Exit code: (-?\d+)`)

// codexToolFailure tells from a Codex PostToolUse tool_response whether
// the tool failed. A Bash command's response is the text Codex shows the
// model, beginning "Exit code: N"; MCP results carry isError.
func codexToolFailure(resp json.RawMessage) (string, bool) {
	if len(resp) == 0 {
		return "", false
	}
	var text string
	if json.Unmarshal(resp, &text) == nil {
		m := exitCodeLine.FindStringSubmatch(text)
		if m == nil {
			return "", false
		}
		if code, err := strconv.Atoi(m[1]); err == nil && code != 0 {
			return text, true
		}
		return "", false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(resp, &obj) != nil {
		return "", false
	}
	p := payload(obj)
	for _, key := range []string{"exit_code", "exitCode"} {
		var code int
		if json.Unmarshal(p[key], &code) == nil && code != 0 {
			return string(resp), true
		}
	}
	if p.boolean("isError") || p.boolean("is_error") {
		return string(resp), true
	}
	var success *bool
	if json.Unmarshal(p["success"], &success) == nil && success != nil && !*success {
		return string(resp), true
	}
	return "", false
}
