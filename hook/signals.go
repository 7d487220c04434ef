package hook

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
)

// Limits of what an event carries for its task's signals.
const (
	maxPlanBytes = 16 << 10
	maxFiles     = 50
	maxPathBytes = 1024
)

// derive completes an event with what kaizen reads from it for the task's
// inferred outcome: the plan a planning tool carried, the files an edit
// tool touched, and the decisive signal (a test run's result, the user's
// verdict on the agent's work in a prompt).
func derive(ev *Event) {
	switch ev.Kind {
	case KindTool, KindToolFailure:
		if plan := planOf(ev.ToolName, ev.ToolInput); plan != "" {
			ev.Plan = cleanText(plan, maxPlanBytes)
		}
		ev.Files = append(ev.Files, filesOf(ev.ToolName, ev.ToolInput)...)
		if isTestRun(ev.ToolName, ev.ToolInput) {
			ev.Signal = "test_pass"
			if ev.Kind == KindToolFailure {
				ev.Signal = "test_fail"
			}
		}
	case KindPrompt:
		ev.Signal = verdictOf(ev.Prompt)
	}
	var files []string
	for _, f := range ev.Files {
		f = oneLine(f, maxPathBytes)
		if f != "" && !slices.Contains(files, f) && len(files) < maxFiles {
			files = append(files, f)
		}
	}
	ev.Files = files
	ev.EndReason = oneLine(ev.EndReason, 64)
}

// stopSignal reads a client's stop status (Cursor: completed, aborted,
// error).
func stopSignal(status string) string {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "completed", "complete", "success":
		return "stop_completed"
	case "aborted", "cancelled", "canceled", "interrupted":
		return "stop_aborted"
	case "error", "failed":
		return "stop_error"
	}
	return ""
}

// verdictOf reads a user's verdict on the agent's work from a prompt:
// user_confirmed for "works, thanks", user_rejected for "that's wrong,
// revert it" (the experience system's bilingual rules), "" otherwise.
func verdictOf(prompt string) string {
	if strings.TrimSpace(prompt) == "" {
		return ""
	}
	hits := experience.ClassifyTurn(nil, experience.Turn{Role: experience.RoleUser, Content: truncate(prompt, 4<<10)})
	confirmed, rejected := false, false
	for _, h := range hits {
		switch h.Type {
		case experience.SignalSuccess:
			confirmed = true
		case experience.SignalReject, experience.SignalCorrection:
			rejected = true
		}
	}
	switch {
	case rejected:
		return "user_rejected"
	case confirmed:
		return "user_confirmed"
	}
	return ""
}

// toolObject reads a tool input as an object (nil when it is not one).
func toolObject(input json.RawMessage) payload {
	var p payload
	if json.Unmarshal(input, &p) != nil {
		return nil
	}
	return p
}

// planOf reads the plan from a planning tool's input: Claude Code's
// ExitPlanMode (plan) and TodoWrite (todos[].content), Codex's
// update_plan (explanation, plan[].step), opencode's todowrite
// (todos[].content).
func planOf(tool string, input json.RawMessage) string {
	p := toolObject(input)
	if p == nil {
		return ""
	}
	switch strings.ToLower(tool) {
	case "exitplanmode":
		return p.str("plan")
	case "todowrite":
		return joinItems(p["todos"], "content")
	case "update_plan":
		return strings.TrimSpace(p.str("explanation") + "\n" + joinItems(p["plan"], "step"))
	}
	return ""
}

func joinItems(raw json.RawMessage, key string) string {
	var items []payload
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var out []string
	for _, it := range items {
		if s := it.str(key); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

var patchFile = regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$`)

// editTools are the tools that change files, by lower-cased name.
var editTools = []string{"edit", "write", "multiedit", "notebookedit", "apply_patch", "patch", "str_replace_editor",
	"create_file", "edit_file", "search_replace", "write_file", "delete_file"}

// filesOf reads the files an edit tool touched from its input: file_path,
// filePath, path or notebook_path, or the file headers of a patch.
func filesOf(tool string, input json.RawMessage) []string {
	if !slices.Contains(editTools, strings.ToLower(tool)) || len(input) == 0 {
		return nil
	}
	var text string
	if json.Unmarshal(input, &text) == nil {
		return patchFiles(text)
	}
	p := toolObject(input)
	if p == nil {
		return nil
	}
	for _, key := range []string{"file_path", "filePath", "path", "notebook_path", "target_file"} {
		if f := p.str(key); f != "" {
			return []string{f}
		}
	}
	for _, key := range []string{"input", "patch", "command"} {
		if f := patchFiles(p.text(key)); len(f) > 0 {
			return f
		}
	}
	return nil
}

func patchFiles(text string) []string {
	var out []string
	for _, m := range patchFile.FindAllStringSubmatch(text, maxFiles) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// testCommand matches the commands of the common test runners.
var testCommand = regexp.MustCompile(`(?i)(^|[\s;&|(])(go\s+test|pytest|py\.test|python3?\s+-m\s+(pytest|unittest)|` +
	`(npm|pnpm|yarn|bun)\s+(run\s+)?test|npx\s+(jest|vitest|mocha)|jest|vitest|mocha|cargo\s+(test|nextest)|` +
	`mvn\s+(\S+\s+)*test|gradlew?\s+(\S+\s+)*test|dotnet\s+test|rspec|phpunit|ctest|make\s+(test|check)|tox|` +
	`mix\s+test|swift\s+test|deno\s+test|bundle\s+exec\s+rspec)\b`)

// shellTools are the tools that run a command, by lower-cased name.
var shellTools = []string{"bash", "shell", "exec_command", "local_shell", "run_terminal_cmd", "terminal"}

// isTestRun reports whether a tool call ran tests: a shell tool whose
// command names a test runner.
func isTestRun(tool string, input json.RawMessage) bool {
	if !slices.Contains(shellTools, strings.ToLower(tool)) || len(input) == 0 {
		return false
	}
	var cmd string
	if p := toolObject(input); p != nil {
		cmd = p.str("command")
		if cmd == "" {
			cmd = strings.Join(p.strings("command"), " ")
		}
		if cmd == "" {
			cmd = p.str("cmd")
		}
	} else if json.Unmarshal(input, &cmd) != nil {
		return false
	}
	return testCommand.MatchString(truncate(cmd, 8<<10))
}
