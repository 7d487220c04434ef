package explore

import (
	"fmt"
	"testing"
)

// TestTransitionThresholds checks every clause of every transition rule of
// every built-in strategy at its exact threshold: the varied metric one
// below the threshold does not fire the rule, at and one above it does.
// Guard cases (never) check that a clause's guard blocks it.
func TestTransitionThresholds(t *testing.T) {
	t.Parallel()
	type tc struct {
		strategy string
		from, to string
		text     bool           // on_text instead of on_metrics
		base     map[string]int // other metrics
		metric   string         // varied metric ("" = no variation: base decides)
		at       int
		never    bool // the rule must not fire at any of the three values
	}
	cases := []tc{
		// bootstrap (default budget: search 18, grace 10, submits 10, soft 8, idle 3)
		{strategy: "bootstrap", from: "EXPLORE", to: "PRODUCE", metric: "submit_count", at: 1},
		{strategy: "bootstrap", from: "EXPLORE", to: "PRODUCE", metric: "search_rounds_in_phase", at: 18},
		{strategy: "bootstrap", from: "EXPLORE", to: "PRODUCE", text: true},
		{strategy: "bootstrap", from: "PRODUCE", to: "SUMMARIZE", metric: "submit_count", at: 10},
		{strategy: "bootstrap", from: "PRODUCE", to: "SUMMARIZE", base: map[string]int{"submit_count": 1}, metric: "rounds_since_submit", at: 3},
		{strategy: "bootstrap", from: "PRODUCE", to: "SUMMARIZE", base: map[string]int{"submit_count": 0}, metric: "rounds_since_submit", at: 3, never: true},
		{strategy: "bootstrap", from: "PRODUCE", to: "SUMMARIZE", metric: "consecutive_idle_rounds", at: 10},
		{strategy: "bootstrap", from: "PRODUCE", to: "SUMMARIZE", base: map[string]int{"submit_count": 1}, metric: "consecutive_idle_rounds", at: 10, never: true},
		{strategy: "bootstrap", from: "PRODUCE", to: "SUMMARIZE", text: true, metric: "submit_count", at: 8},
		// bootstrap-skill
		{strategy: "bootstrap-skill", from: "EXPLORE", to: "SUMMARIZE", metric: "submit_count", at: 1},
		{strategy: "bootstrap-skill", from: "EXPLORE", to: "SUMMARIZE", metric: "search_rounds_in_phase", at: 18},
		{strategy: "bootstrap-skill", from: "EXPLORE", to: "SUMMARIZE", text: true},
		// analyst (max 24: 0.4·24 = 9, 0.6·24 = 14, 0.75·24 = 18)
		{strategy: "analyst", from: "SCAN", to: "EXPLORE", metric: "iteration", at: 2},
		{strategy: "analyst", from: "SCAN", to: "EXPLORE", text: true, metric: "iteration", at: 5, never: true},
		{strategy: "analyst", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3}, metric: "search_rounds_in_phase", at: 14},
		{strategy: "analyst", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3}, metric: "rounds_since_new_info", at: 3},
		{strategy: "analyst", from: "EXPLORE", to: "VERIFY", base: map[string]int{"rounds_since_new_info": 2}, metric: "iteration", at: 9},
		{strategy: "analyst", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 9}, metric: "rounds_since_new_info", at: 2},
		{strategy: "analyst", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3}, metric: "consecutive_idle_rounds", at: 2},
		{strategy: "analyst", from: "EXPLORE", to: "VERIFY", text: true, metric: "iteration", at: 9},
		{strategy: "analyst", from: "VERIFY", to: "RECORD", metric: "iteration", at: 18},
		{strategy: "analyst", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 10}, metric: "rounds_since_new_info", at: 2},
		{strategy: "analyst", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 10}, metric: "consecutive_idle_rounds", at: 1},
		{strategy: "analyst", from: "VERIFY", to: "RECORD", text: true},
		{strategy: "analyst", from: "RECORD", to: "SUMMARIZE", metric: "finding_count", at: 3},
		{strategy: "analyst", from: "RECORD", to: "SUMMARIZE", text: true, metric: "finding_count", at: 3},
		// analyst-evidence
		{strategy: "analyst-evidence", from: "SCAN", to: "EXPLORE", metric: "phase_rounds", at: 1},
		{strategy: "analyst-evidence", from: "SCAN", to: "EXPLORE", metric: "iteration", at: 1},
		{strategy: "analyst-evidence", from: "SCAN", to: "EXPLORE", text: true},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3, "rounds_since_new_info": 3}, metric: "evidence_count", at: 1},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3, "evidence_count": 1}, metric: "search_rounds_in_phase", at: 14},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3, "evidence_count": 1}, metric: "rounds_since_new_info", at: 3},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"rounds_since_new_info": 2, "evidence_count": 1}, metric: "iteration", at: 9},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3, "evidence_count": 1}, metric: "consecutive_idle_rounds", at: 2},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3}, metric: "rounds_since_new_info", at: 3, never: true},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3, "evidence_count": 2}, metric: "finding_count", at: 3},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", base: map[string]int{"iteration": 3, "finding_count": 3}, metric: "evidence_count", at: 2},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", text: true, base: map[string]int{"evidence_count": 1}, metric: "iteration", at: 9},
		{strategy: "analyst-evidence", from: "EXPLORE", to: "VERIFY", text: true, base: map[string]int{"iteration": 9}, metric: "evidence_count", at: 1},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 5, "rounds_since_new_info": 2}, metric: "evidence_count", at: 2},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 5, "rounds_since_new_info": 2}, metric: "finding_count", at: 1},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 5, "evidence_count": 2}, metric: "finding_count", at: 3},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"evidence_count": 2}, metric: "iteration", at: 18},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 5, "evidence_count": 2}, metric: "rounds_since_new_info", at: 2},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 5, "evidence_count": 2}, metric: "consecutive_idle_rounds", at: 1},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", base: map[string]int{"iteration": 5, "evidence_count": 1}, metric: "rounds_since_new_info", at: 2, never: true},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", text: true, metric: "evidence_count", at: 2},
		{strategy: "analyst-evidence", from: "VERIFY", to: "RECORD", text: true, metric: "finding_count", at: 1},
		{strategy: "analyst-evidence", from: "RECORD", to: "SUMMARIZE", metric: "verified_finding_count,finding_count", at: 3},
		{strategy: "analyst-evidence", from: "RECORD", to: "SUMMARIZE", base: map[string]int{"verified_finding_count": 2, "finding_count": 2}, metric: "depth_slotted_finding_count", at: 2},
		{strategy: "analyst-evidence", from: "RECORD", to: "SUMMARIZE", base: map[string]int{"finding_count": 5}, metric: "verified_finding_count", at: 3},
		{strategy: "analyst-evidence", from: "RECORD", to: "SUMMARIZE", base: map[string]int{"evidence_count": 8, "unique_files": 5}, metric: "verified_finding_count,finding_count", at: 4},
		{strategy: "analyst-evidence", from: "RECORD", to: "SUMMARIZE", base: map[string]int{"evidence_count": 20, "unique_files": 1}, metric: "verified_finding_count,finding_count", at: 3},
		{strategy: "analyst-evidence", from: "RECORD", to: "SUMMARIZE", text: true, metric: "verified_finding_count,finding_count", at: 3},
		// producer (grace 3, submits 10, soft 10, idle 3)
		{strategy: "producer", from: "PRODUCE", to: "SUMMARIZE", metric: "submit_count", at: 10},
		{strategy: "producer", from: "PRODUCE", to: "SUMMARIZE", base: map[string]int{"submit_count": 1}, metric: "rounds_since_submit", at: 3},
		{strategy: "producer", from: "PRODUCE", to: "SUMMARIZE", metric: "consecutive_idle_rounds", at: 3},
		{strategy: "producer", from: "PRODUCE", to: "SUMMARIZE", text: true, metric: "submit_count", at: 10},
		// scan (grace 10, submits 10, soft 8, idle 2)
		{strategy: "scan", from: "PRODUCE", to: "SUMMARIZE", metric: "submit_count", at: 10},
		{strategy: "scan", from: "PRODUCE", to: "SUMMARIZE", base: map[string]int{"submit_count": 1}, metric: "rounds_since_submit", at: 2},
		{strategy: "scan", from: "PRODUCE", to: "SUMMARIZE", metric: "consecutive_idle_rounds", at: 10},
		{strategy: "scan", from: "PRODUCE", to: "SUMMARIZE", text: true, metric: "submit_count", at: 8},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		kind := "on_metrics"
		if c.text {
			kind = "on_text"
		}
		covered[c.strategy+" "+c.from+"→"+c.to+" "+kind] = true
		name := fmt.Sprintf("%s/%s→%s/%s/%s=%d", c.strategy, c.from, c.to, kind, c.metric, c.at)
		if c.never {
			name += "/guarded"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			values := []int{c.at - 1, c.at, c.at + 1}
			if c.metric == "" {
				values = []int{0}
			}
			for i, v := range values {
				tr := newTracker(t, c.strategy, nil)
				tr.s.Phase = c.from
				setMetrics(t, tr, c.base)
				if c.metric != "" {
					setMetrics(t, tr, map[string]int{c.metric: v})
				}
				got := ""
				if tr := tr.firstTransition(c.text); tr != nil {
					got = tr.To
				}
				want := c.to
				if c.never || (c.metric != "" && i == 0) {
					want = ""
				}
				if got != want {
					t.Errorf("%s = %d: transition to %q, want %q", c.metric, v, got, want)
				}
			}
		})
	}
	// Every rule of every built-in strategy has at least one case.
	for _, name := range BuiltinStrategies() {
		s, _ := BuiltinStrategy(name)
		for _, tr := range s.Transitions {
			for kind, cond := range map[string]Condition{"on_metrics": tr.OnMetrics, "on_text": tr.OnText} {
				key := name + " " + tr.From + "→" + tr.To + " " + kind
				if cond.Kind != CondFalse && !covered[key] {
					t.Errorf("no threshold case for %s (%s)", key, cond)
				}
			}
		}
	}
}

