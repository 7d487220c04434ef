package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
)

const tightBudget = "max_iterations = 8\nsearch_budget = 4\nsearch_budget_grace = 2\nmax_submits = 0\n" +
	"soft_submit_limit = 0\nidle_rounds_to_exit = 2\n"

// claudeTool is a Claude Code PostToolUse payload of session s: a Grep
// call whose response lists one file.
func claudeTool(t *testing.T, s string, i int) []byte {
	t.Helper()
	data, err := json.Marshal(map[string]any{"session_id": s, "cwd": "/home/dev/src/webapp", "hook_event_name": "PostToolUse",
		"tool_name": "Grep", "tool_input": map[string]any{"pattern": fmt.Sprintf("oauth%d", i), "path": "src"},
		"tool_response": map[string]any{"mode": "files_with_matches", "filenames": []string{fmt.Sprintf("src/auth/f%d.ts", i)}, "numFiles": 1}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (b *testBundle) handle(t *testing.T, c hook.Client, name string, payload []byte) (hook.Response, []byte) {
	t.Helper()
	ev, err := hook.Parse(c, name, payload)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.h.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s: %v", c, name, err)
	}
	return resp, hook.Render(c, name, resp)
}

func (b *testBundle) enableExploration(t *testing.T, strategy, budget string) {
	t.Helper()
	b.h.Advisors = []hook.Advisor{hook.ExploreAdvisor{Backend: b.e}}
	if _, err := b.e.SetExploreSettings(context.Background(), kaizen.ExploreSettings{Project: "webapp", Enabled: true,
		Strategy: strategy, BudgetTOML: budget}); err != nil {
		t.Fatal(err)
	}
}

// Exploration tracking is opt-in: until the project enables it, tool
// calls create no session and the agent hears nothing more.
func TestExplorationIsOptIn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.Advisors = []hook.Advisor{hook.ExploreAdvisor{Backend: b.e}}
	for i := range 3 {
		if resp, _ := b.handle(t, hook.Claude, "PostToolUse", claudeTool(t, "s1", i)); resp.Context != "" {
			t.Errorf("round %d: context %q while exploration is disabled", i, resp.Context)
		}
	}
	if resp, _ := b.handle(t, hook.Claude, "Stop", fixture(t, hook.Claude, "Stop")); resp.Continue != "" {
		t.Errorf("stop: %+v", resp)
	}
	list, err := b.e.ListExploreSessions(context.Background(), kaizen.ExploreQuery{Project: "webapp"})
	if err != nil || list.Total != 0 {
		t.Fatalf("sessions %+v, %v", list, err)
	}
}

// With exploration enabled, each tool call is a round of the session's
// tracker: phase changes, budget warnings and the forced exit reach the
// agent as additional context, files in tool responses count as new
// information, and the session's summary reaches the task's outcome.
func TestExplorationNudgesReachTheAgent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.enableExploration(t, "analyst", tightBudget)
	var kinds []string
	for i := range 12 {
		resp, out := b.handle(t, hook.Claude, "PostToolUse", claudeTool(t, "s1", i))
		if resp.Context == "" {
			continue
		}
		if !strings.HasPrefix(resp.Context, "## kaizen: exploration\n\n") {
			t.Errorf("round %d context %q", i, resp.Context)
		}
		var rendered struct {
			HookSpecificOutput struct{ HookEventName, AdditionalContext string }
		}
		mustDecode(t, out, &rendered)
		if rendered.HookSpecificOutput.AdditionalContext != resp.Context {
			t.Errorf("round %d: rendered %s", i, out)
		}
		kinds = append(kinds, resp.Context)
	}
	all := strings.Join(kinds, "\n")
	for _, want := range []string{"Overview done.", "budget is spent"} {
		if !strings.Contains(all, want) {
			t.Errorf("the agent never heard %q:\n%s", want, all)
		}
	}
	st, err := b.e.ExploreState(context.Background(), "webapp", "claude-s1")
	if err != nil {
		t.Fatal(err)
	}
	// 8 rounds, the grace rounds of the forced exit, then the hard limit;
	// calls after the end are ignored.
	calls := st.Metrics.TotalToolCalls
	if !st.Done || st.Exit == "" || calls < 8 || calls > 10 || st.Metrics.UniqueFiles != calls {
		t.Errorf("session %+v", st)
	}
	out, err := b.e.RecordOutcome(context.Background(), kaizen.OutcomeInput{Project: "webapp", TaskID: "claude-s1", Success: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	if x := out.Outcome.Exploration; x == nil || x.ToolCalls != calls || x.Exit != st.Exit || x.Strategy != "analyst" {
		t.Errorf("outcome exploration %+v", x)
	}
}

// At a stop, a tracker that does not take the reply as the final answer
// and has instructions (here, the summary format of a document strategy)
// asks the agent to continue, once.
func TestExplorationStopAsksForTheSummary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.enableExploration(t, "bootstrap-skill", "")
	b.handle(t, hook.Claude, "PostToolUse", claudeTool(t, "9f0c1e52-6a8e-4c55-b1d2-2f0a6d3c7e11", 0))
	stop := fixture(t, hook.Claude, "Stop")
	resp, out := b.handle(t, hook.Claude, "Stop", stop)
	var decision struct{ Decision, Reason string }
	mustDecode(t, out, &decision)
	if decision.Decision != "block" || decision.Reason == "" || decision.Reason != resp.Continue {
		t.Fatalf("stop: %s", out)
	}
	// The continuation the stop caused is not blocked again.
	var p map[string]any
	if err := json.Unmarshal(stop, &p); err != nil {
		t.Fatal(err)
	}
	p["stop_hook_active"] = true
	again, _ := json.Marshal(p)
	if resp, _ := b.handle(t, hook.Claude, "Stop", again); resp.Continue != "" {
		t.Errorf("second stop: %+v", resp)
	}
	// A stop without an exploration session says nothing.
	other := strings.Replace(string(stop), "9f0c1e52", "00000000", 1)
	if resp, _ := b.handle(t, hook.Claude, "Stop", []byte(other)); resp.Continue != "" || resp.Context != "" {
		t.Errorf("stop of another session: %+v", resp)
	}
}
