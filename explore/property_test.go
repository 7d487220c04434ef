package explore

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// eventGen draws agent-loop events from small pools, so files, patterns and
// commands repeat and every rule gets exercised.
func eventGen() *rapid.Generator[Event] {
	types := []EventType{
		EventTick, EventTick, EventTick, EventTick, EventTick, EventTick,
		EventToolCall, EventToolCall, EventToolCall, EventToolCall, EventToolCall, EventToolCall, EventToolCall,
		EventEndRound, EventEndRound, EventEndRound,
		EventText, EventText, EventThought, EventRollback, EventForceTerminal,
	}
	names := []string{"Grep", "Read", "LS", "Bash", "submit_knowledge", "note_finding", "collect_scan_recipe", "TodoWrite", "WebSearch", "mcp__x__code_search"}
	files := []string{"a.go", "b.go", "./a.go", "c/d.go", "e.go"}
	statuses := []CallStatus{"", StatusOK, StatusOK, StatusError, StatusRejected, StatusDuplicate}
	texts := []string{"", "done", "Plan:\n1. Read the `Tracker` type\n2. Search for transitions\n3. Submit the findings", "```json\n{}\n```"}
	return rapid.Custom(func(t *rapid.T) Event {
		ev := Event{Type: rapid.SampledFrom(types).Draw(t, "type")}
		switch ev.Type {
		case EventToolCall:
			ev.Name = rapid.SampledFrom(names).Draw(t, "name")
			f := rapid.SampledFrom(files).Draw(t, "file")
			ev.Args = map[string]any{"file_path": f, "pattern": f, "command": "cat " + f, "evidence": f + ":3"}
			ev.Status = rapid.SampledFrom(statuses).Draw(t, "status")
			if rapid.Bool().Draw(t, "output") {
				ev.Output = f + ":12:match"
			}
		case EventText, EventThought:
			ev.Text = rapid.SampledFrom(texts).Draw(t, "text")
		case EventForceTerminal:
			ev.Reason = "token_pressure"
		}
		return ev
	})
}

// session draws a built-in strategy and a small valid budget (hard_exit_rounds 2).
func session(t *rapid.T) (Strategy, Budget) {
	s, _ := BuiltinStrategy(rapid.SampledFrom(BuiltinStrategies()).Draw(t, "strategy"))
	b := DefaultBudget()
	b.MaxIterations = rapid.IntRange(1, 30).Draw(t, "max_iterations")
	b.SearchBudget = rapid.IntRange(0, 20).Draw(t, "search_budget")
	b.SearchBudgetGrace = rapid.IntRange(0, 12).Draw(t, "search_budget_grace")
	b.MaxSubmits = rapid.IntRange(0, 12).Draw(t, "max_submits")
	b.SoftSubmitLimit = rapid.IntRange(0, b.MaxSubmits).Draw(t, "soft_submit_limit")
	b.IdleRoundsToExit = rapid.IntRange(0, 5).Draw(t, "idle_rounds_to_exit")
	b.TerminalGraceRounds = rapid.IntRange(1, 4).Draw(t, "terminal_grace_rounds")
	return s, b
}

// observation is everything a runtime can see from one event.
type observation struct {
	Nudges   []*Nudge
	Decision *TextDecision
	Call     CallResult
	Exit     ExitReason
	Phase    string
	Choice   ToolChoice
	Context  string
	Metrics  Metrics
	Quality  Quality
}