// TestTransitionRounds drives real rounds: one round before the threshold
// the phase has not changed, at the threshold it changes, one round after it
// is still the new phase.
func TestTransitionRounds(t *testing.T) {
	t.Parallel()
	newGrep := func(i int) []ToolCall { return []ToolCall{grep(fmt.Sprintf("pattern-%d", i))} }
	newRead := func(i int) []ToolCall { return []ToolCall{read(fmt.Sprintf("file-%d.go", i))} }
	sameRead := func(int) []ToolCall { return []ToolCall{read("same.go")} }
	idle := func(int) []ToolCall { return nil }
	cases := []struct {
		name     string
		strategy string
		from, to string
		setup    map[string]int
		act      func(i int) []ToolCall
		at       int // the transition happens at the end of the at-th round driven
	}{
		{"bootstrap search budget", "bootstrap", "EXPLORE", "PRODUCE", nil, newGrep, 18},
		{"bootstrap first submit", "bootstrap", "EXPLORE", "PRODUCE", nil, func(i int) []ToolCall {
			if i == 4 {
				return []ToolCall{submit("first")}
			}
			return newRead(i)
		}, 4},
		{"bootstrap idle after submit", "bootstrap", "PRODUCE", "SUMMARIZE", map[string]int{"submit_count": 1}, newRead, 3},
		{"bootstrap grace without submits", "bootstrap", "PRODUCE", "SUMMARIZE", nil, idle, 10},
		{"bootstrap max submits", "bootstrap", "PRODUCE", "SUMMARIZE", nil, func(i int) []ToolCall { return []ToolCall{submit(fmt.Sprint(i))} }, 10},
		{"analyst scan", "analyst", "SCAN", "EXPLORE", nil, newRead, 2},
		{"analyst explore stale", "analyst", "EXPLORE", "VERIFY", map[string]int{"iteration": 2}, sameRead, 4},
		{"analyst explore search rounds", "analyst", "EXPLORE", "VERIFY", map[string]int{"iteration": 2}, newGrep, 14},
		{"analyst explore idle", "analyst", "EXPLORE", "VERIFY", map[string]int{"iteration": 2}, func(i int) []ToolCall {
			if i <= 2 {
				return nil
			}
			return newRead(i) // an idle VERIFY round would move on to RECORD
		}, 2},
		{"analyst verify at 75%", "analyst", "VERIFY", "RECORD", map[string]int{"iteration": 12}, newRead, 6},
		{"analyst record findings", "analyst", "RECORD", "SUMMARIZE", nil, func(i int) []ToolCall {
			return []ToolCall{finding(fmt.Sprint(i), "a.go:1")}
		}, 3},
		{"analyst-evidence orientation", "analyst-evidence", "SCAN", "EXPLORE", nil, idle, 1},
		{"analyst-evidence gated stale", "analyst-evidence", "EXPLORE", "VERIFY", map[string]int{"iteration": 2}, sameRead, 4},
		{"producer grace", "producer", "PRODUCE", "SUMMARIZE", nil, idle, 3},
		{"scan idle after submit", "scan", "PRODUCE", "SUMMARIZE", map[string]int{"submit_count": 1}, newRead, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newTracker(t, c.strategy, nil)
			tr.s.Phase = c.from
			setMetrics(t, tr, c.setup)
			for i := 1; i <= c.at+1; i++ {
				_, transition := round(t, tr, c.act(i)...)
				want := c.from
				if i >= c.at {
					want = c.to
				}
				if tr.Phase() != want {
					t.Fatalf("after round %d: phase %s, want %s", i, tr.Phase(), want)
				}
				if (i == c.at) != (transition != nil) && !(i == c.at && tr.s.Strategy.ExitOnTerminal) {
					t.Fatalf("after round %d: transition nudge %v", i, transition)
				}
			}
		})
	}
}

// TestOnePhaseChangePerRound: a metrics transition at the end of a round
// blocks a text transition in the same round (the peer could skip two phases).
func TestOnePhaseChangePerRound(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "analyst", nil)
	tr.s.Phase = "EXPLORE"
	setMetrics(t, tr, map[string]int{"iteration": 3, "consecutive_idle_rounds": 1})
	tr.Tick(t0)
	// A text round: idle reaches 2, EXPLORE→VERIFY by metrics; VERIFY→RECORD
	// on_text is true but must wait for the next round.
	d := tr.OnTextResponse("I think I have seen enough.")
	if tr.Phase() != "VERIFY" || d.Action != TextContinue || kindOf(d.Nudge) != NudgePhaseTransition {
		t.Fatalf("phase %s, decision %+v; want VERIFY, continue with the transition nudge", tr.Phase(), d)
	}
	tr.Tick(t0)
	tr.OnTextResponse("Still nothing to add.")
	if tr.Phase() != "RECORD" {
		t.Fatalf("next round: phase %s, want RECORD", tr.Phase())
	}
}
