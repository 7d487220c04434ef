package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/explore"
)

func TestToolCallOf(t *testing.T) {
	raw := func(v any) json.RawMessage {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name   string
		ev     Event
		output string
		files  []string
		status explore.CallStatus
	}{
		{"claude read", Event{Kind: KindTool, ToolName: "Read", ToolInput: raw(map[string]any{"file_path": "src/a.go"}),
			ToolResponse: raw(map[string]any{"type": "text", "file": map[string]any{"filePath": "src/a.go", "content": "package a", "numLines": 1}})},
			"package a", []string{"src/a.go"}, ""},
		{"claude grep", Event{Kind: KindTool, ToolName: "Grep",
			ToolResponse: raw(map[string]any{"mode": "files_with_matches", "filenames": []string{"a.go", "b.go"}, "numFiles": 2})},
			"", []string{"a.go", "b.go"}, ""},
		{"bash", Event{Kind: KindTool, ToolName: "Bash", ToolResponse: raw(map[string]any{"stdout": "src/a.go:3: x", "stderr": "warn", "interrupted": false})},
			"warn\nsrc/a.go:3: x", nil, ""}, // keys in order
		{"text response", Event{Kind: KindTool, ToolName: "mcp__x__y", ToolResponse: raw("plain\ttext")}, "plain\ttext", nil, ""},
		{"no response", Event{Kind: KindTool, ToolName: "Glob"}, "", nil, ""},
		{"failure", Event{Kind: KindToolFailure, ToolName: "Bash", Error: "exit 1", ToolResponse: raw(map[string]any{"stdout": "ignored"})},
			"exit 1", nil, explore.StatusError},
		{"garbage input", Event{Kind: KindTool, ToolName: "", ToolInput: json.RawMessage(`[1,2`)}, "", nil, ""},
	}
	for _, tc := range tests {
		c := toolCallOf(tc.ev)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if c.Output != tc.output || !slices.Equal(c.Files, tc.files) || c.Status != tc.status {
			t.Errorf("%s: got output %q files %q status %q", tc.name, c.Output, c.Files, c.Status)
		}
	}
	// Bounded: a huge response is cut, and so is the file list.
	many := make([]string, 5000)
	for i := range many {
		many[i] = "f"
	}
	c := toolCallOf(Event{Kind: KindTool, ToolName: "Grep", ToolResponse: raw(map[string]any{"filenames": many,
		"content": strings.Repeat("x", 1<<20)})})
	if len(c.Files) != explore.MaxHookFiles || len(c.Output) > explore.MaxHookOutput {
		t.Errorf("unbounded: %d files, %d bytes", len(c.Files), len(c.Output))
	}
}
