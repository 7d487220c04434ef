package explore

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)

// newTracker starts a session of a built-in strategy with its pipeline's
// budget, adjusted by tweak.
func newTracker(t testing.TB, name string, tweak func(*Budget)) *Tracker {
	t.Helper()
	s, err := BuiltinStrategy(name)
	if err != nil {
		t.Fatal(err)
	}
	b := BudgetFor(s.Pipeline)
	if tweak != nil {
		tweak(&b)
	}
	tr, err := New(s, b)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// setMetrics sets counters by metric name; "a,b" sets both to the value.
func setMetrics(t testing.TB, tr *Tracker, values map[string]int) {
	t.Helper()
	for names, v := range values {
		for _, name := range strings.Split(names, ",") {
			c := &tr.s.Counters
			switch name {
			case "iteration":
				c.Iteration = v
			case "phase_rounds":
				c.PhaseRounds = v
			case "search_rounds_in_phase":
				c.SearchRoundsInPhase = v
			case "rounds_since_new_info":
				c.RoundsSinceNewInfo = v
			case "rounds_since_submit":
				c.RoundsSinceSubmit = v
			case "consecutive_idle_rounds":
				c.ConsecutiveIdleRounds = v
			case "submit_count":
				c.SubmitCount = v
			case "finding_count":
				c.FindingCount = v
			case "verified_finding_count":
				c.VerifiedFindingCount = v
			case "depth_slotted_finding_count":
				c.DepthSlottedFindings = v
			case "evidence_count":
				c.EvidenceCount = v
			case "unique_files":
				tr.s.Files = KeySet{}
				for i := range v {
					tr.s.Files.add(fmt.Sprintf("f%d.go", i))
				}
			default:
				t.Fatalf("setMetrics: unknown metric %q", name)
			}
		}
	}
}

// round runs one tool round: Tick, ShouldExit, Nudge, the calls, EndRound.
func round(t testing.TB, tr *Tracker, calls ...ToolCall) (nudge, transition *Nudge) {
	t.Helper()
	tr.Tick(t0)
	tr.ShouldExit()
	nudge = tr.Nudge()
	for _, c := range calls {
		if _, err := tr.RecordToolCall(c); err != nil {
			t.Fatal(err)
		}
	}
	return nudge, tr.EndRound()
}

func grep(pattern string) ToolCall {
	return ToolCall{Name: "Grep", Args: map[string]any{"pattern": pattern}}
}
func read(path string) ToolCall {
	return ToolCall{Name: "Read", Args: map[string]any{"file_path": path}}
}
func submit(title string) ToolCall {
	return ToolCall{Name: "submit_knowledge", Args: map[string]any{"title": title}}
}
func finding(text, evidence string) ToolCall {
	return ToolCall{Name: "note_finding", Args: map[string]any{"text": text, "evidence": evidence}}
}

func kindOf(n *Nudge) NudgeKind {
	if n == nil {
		return ""
	}
	return n.Kind
}
