package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/trace"
)

// TraceBackend is what failure learning (seed 003) needs of kaizen;
// *kaizen.Engine implements it.
type TraceBackend interface {
	RecordTraceEvents(ctx context.Context, in kaizen.TraceEventInput) (*kaizen.TraceEventResult, error)
	CheckCommand(ctx context.Context, in kaizen.TraceCheckInput) (*kaizen.TraceCheckResult, error)
}

// maxTraceOutput bounds the command output a hook passes on (the trace
// keeps the tail and the error excerpt).
const maxTraceOutput = 64 << 10

// traceShellTools are the tools that run a shell command (tool input "command").
var traceShellTools = []string{"bash", "shell", "run_shell_command", "exec_command", "local_shell", "terminal",
	"execute_command", "run_terminal_cmd", "run_command"}

// TraceEvents turns a recorded hook event into the events of the session's
// trace assembly: a shell command's run (with its exit code and output),
// the files an edit touched, the user's prompt, the agent's final reply,
// and the session's end. id and at identify the delivery (its spool
// record), making the feed idempotent; other events give nothing.
func TraceEvents(ev Event, id string, at time.Time) []trace.Event {
	mk := func(n int, kind trace.EventKind) trace.Event {
		e := trace.Event{Kind: kind, Time: at.UTC()}
		if at.IsZero() {
			e.Time = time.Time{}
		}
		if id != "" {
			e.ID = fmt.Sprintf("%s#%d", id, n)
		}
		return e
	}
	var out []trace.Event
	switch ev.Kind {
	case KindPrompt:
		if strings.TrimSpace(ev.Prompt) != "" {
			e := mk(0, trace.EventPrompt)
			e.Text = cleanText(ev.Prompt, maxStoredText)
			out = append(out, e)
		}
	case KindTool, KindToolFailure, KindActivity:
		if cmd := shellCommand(ev); cmd != "" {
			e := mk(0, trace.EventCommand)
			e.Command = cmd
			e.ExitCode, e.Output = commandResult(ev)
			e.Context = map[string]string{}
			if ev.Dir != "" {
				e.Context[trace.ContextCwd] = cleanText(ev.Dir, 1024)
			}
			if ev.ToolName != "" {
				e.Context[trace.ContextTool] = oneLine(ev.ToolName, maxIDBytes)
			}
			out = append(out, e)
			break
		}
		for i, f := range ev.Files {
			e := mk(i+1, trace.EventEdit)
			e.Path = relativeTo(ev.Dir, f)
			out = append(out, e)
		}
	case KindStop:
		if strings.TrimSpace(ev.LastMessage) != "" {
			e := mk(0, trace.EventAssistant)
			e.Text = cleanText(ev.LastMessage, maxStoredText)
			out = append(out, e)
		}
	case KindEnd:
		out = append(out, mk(0, trace.EventSessionEnd))
	}
	return out
}

// shellCommand is the command line of a shell tool call, or "".
func shellCommand(ev Event) string {
	if !slices.Contains(traceShellTools, strings.ToLower(ev.ToolName)) || len(ev.ToolInput) == 0 {
		return ""
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(ev.ToolInput, &in) != nil {
		return ""
	}
	raw := in["command"]
	if len(raw) == 0 {
		raw = in["cmd"]
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var argv []string
		if json.Unmarshal(raw, &argv) != nil {
			return ""
		}
		// Codex's local shell: ["bash", "-lc", "go test ./..."]
		if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
			s = argv[2]
		} else {
			s = strings.Join(argv, " ")
		}
	}
	return cleanText(strings.TrimSpace(s), trace.MaxContextValueLen)
}

var codexExit = regexp.MustCompile(`(?m)^Exit code: (-?\d+)`)

// commandResult reads a shell call's exit code and output from the
// client's tool response (Claude Code: stdout and stderr; Codex: the text
// "Exit code: N … Output: …"; Cursor: the output text) and its error. A
// failed call without a code is exit 1; a successful one without a code
// is exit 0, except Cursor's afterShellExecution (its output decides).
func commandResult(ev Event) (*int, string) {
	var code *int
	var parts []string
	if ev.Error != "" {
		parts = append(parts, ev.Error)
	}
	var text string
	var obj map[string]json.RawMessage
	switch {
	case len(ev.ToolResponse) == 0:
	case json.Unmarshal(ev.ToolResponse, &text) == nil:
		if m := codexExit.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				code = &n
			}
			if k := strings.Index(text, "Output:\n"); k >= 0 {
				text = text[k+len("Output:\n"):]
			}
		}
		parts = append(parts, text)
	case json.Unmarshal(ev.ToolResponse, &obj) == nil:
		for _, k := range []string{"stdout", "output", "stderr", "error"} {
			var s string
			if json.Unmarshal(obj[k], &s) == nil && strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
		}
		for _, k := range []string{"exit_code", "exitCode", "returncode", "code"} {
			var n int
			if json.Unmarshal(obj[k], &n) == nil && len(obj[k]) > 0 {
				code = &n
				break
			}
		}
	}
	if code == nil {
		switch {
		case ev.Kind == KindToolFailure:
			n := 1
			code = &n
		case ev.Client == Cursor && ev.Name == "afterShellExecution":
		default:
			n := 0
			code = &n
		}
	}
	out := strings.Join(parts, "\n")
	if len(out) > maxTraceOutput {
		out = out[len(out)-maxTraceOutput:]
	}
	return code, cleanText(out, maxTraceOutput)
}

func relativeTo(dir, path string) string {
	path = oneLine(path, maxPathBytes)
	if dir != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// recordTrace feeds a recorded event to the session's traces.
func (h *Handler) recordTrace(ctx context.Context, ev Event, id string, at time.Time) error {
	evs := TraceEvents(ev, id, at)
	if len(evs) == 0 {
		return nil
	}
	_, err := h.Traces.RecordTraceEvents(ctx, kaizen.TraceEventInput{Project: h.Project, SessionID: ev.TaskID(), Events: evs})
	return err
}

// TraceAdvisor is the pre-execution check of failure learning: before a
// shell command runs (PreToolUse), it asks kaizen whether the command
// failed this way before and, on a confident match, injects the warning
// with the known fix — framed as evidence, never blocking the command.
type TraceAdvisor struct {
	Backend TraceBackend
}

// Advise implements Advisor (as a PreTool advisor).
func (a TraceAdvisor) Advise(ctx context.Context, in AdviceInput) (Advice, error) {
	ev := in.Event
	cmd := shellCommand(ev)
	if ev.Kind != KindPreTool || cmd == "" {
		return Advice{}, nil
	}
	q := kaizen.TraceCheckInput{Project: in.Project, SessionID: ev.TaskID(), Command: cmd}
	if ev.Dir != "" {
		q.Context = map[string]string{trace.ContextCwd: cleanText(ev.Dir, 1024)}
	}
	res, err := a.Backend.CheckCommand(ctx, q)
	if err != nil {
		if kaizen.KindOf(err) == kaizen.KindInvalid {
			return Advice{}, nil // a command kaizen cannot read: nothing to say
		}
		return Advice{}, err
	}
	return Advice{Context: res.Context}, nil
}
