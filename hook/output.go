package hook

// Render writes a response in the format the client reads from a hook's
// standard output; nil means print nothing (a no-op for every client).
//
//   - Claude Code 2.1.332: {"hookSpecificOutput": {"hookEventName": E,
//     "additionalContext": ...}} for SessionStart, UserPromptSubmit,
//     PreToolUse, PostToolUse and PostToolUseFailure; a Stop that should
//     continue answers {"decision": "block", "reason": ...}; nothing for
//     StopFailure, PreCompact and SessionEnd.
//   - Codex 0.169.0: the same shapes (its output schemas reject unknown
//     keys, so nothing else is ever added).
//   - Cursor: {"additional_context": ...} for sessionStart, preToolUse,
//     postToolUse and postToolUseFailure; {"continue": true,
//     "additional_context": ...} for beforeSubmitPrompt (which must always
//     let the prompt through); {"followup_message": ...} for a stop that
//     should continue.
//   - opencode: the plain text, read by kaizen's plugin.
func Render(c Client, name string, r Response) []byte {
	spec, err := lookupEvent(c, name)
	if err != nil {
		return nil
	}
	switch c {
	case Claude, Codex:
		switch spec.kind {
		case KindStop:
			if r.Continue == "" || name == "StopFailure" {
				return nil
			}
			return mustJSON(map[string]any{"decision": "block", "reason": r.Continue})
		case KindEnd, KindActivity:
			return nil
		}
		if r.Context == "" {
			return nil
		}
		return mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": name, "additionalContext": r.Context}})
	case Cursor:
		switch name {
		case "sessionStart", "preToolUse", "postToolUse", "postToolUseFailure":
			if r.Context != "" {
				return mustJSON(map[string]any{"additional_context": r.Context})
			}
		case "beforeSubmitPrompt":
			if r.Context != "" {
				return mustJSON(map[string]any{"continue": true, "additional_context": r.Context})
			}
			return NoOp(c, name)
		case "stop":
			if r.Continue != "" {
				return mustJSON(map[string]any{"followup_message": r.Continue})
			}
		}
		return nil
	case Opencode:
		if r.Context == "" {
			return nil
		}
		return []byte(r.Context + "\n")
	}
	return nil
}

// NoOp is what a hook prints when it has nothing to say or failed: nothing,
// except for Cursor's beforeSubmitPrompt, which expects a decision and gets
// {"continue": true} so the prompt always goes through.
func NoOp(c Client, name string) []byte {
	if c == Cursor && name == "beforeSubmitPrompt" {
		return []byte("{\"continue\":true}\n")
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := marshalNoHTML(v)
	if err != nil {
		return nil
	}
	return append(b, '\n')
}