// step applies one event the way a runtime does (tick → ShouldExit → Nudge).
func step(tr *Tracker, ev Event) observation {
	var o observation
	switch ev.Type {
	case EventTick:
		tr.Tick(t0)
		if _, exit := tr.ShouldExit(); !exit {
			n := tr.Nudge()
			o.Nudges = append(o.Nudges, n, tr.Nudge())
		}
	case EventRollback:
		tr.RollbackTick()
	case EventToolCall:
		o.Call, _ = tr.RecordToolCall(ev.ToolCall)
	case EventEndRound:
		o.Nudges = append(o.Nudges, tr.EndRound())
	case EventThought:
		tr.RecordThought(ev.Text)
	case EventText:
		d := tr.OnTextResponse(ev.Text)
		o.Decision = &d
	case EventForceTerminal:
		tr.ForceTerminal(ev.Reason)
	}
	o.Exit, _ = tr.Done()
	o.Phase, o.Choice, o.Context = tr.Phase(), tr.ToolChoice(), tr.PhaseContext()
	o.Metrics, o.Quality = tr.Metrics(), tr.Quality()
	return o
}

// TestPropertySessionBounds: for any event sequence, a session never runs
// more than max_iterations + 2 rounds (it has exited by then), never leaves
// the terminal phase once it entered it, only moves forward through its
// phases, and gives at most one start-of-round nudge per round.
func TestPropertySessionBounds(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		s, b := session(rt)
		events := rapid.SliceOfN(eventGen(), 0, 300).Draw(rt, "events")
		tr, err := New(s, b)
		if err != nil {
			rt.Fatal(err)
		}
		limit := b.MaxIterations + 2
		index, terminal := 0, false
		for i, ev := range events {
			o := step(tr, ev)
			if tr.Iteration() > limit {
				rt.Fatalf("event %d: iteration %d beyond max_iterations + 2 = %d", i, tr.Iteration(), limit)
			}
			if ev.Type == EventTick && tr.Iteration() >= limit && o.Exit == "" {
				rt.Fatalf("event %d: still running at iteration %d", i, tr.Iteration())
			}
			if len(o.Nudges) == 2 && o.Nudges[1] != nil {
				rt.Fatalf("event %d: two nudges in one round", i)
			}
			idx := s.PhaseIndex(tr.Phase())
			if idx < index {
				rt.Fatalf("event %d: phase went back from %s to %s", i, s.Phases[index].Name, tr.Phase())
			}
			if terminal && tr.Phase() != s.Terminal() {
				rt.Fatalf("event %d: left the terminal phase for %s", i, tr.Phase())
			}
			index, terminal = idx, tr.Phase() == s.Terminal()
			if tr.GracefulExit() && o.Exit == "" && o.Choice.Mode != ChoiceNone {
				rt.Fatalf("event %d: tool choice %s during graceful exit", i, o.Choice.Mode)
			}
		}
		// Ticking on always ends the session within the limit.
		for range limit + 1 {
			step(tr, Event{Type: EventTick})
		}
		if _, done := tr.Done(); !done || tr.Iteration() > limit {
			rt.Fatalf("not done after ticking on: iteration %d", tr.Iteration())
		}
	})
}

// TestPropertySnapshotRoundTrip: restoring a JSON snapshot taken at any point
// yields a tracker that answers every later event exactly like the original.
func TestPropertySnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		s, b := session(rt)
		events := rapid.SliceOfN(eventGen(), 0, 200).Draw(rt, "events")
		cut := rapid.IntRange(0, len(events)).Draw(rt, "cut")
		orig, err := New(s, b)
		if err != nil {
			rt.Fatal(err)
		}
		for _, ev := range events[:cut] {
			step(orig, ev)
		}
		data, err := json.Marshal(orig.Snapshot())
		if err != nil {
			rt.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			rt.Fatal(err)
		}
		restored, err := Restore(st)
		if err != nil {
			rt.Fatalf("restore: %v", err)
		}
		for i, ev := range events[cut:] {
			a, b := step(orig, ev), step(restored, ev)
			if diff := cmp.Diff(a, b); diff != "" {
				rt.Fatalf("event %d after the cut (%s) differs:\n%s", i, ev.Type, diff)
			}
		}
		ja, _ := json.Marshal(orig.Snapshot())
		jb, _ := json.Marshal(restored.Snapshot())
		if string(ja) != string(jb) {
			rt.Fatalf("final snapshots differ:\n%s", cmp.Diff(string(ja), string(jb)))
		}
	})
}
