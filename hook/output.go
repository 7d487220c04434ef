package hook

// Render writes a response in the format the client reads from a hook's
// standard output; nil means print nothing (a no-op for every client).
//
//   - Claude Code (https://code.claude.com/docs/en/hooks, "JSON output"):
//     {"hookSpecificOutput": {"hookEventName": E, "additionalContext": ...}}
//     for SessionStart, UserPromptSubmit, PostToolUse and
//     PostToolUseFailure; a Stop that should continue answers
//     {"decision": "block", "reason": ...}.
//   - Codex (https://developers.openai.com/codex/hooks): the same shapes
//     for SessionStart, UserPromptSubmit, PostToolUse and Stop.
//   - Cursor (https://cursor.com/docs/hooks): {"additional_context": ...}
//     for sessionStart, {"continue": true} for beforeSubmitPrompt (which
//     cannot add context), {"followup_message": ...} for a stop that
//     should continue.
//   - opencode: the plain text, read by kaizen's plugin.
func Render(c Client, name string, r Response) []byte {
	spec, err := lookupEvent(c, name)
	if err != nil {
		return nil
	}
	switch c {
	case Claude, Codex:
		if spec.kind == KindStop {
			if r.Continue == "" {
				return nil
			}
			return mustJSON(map[string]any{"decision": "block", "reason": r.Continue})
		}
		if r.Context == "" {
			return nil
		}
		return mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": name, "additionalContext": r.Context}})
	case Cursor:
		switch name {
		case "sessionStart":
			if r.Context != "" {
				return mustJSON(map[string]any{"additional_context": r.Context})
			}
		case "beforeSubmitPrompt":
			return NoOp(c, name)
		case "stop":
			if r.Continue != "" {
				return mustJSON(map[string]any{"followup_message": r.Continue})
			}
		}
		// Cursor documents no context field for its tool events; an
		// advisor's context after a tool call is dropped there.
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
