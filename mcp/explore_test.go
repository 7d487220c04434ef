package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

func exploreRound(session, tool string, args map[string]any) map[string]any {
	return map[string]any{"session_id": session, "events": []any{
		map[string]any{"type": "tick"},
		map[string]any{"type": "tool_call", "name": tool, "args": args},
		map[string]any{"type": "end_round"},
	}}
}

// An agent loop driven through the exploration tools: the session runs
// through its phases, nudges reach the agent as text, the session ends
// within its budget, and its state (with the timeline) survives a new
// server on the same database.
func TestExplorationTools(t *testing.T) {
	t.Parallel()
	b := setup(t, func(so *setupOpts) { so.sqlite = true })
	budget := "max_iterations = 6\nsearch_budget = 4\nsearch_budget_grace = 2\nmax_submits = 0\nsoft_submit_limit = 0\nidle_rounds_to_exit = 2\n"

	var info kaizen.ExploreInfo
	text := b.ok("explore_start", map[string]any{"session_id": "sess-1", "strategy": "analyst", "budget_toml": budget}, &info)
	if info.SessionID != "sess-1" || info.Strategy != "analyst" || info.Done || info.Project != "test" {
		t.Fatalf("started %+v", info)
	}
	if !strings.Contains(text, "Exploration session sess-1 (strategy analyst): phase "+info.Phase) {
		t.Errorf("start text %q", text)
	}
	// Starting again is idempotent: the session is returned unchanged.
	var again kaizen.ExploreInfo
	b.ok("explore_start", map[string]any{"session_id": "sess-1", "strategy": "scan"}, &again)
	if again.Strategy != "analyst" || again.CreatedAt != info.CreatedAt {
		t.Errorf("second start changed the session: %+v", again)
	}

	var (
		last   kaizen.ExploreEventResult
		nudged []string
	)
	for i := range 12 {
		last = kaizen.ExploreEventResult{}
		text = b.ok("explore_event", exploreRound("sess-1", "Grep", map[string]any{"pattern": fmt.Sprintf("term%d", i%3)}), &last)
		if n := last.Nudge; n != nil {
			nudged = append(nudged, string(n.Kind))
			if !strings.Contains(text, n.Text) {
				t.Errorf("round %d: the nudge is not in the text:\n%s", i, text)
			}
		}
		if last.Session.Done {
			break
		}
		if !strings.Contains(text, fmt.Sprintf("Phase %s, round %d.", last.Session.Phase, last.Session.Iteration)) {
			t.Errorf("round %d text %q", i, text)
		}
	}
	if !last.Session.Done || last.Session.Exit == "" {
		t.Fatalf("the session did not end within its budget: %+v", last.Session)
	}
	if !strings.Contains(text, "The exploration has ended ("+last.Session.Exit+")") {
		t.Errorf("final text %q", text)
	}
	if !strings.Contains(strings.Join(nudged, ","), "force_exit") {
		t.Errorf("nudges %v: the forced exit must reach the agent", nudged)
	}

	// A second server on the same engine (a daemon restart keeps sessions
	// in the database) sees the whole history.
	b2 := setupOn(t, b.engine)
	var state kaizen.ExploreInfo
	text = b2.ok("explore_state", map[string]any{"session_id": "sess-1"}, &state)
	if !state.Done || state.Timeline == nil || len(state.Timeline.Rounds) == 0 || state.Metrics.TotalToolCalls == 0 {
		t.Fatalf("state %+v", state)
	}
	if !strings.Contains(text, "Nudges given:") || !strings.Contains(text, "force_exit") {
		t.Errorf("state text lacks the nudges:\n%s", text)
	}
}

func TestExplorationToolErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		wants []string
	}{
		{"missing session", "explore_start", map[string]any{}, []string{`"session_id"`}},
		{"unknown strategy", "explore_start", map[string]any{"session_id": "s", "strategy": "wander"}, []string{"wander"}},
		{"bad budget", "explore_start", map[string]any{"session_id": "s", "budget_toml": "max_iterations = \"many\""}, []string{"budget"}},
		{"no such session", "explore_event", exploreRound("nobody", "Read", nil), []string{"(not_found)", "explore_start"}},
		{"auto start while disabled", "explore_event", map[string]any{"session_id": "s2", "auto_start": true,
			"events": []any{map[string]any{"type": "tick"}}}, []string{"(conflict)", "not enabled"}},
		{"unknown event type", "explore_event", map[string]any{"session_id": "s1", "events": []any{map[string]any{"type": "jump"}}},
			[]string{"jump"}},
		{"tool call without a name", "explore_event", map[string]any{"session_id": "s1", "events": []any{map[string]any{"type": "tool_call"}}},
			[]string{"tool name"}},
		{"no events", "explore_event", map[string]any{"session_id": "s1", "events": []any{}}, []string{"events"}},
		{"unknown state", "explore_state", map[string]any{"session_id": "ghost"}, []string{"(not_found)"}},
	}
	b.ok("explore_start", map[string]any{"session_id": "s1"}, nil)
	var before kaizen.ExploreInfo
	b.ok("explore_state", map[string]any{"session_id": "s1"}, &before)
	for _, tc := range tests {
		text := b.fail(tc.tool, tc.args)
		for _, w := range tc.wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: error text lacks %q:\n%s", tc.name, w, text)
			}
		}
	}
	// A batch with one bad event changes nothing.
	b.fail("explore_event", map[string]any{"session_id": "s1", "events": []any{
		map[string]any{"type": "tick"}, map[string]any{"type": "tool_call", "name": "Read", "status": "maybe"}}})
	var after kaizen.ExploreInfo
	b.ok("explore_state", map[string]any{"session_id": "s1"}, &after)
	if after.Iteration != before.Iteration || after.UpdatedAt != before.UpdatedAt {
		t.Errorf("a rejected batch changed the session: %+v → %+v", before, after)
	}
	if _, err := b.engine.ExploreState(context.Background(), "", "s2"); kaizen.KindOf(err) != kaizen.KindNotFound {
		t.Errorf("a refused auto start created the session: %v", err)
	}
}
