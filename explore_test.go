package kaizen_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

func toolRound(name string, args map[string]any) []explore.Event {
	return []explore.Event{{Type: explore.EventTick}, {Type: explore.EventToolCall, ToolCall: explore.ToolCall{Name: name, Args: args}},
		{Type: explore.EventEndRound}}
}

// Exploration sessions persist between calls, nudge when the budget says
// so, end, and hand their summary to the task and its outcome.
func TestExplorationServiceLoop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		// Opt-in: events with auto start are refused until enabled.
		_, err := b.e.ExploreEvent(ctx, kaizen.ExploreEventInput{SessionID: "s1", Events: toolRound("Read", nil), AutoStart: true})
		if kaizen.KindOf(err) != kaizen.KindConflict {
			t.Fatalf("before enable: %v", err)
		}
		if _, err := b.e.SetExploreSettings(ctx, kaizen.ExploreSettings{Enabled: true, Strategy: "nope"}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Fatalf("bad strategy: %v", err)
		}
		budget := "max_iterations = 6\nsearch_budget = 4\nsearch_budget_grace = 2\nmax_submits = 0\nsoft_submit_limit = 0\nidle_rounds_to_exit = 2\n"
		if _, err := b.e.SetExploreSettings(ctx, kaizen.ExploreSettings{Enabled: true, Strategy: "analyst", BudgetTOML: budget}); err != nil {
			t.Fatal(err)
		}
		// The session is also a tracked task: its summary reaches the outcome.
		if _, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "s1", Kind: "start"}); err != nil {
			t.Fatal(err)
		}
		var nudges []string
		var last *kaizen.ExploreEventResult
		for i := range 12 {
			b.clock.Advance(10 * time.Second)
			res, err := b.e.ExploreEvent(ctx, kaizen.ExploreEventInput{SessionID: "s1", AutoStart: true,
				Events: toolRound("Grep", map[string]any{"pattern": sprintf("term%d", i%3)})})
			if err != nil {
				t.Fatal(err)
			}
			if res.Nudge != nil {
				nudges = append(nudges, string(res.Nudge.Kind))
			}
			last = res
			if res.Session.Done {
				break
			}
		}
		if !last.Session.Done || last.Session.Exit == "" {
			t.Fatalf("the session must end within its budget: %+v", last.Session)
		}
		if len(nudges) == 0 || !strings.Contains(strings.Join(nudges, ","), "force_exit") {
			t.Errorf("nudges %v: graceful exit must reach the agent", nudges)
		}
		state, err := b.e.ExploreState(ctx, "", "s1")
		if err != nil || state.Timeline == nil || len(state.Timeline.Rounds) == 0 || !state.Done {
			t.Fatalf("state %+v %v", state, err)
		}
		// Events after the end are ignored, not errors.
		res, err := b.e.ExploreEvent(ctx, kaizen.ExploreEventInput{SessionID: "s1", Events: toolRound("Read", nil)})
		if err != nil || !res.Steps[0].Ignored {
			t.Fatalf("after the end: %+v %v", res, err)
		}
		out, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "s1", Success: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		x := out.Outcome.Exploration
		if x == nil || x.SessionID != "s1" || x.Strategy != "analyst" || x.ToolCalls == 0 || x.Exit != last.Session.Exit {
			t.Fatalf("outcome exploration summary %+v", x)
		}
		stored, err := b.e.GetOutcome(ctx, "", out.Outcome.ID)
		if err != nil || stored.Exploration == nil || stored.Exploration.Rounds != x.Rounds {
			t.Fatalf("stored outcome %+v %v", stored, err)
		}
		list, err := b.e.ListExploreSessions(ctx, kaizen.ExploreQuery{})
		if err != nil || list.Total != 1 {
			t.Fatalf("list %+v %v", list, err)
		}
		active, _ := b.e.ListExploreSessions(ctx, kaizen.ExploreQuery{ActiveOnly: true})
		if active.Total != 0 {
			t.Errorf("a finished session is not active")
		}
	})
}

func TestExploreInputErrorsChangeNothing(t *testing.T) {
	b := setup(t, "sqlite")
	if _, err := b.e.ExploreStart(ctx, kaizen.ExploreStartInput{SessionID: "s", Strategy: "producer"}); err != nil {
		t.Fatal(err)
	}
	before, _ := b.e.ExploreState(ctx, "", "s")
	for _, in := range []kaizen.ExploreEventInput{
		{SessionID: "s"},
		{SessionID: "", Events: toolRound("Read", nil)},
		{SessionID: "s", Events: []explore.Event{{Type: "explode"}}},
		{SessionID: "s", Events: append(toolRound("Read", nil), explore.Event{Type: explore.EventToolCall})}, // no tool name
		{SessionID: "missing", Events: toolRound("Read", nil)},
	} {
		if _, err := b.e.ExploreEvent(ctx, in); err == nil || kaizen.KindOf(err) == kaizen.KindInternal {
			t.Errorf("%+v: %v", in, err)
		}
	}
	after, _ := b.e.ExploreState(ctx, "", "s")
	if before.Iteration != after.Iteration || len(after.Timeline.Rounds) != len(before.Timeline.Rounds) {
		t.Errorf("rejected events changed the session")
	}
	// Replay needs no store.
	tl, err := kaizen.ExploreReplay(kaizen.ExploreSettings{Strategy: "bootstrap"}, toolRound("Read", map[string]any{"file_path": "a.go"}))
	if err != nil || len(tl.Rounds) != 1 {
		t.Fatalf("replay %+v %v", tl, err)
	}
}
