package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/mcp"
)

// The core profile serves the few tools an agent uses in every task, at a
// fraction of the full set's definitions; both offer the guidance digest
// as a resource and the planning prompt.
func TestCoreProfile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	core := setup(t, func(so *setupOpts) { so.opts.Tools = mcp.ProfileCore })
	full := setup(t)
	list := func(b *testBundle) ([]string, int) {
		res, err := b.session.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		data, _ := json.Marshal(res.Tools)
		return names, len(data)
	}
	coreNames, coreSize := list(core)
	fullNames, fullSize := list(full)
	slices.Sort(coreNames)
	want := []string{"heuristic_feedback", "plan_guidance", "recall", "record_error", "record_outcome", "trace_check"}
	if !slices.Equal(coreNames, want) {
		t.Errorf("core tools %v, want %v", coreNames, want)
	}
	if len(fullNames) < 30 || coreSize*4 > fullSize {
		t.Errorf("full: %d tools, %d bytes; core: %d bytes (want at most a quarter)", len(fullNames), fullSize, coreSize)
	}
	t.Logf("tool definitions: core %d bytes (%d tools), full %d bytes (%d tools)", coreSize, len(coreNames), fullSize, len(fullNames))
	if names, err := mcp.ProfileTools("core"); err != nil || len(names) != len(want) {
		t.Errorf("ProfileTools(core) = %v, %v", names, err)
	}
	if _, err := mcp.ProfileTools("tiny"); err == nil || !strings.Contains(err.Error(), "core, full") {
		t.Errorf("an unknown profile: %v", err)
	}

	// the guidance digest as a resource, after an outcome taught something
	if _, err := core.engine.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "t1", DurationMs: ptr(int64(60000)),
		Success: ptr(true), Patterns: []string{"Split by feature"}}); err != nil {
		t.Fatal(err)
	}
	rs, err := core.session.ListResources(ctx, nil)
	if err != nil || len(rs.Resources) != 1 || rs.Resources[0].URI != "kaizen://guidance" {
		t.Fatalf("resources %+v %v", rs, err)
	}
	res, err := core.session.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "kaizen://guidance"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "Split by feature") {
		t.Fatalf("guidance resource %+v %v", res, err)
	}
	p, err := core.session.GetPrompt(ctx, &mcpsdk.GetPromptParams{Name: "plan_with_kaizen", Arguments: map[string]string{"task": "add OAuth"}})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("prompt %+v %v", p, err)
	}
	if text := p.Messages[0].Content.(*mcpsdk.TextContent).Text; !strings.Contains(text, "Plan this task: add OAuth") ||
		!strings.Contains(text, "record_outcome") {
		t.Errorf("prompt text %q", text)
	}
}

// The trace pre-check (and any later tool) joins the core profile with
// AddToProfile.
func TestAddToProfile(t *testing.T) {
	t.Parallel()
	mcp.AddToProfile("review", "list_patterns", "get_pattern")
	names, err := mcp.ProfileTools("review")
	if err != nil || !slices.Equal(names, []string{"list_patterns", "get_pattern"}) && !slices.Equal(names, []string{"get_pattern", "list_patterns"}) {
		t.Errorf("review profile %v %v", names, err)
	}
}

func ptr[T any](v T) *T { return &v }
