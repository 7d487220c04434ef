package explore

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTextResponseDecisionTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		strategy  string
		setup     func(t *testing.T, tr *Tracker)
		text      string
		action    TextAction
		nudge     NudgeKind
		phase     string
		nudgeHas  string
		exitFinal bool
	}{
		{
			name: "terminal, format already seen: final", strategy: "bootstrap",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "PRODUCE"
				setMetrics(t, tr, map[string]int{"submit_count": 10})
				round(t, tr) // max submits: PRODUCE→SUMMARIZE, nudge with the digest format
				tr.Tick(t0)
			},
			action: TextFinal, phase: "SUMMARIZE",
		},
		{
			name: "text transition into terminal: digest with the format", strategy: "bootstrap-skill",
			setup:  func(t *testing.T, tr *Tracker) { tr.Tick(t0) },
			action: TextDigest, nudge: NudgeDigest, phase: "SUMMARIZE", nudgeHas: "dimensionDigest",
		},
		{
			name: "analyst metrics transition into terminal on a text round: digest with the report format", strategy: "analyst",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "RECORD"
				setMetrics(t, tr, map[string]int{"finding_count": 3, "iteration": 12})
				tr.Tick(t0)
			},
			action: TextDigest, nudge: NudgeDigest, phase: "SUMMARIZE", nudgeHas: "Markdown",
		},
		{
			name: "scan reaching terminal by text: final, no summary", strategy: "scan",
			setup: func(t *testing.T, tr *Tracker) {
				setMetrics(t, tr, map[string]int{"submit_count": 8})
				tr.Tick(t0)
			},
			action: TextFinal, phase: "SUMMARIZE",
		},
		{
			name: "terminal entered by this round's EndRound: continue, format is queued", strategy: "bootstrap",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "PRODUCE"
				tr.Tick(t0)
				for i := range 10 {
					tr.RecordToolCall(submit(string(rune('a' + i))))
				}
				if n := tr.EndRound(); kindOf(n) != NudgePhaseTransition || !strings.Contains(n.Text, "dimensionDigest") {
					t.Fatalf("EndRound nudge %+v", n)
				}
			},
			action: TextContinue, phase: "SUMMARIZE",
		},
		{
			name: "bootstrap PRODUCE: continue, keep submitting", strategy: "bootstrap",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "PRODUCE"
				tr.Tick(t0)
			},
			action: TextContinue, nudge: NudgeContinue, phase: "PRODUCE", nudgeHas: "submit_knowledge",
		},
		{
			name: "scan PRODUCE: continue without nudge", strategy: "scan",
			setup:  func(t *testing.T, tr *Tracker) { tr.Tick(t0) },
			action: TextContinue, phase: "PRODUCE",
		},
		{
			name: "analyst EXPLORE before 40%: continue without nudge", strategy: "analyst",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "EXPLORE"
				setMetrics(t, tr, map[string]int{"iteration": 4})
				tr.Tick(t0)
			},
			action: TextContinue, phase: "EXPLORE",
		},
		{
			name: "analyst EXPLORE at 40%: moves to VERIFY, transition nudge", strategy: "analyst",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "EXPLORE"
				setMetrics(t, tr, map[string]int{"iteration": 8})
				tr.Tick(t0)
			},
			action: TextContinue, nudge: NudgePhaseTransition, phase: "VERIFY", nudgeHas: "Verify",
		},
		{
			name: "analyst RECORD with too few findings: note_finding nudge", strategy: "analyst",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "RECORD"
				setMetrics(t, tr, map[string]int{"finding_count": 1, "iteration": 12})
				tr.Tick(t0)
			},
			action: TextContinue, nudge: NudgeContinue, phase: "RECORD", nudgeHas: "1/3",
		},
		{
			name: "analyst-evidence RECORD after two rounds: final", strategy: "analyst-evidence",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "RECORD"
				setMetrics(t, tr, map[string]int{"phase_rounds": 1, "iteration": 12})
				tr.Tick(t0)
			},
			action: TextFinal, phase: "RECORD", exitFinal: true,
		},
		{
			name: "analyst-evidence EXPLORE without evidence: evidence nudge", strategy: "analyst-evidence",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Phase = "EXPLORE"
				setMetrics(t, tr, map[string]int{"iteration": 11})
				tr.Tick(t0)
			},
			action: TextContinue, nudge: NudgeContinue, phase: "EXPLORE", nudgeHas: "no evidence",
		},
		{
			name: "graceful exit after the force_exit nudge: final", strategy: "bootstrap",
			setup: func(t *testing.T, tr *Tracker) {
				tr.Tick(t0)
				tr.ForceTerminal("token_pressure")
				if n := tr.Nudge(); kindOf(n) != NudgeForceExit {
					t.Fatalf("nudge %+v, want force_exit", n)
				}
			},
			action: TextFinal, phase: "SUMMARIZE", exitFinal: true,
		},
		{
			name: "graceful exit whose force_exit nudge was never fetched: digest", strategy: "bootstrap",
			setup: func(t *testing.T, tr *Tracker) {
				tr.Tick(t0)
				tr.ForceTerminal("token_pressure")
			},
			action: TextDigest, nudge: NudgeDigest, phase: "SUMMARIZE", nudgeHas: "dimensionDigest",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newTracker(t, c.strategy, nil)
			c.setup(t, tr)
			d := tr.OnTextResponse(cmpOr(c.text, "Here is what I found."))
			if d.Action != c.action || kindOf(d.Nudge) != c.nudge || d.Phase != c.phase || tr.Phase() != c.phase {
				t.Fatalf("decision %s/%s in %s (tracker %s); want %s/%s in %s", d.Action, kindOf(d.Nudge), d.Phase, tr.Phase(), c.action, c.nudge, c.phase)
			}
			if c.nudgeHas != "" && !strings.Contains(d.Nudge.Text, c.nudgeHas) {
				t.Errorf("nudge %q lacks %q", d.Nudge.Text, c.nudgeHas)
			}
			reason, done := tr.Done()
			if done != d.Final() || done && reason != ExitFinalAnswer {
				t.Errorf("done = %v (%s), want %v", done, reason, d.Final())
			}
		})
	}
}

func TestTextAfterExitIsIgnored(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "scan", nil)
	tr.s.Phase = "SUMMARIZE"
	tr.Tick(t0)
	if reason, exit := tr.ShouldExit(); !exit || reason != ExitScanTerminal {
		t.Fatalf("ShouldExit = %s, %v", reason, exit)
	}
	before := tr.Snapshot()
	if d := tr.OnTextResponse("late"); !d.Final() || d.Nudge != nil {
		t.Fatalf("decision %+v", d)
	}
	if res, err := tr.RecordToolCall(read("x.go")); err != nil || !res.Ignored {
		t.Fatalf("RecordToolCall after exit: %+v, %v", res, err)
	}
	tr.Tick(t0)
	tr.EndRound()
	tr.ForceTerminal("x")
	if after := tr.Snapshot(); after.Counters != before.Counters {
		t.Fatalf("counters changed after exit: %+v → %+v", before.Counters, after.Counters)
	}
}

func TestToolChoicePerPhase(t *testing.T) {
	t.Parallel()
	cases := []struct {
		strategy, phase string
		metrics         map[string]int
		want            ChoiceMode
		tools           []string
	}{
		{"bootstrap", "EXPLORE", map[string]int{"search_rounds_in_phase": 0}, ChoiceRequired, nil},
		{"bootstrap", "EXPLORE", map[string]int{"search_rounds_in_phase": 16}, ChoiceRequired, nil},
		{"bootstrap", "EXPLORE", map[string]int{"search_rounds_in_phase": 17}, ChoiceAuto, nil},
		{"bootstrap", "PRODUCE", nil, ChoiceAuto, nil},
		{"bootstrap", "SUMMARIZE", nil, ChoiceNone, nil},
		{"bootstrap-skill", "EXPLORE", map[string]int{"search_rounds_in_phase": 17}, ChoiceAuto, nil},
		{"bootstrap-skill", "SUMMARIZE", nil, ChoiceNone, nil},
		{"analyst", "SCAN", nil, ChoiceRequired, nil},
		{"analyst", "EXPLORE", map[string]int{"iteration": 8}, ChoiceRequired, nil},
		{"analyst", "EXPLORE", map[string]int{"iteration": 9}, ChoiceAuto, nil},
		{"analyst", "VERIFY", nil, ChoiceAuto, nil},
		{"analyst", "RECORD", nil, ChoiceRequired, []string{"note_finding"}},
		{"analyst", "SUMMARIZE", nil, ChoiceNone, nil},
		{"analyst-evidence", "SCAN", nil, ChoiceNone, nil},
		{"analyst-evidence", "EXPLORE", map[string]int{"iteration": 12}, ChoiceRequired, nil},
		{"analyst-evidence", "EXPLORE", map[string]int{"iteration": 8, "evidence_count": 1}, ChoiceRequired, nil},
		{"analyst-evidence", "EXPLORE", map[string]int{"iteration": 9, "evidence_count": 1}, ChoiceAuto, nil},
		{"analyst-evidence", "VERIFY", map[string]int{"evidence_count": 1}, ChoiceRequired, nil},
		{"analyst-evidence", "VERIFY", map[string]int{"evidence_count": 2}, ChoiceAuto, nil},
		{"analyst-evidence", "VERIFY", map[string]int{"finding_count": 1}, ChoiceAuto, nil},
		{"analyst-evidence", "RECORD", nil, ChoiceRequired, []string{"note_finding"}},
		{"producer", "PRODUCE", nil, ChoiceAuto, nil},
		{"producer", "SUMMARIZE", nil, ChoiceNone, nil},
		{"scan", "PRODUCE", nil, ChoiceAuto, nil},
		{"scan", "SUMMARIZE", nil, ChoiceNone, nil},
	}
	for _, c := range cases {
		t.Run(c.strategy+"/"+c.phase, func(t *testing.T) {
			t.Parallel()
			tr := newTracker(t, c.strategy, nil)
			tr.s.Phase = c.phase
			setMetrics(t, tr, c.metrics)
			got := tr.ToolChoice()
			if got.Mode != c.want || !slices.Equal(got.Tools, c.tools) {
				t.Fatalf("%v: tool choice %+v, want %s %v", c.metrics, got, c.want, c.tools)
			}
			tr.ForceTerminal("test")
			if got := tr.ToolChoice(); got.Mode != ChoiceNone {
				t.Fatalf("graceful exit: tool choice %+v, want none", got)
			}
		})
	}
}

func TestNudgePriority(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, tr *Tracker)
		want  []NudgeKind // one per following round
	}{
		{
			name: "convergence, budget warning, reflection, then planning once nothing else fires",
			setup: func(t *testing.T, tr *Tracker) {
				setMetrics(t, tr, map[string]int{"iteration": 18, "rounds_since_new_info": 3})
				tr.s.Counters.TotalToolCalls = 1
			},
			// rounds 19..22: stale counter keeps growing (idle rounds), reflection fires while stale ≥ 2
			want: []NudgeKind{NudgeConvergence, NudgeBudgetWarning, NudgeReflection, NudgeReflection},
		},
		{
			name: "planning when nothing else fires",
			setup: func(t *testing.T, tr *Tracker) {
				tr.s.Strategy.Reflection = false
				setMetrics(t, tr, map[string]int{"iteration": 18, "rounds_since_new_info": 3})
			},
			want: []NudgeKind{NudgeConvergence, NudgeBudgetWarning, NudgePlanning, ""},
		},
		{
			name: "force exit beats everything, every round of graceful exit",
			setup: func(t *testing.T, tr *Tracker) {
				setMetrics(t, tr, map[string]int{"iteration": 18, "rounds_since_new_info": 3})
				tr.ForceTerminal("tokens")
			},
			want: []NudgeKind{NudgeForceExit, NudgeForceExit},
		},
		{
			name: "a transition nudge pending from an implicit round end comes before routine nudges",
			setup: func(t *testing.T, tr *Tracker) {
				setMetrics(t, tr, map[string]int{"iteration": 18, "rounds_since_new_info": 3})
				tr.Tick(t0)
				tr.RecordToolCall(submit("x")) // EXPLORE→PRODUCE when the round ends implicitly
			},
			// the phase change reset the stale counter, so convergence no longer holds
			want: []NudgeKind{NudgePhaseTransition, NudgeBudgetWarning},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newTracker(t, "bootstrap", nil)
			c.setup(t, tr)
			for i, want := range c.want {
				tr.Tick(t0)
				tr.ShouldExit()
				got := tr.Nudge()
				if kindOf(got) != want {
					t.Fatalf("round %d (iteration %d): nudge %q, want %q", i+1, tr.Iteration(), kindOf(got), want)
				}
				if again := tr.Nudge(); again != nil {
					t.Fatalf("second nudge in one round: %+v", again)
				}
				tr.EndRound()
			}
		})
	}
}

func TestOnceOnlyNudges(t *testing.T) {
	t.Parallel()
	// producer: no reflection, no planning; a large grace keeps it in PRODUCE however idle
	tr := newTracker(t, "producer", func(b *Budget) { b.SearchBudgetGrace = 100 })
	setMetrics(t, tr, map[string]int{"iteration": 9})
	got := map[NudgeKind]int{}
	for range 12 { // iterations 10..21, idle rounds: stale grows every round
		tr.Tick(t0)
		if n := tr.Nudge(); n != nil {
			got[n.Kind]++
		}
		tr.EndRound()
	}
	if got[NudgeConvergence] != 1 || got[NudgeBudgetWarning] != 1 || len(got) != 2 {
		t.Fatalf("nudges %v, want convergence and budget_warning once each", got)
	}
	// Once-only survives a snapshot round trip.
	tr2 := restoreJSON(t, tr)
	tr2.Tick(t0)
	if n := tr2.Nudge(); n != nil {
		t.Fatalf("restored tracker repeated %s", n.Kind)
	}
}

func TestRoutineNudgeCapAndGap(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", nil)
	tr.s.Strategy.Nudges.MaxRoutineNudges = 2
	tr.s.Strategy.Nudges.NudgeGapRounds = 3
	setMetrics(t, tr, map[string]int{"iteration": 18, "rounds_since_new_info": 3})
	var rounds []int
	for range 6 {
		tr.Tick(t0)
		if n := tr.Nudge(); n != nil {
			rounds = append(rounds, tr.Iteration())
		}
		tr.EndRound()
	}
	if !slices.Equal(rounds, []int{19, 22}) {
		t.Fatalf("routine nudges in rounds %v, want [19 22] (gap 3, cap 2)", rounds)
	}
}

func TestNoRoutineNudgeRightAfterTransitionNudge(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", nil)
	setMetrics(t, tr, map[string]int{"iteration": 18, "rounds_since_new_info": 3})
	tr.Tick(t0)
	tr.RecordToolCall(submit("x"))
	if n := tr.EndRound(); kindOf(n) != NudgePhaseTransition {
		t.Fatalf("EndRound nudge %v", n)
	}
	tr.Tick(t0)
	if n := tr.Nudge(); n != nil {
		t.Fatalf("round after a transition nudge got %s", n.Kind)
	}
	tr.EndRound()
	tr.Tick(t0)
	if n := tr.Nudge(); kindOf(n) != NudgeBudgetWarning {
		t.Fatalf("next round nudge %v, want budget_warning (stale counter was reset by the phase change)", kindOf(n))
	}
}

func TestRollbackCostsNoBudget(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", func(b *Budget) { b.MaxIterations = 3 })
	for range 100 {
		tr.Tick(t0)
		if _, exit := tr.ShouldExit(); exit {
			t.Fatal("exited while every call failed")
		}
		tr.RollbackTick()
	}
	if c := tr.s.Counters; c.Iteration != 0 || c.PhaseRounds != 0 {
		t.Fatalf("counters after rollbacks: %+v", c)
	}
	round(t, tr, grep("a"))
	tr.RollbackTick() // after EndRound: no effect
	if tr.Iteration() != 1 {
		t.Fatalf("iteration %d after a rollback of an ended round, want 1", tr.Iteration())
	}
	// A rollback after the forced phase change keeps phase_rounds at 0, not -1.
	round(t, tr, grep("b"))
	tr.Tick(t0)
	tr.ShouldExit() // round 3 = max: forced SUMMARIZE
	tr.RollbackTick()
	if c := tr.s.Counters; c.Iteration != 2 || c.PhaseRounds != 0 || tr.Phase() != "SUMMARIZE" {
		t.Fatalf("after rollback of the forcing round: %+v phase %s", c, tr.Phase())
	}
}

func TestForcedTerminalAndHardExit(t *testing.T) {
	t.Parallel()
	t.Run("max iterations forces terminal, hard limit two rounds later", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, "bootstrap", func(b *Budget) { b.MaxIterations = 5 })
		for range 4 {
			round(t, tr, grep(t.Name()+string(rune('a'+tr.Iteration()))))
		}
		tr.Tick(t0)
		if _, exit := tr.ShouldExit(); exit || tr.Phase() != "SUMMARIZE" || !tr.GracefulExit() || tr.HardExit() {
			t.Fatalf("round 5: exit, phase %s, graceful %v", tr.Phase(), tr.GracefulExit())
		}
		if h := tr.History(); len(h) != 1 || h[0].Cause != CauseMaxIterations {
			t.Fatalf("history %+v", h)
		}
		tr.EndRound()
		tr.Tick(t0)
		if _, exit := tr.ShouldExit(); exit {
			t.Fatal("round 6 exited")
		}
		tr.EndRound()
		tr.Tick(t0)
		if reason, exit := tr.ShouldExit(); !exit || reason != ExitHardLimit || tr.Iteration() != 7 {
			t.Fatalf("round 7: %s %v", reason, exit)
		}
	})
	t.Run("ForceTerminal in an open round: forced exit two rounds later", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, "analyst", nil)
		round(t, tr)
		tr.Tick(t0) // round 2
		tr.ForceTerminal("token_pressure")
		if tr.s.GracefulRound != 2 || tr.s.ForcedReason != "token_pressure" || tr.History()[0].Cause != CauseForced {
			t.Fatalf("graceful round %d, state %+v", tr.s.GracefulRound, tr.History())
		}
		tr.EndRound()
		tr.Tick(t0)
		if _, exit := tr.ShouldExit(); exit || tr.HardExit() {
			t.Fatal("round 3 exited")
		}
		tr.EndRound()
		tr.Tick(t0)
		if !tr.HardExit() {
			t.Fatal("HardExit false in round 4")
		}
		if reason, exit := tr.ShouldExit(); !exit || reason != ExitForced {
			t.Fatalf("round 4: %s %v, want forced_exit", reason, exit)
		}
	})
	t.Run("ForceTerminal between rounds starts with the next round", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, "bootstrap", nil)
		round(t, tr, grep("a"))
		tr.ForceTerminal("tokens")
		if tr.s.GracefulRound != 2 {
			t.Fatalf("graceful round %d, want 2", tr.s.GracefulRound)
		}
		if n := tr.Nudge(); n != nil {
			t.Fatalf("nudge between rounds: %+v", n)
		}
	})
	t.Run("grace exhausted after three terminal rounds", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, "producer", nil)
		setMetrics(t, tr, map[string]int{"submit_count": 10})
		round(t, tr) // → SUMMARIZE
		for i := 1; i <= 3; i++ {
			tr.Tick(t0)
			reason, exit := tr.ShouldExit()
			if exit != (i == 3) || exit && reason != ExitGraceExhausted {
				t.Fatalf("terminal round %d: %s %v", i, reason, exit)
			}
			tr.EndRound()
		}
	})
	t.Run("scan exits on reaching terminal", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, "scan", nil)
		setMetrics(t, tr, map[string]int{"submit_count": 10})
		if _, transition := round(t, tr); transition != nil {
			t.Fatalf("scan got a transition nudge %+v", transition)
		}
		tr.Tick(t0)
		if reason, exit := tr.ShouldExit(); !exit || reason != ExitScanTerminal {
			t.Fatalf("%s %v", reason, exit)
		}
	})
	t.Run("Tick enforces the hard limit without ShouldExit", func(t *testing.T) {
		t.Parallel()
		tr := newTracker(t, "bootstrap", func(b *Budget) { b.MaxIterations = 2 })
		for range 10 {
			tr.Tick(t0)
			tr.EndRound()
		}
		if reason, done := tr.Done(); !done || reason != ExitHardLimit || tr.Iteration() != 4 {
			t.Fatalf("done %v %s at iteration %d", done, reason, tr.Iteration())
		}
	})
}

// TestDefectForceExitReachesAgent: the peer set its graceful-exit round only
// together with the move to the terminal phase, where its nudge generator
// returns nothing, so the force_exit text (and the final-answer format) never
// reached the agent. Here it does, in the round graceful exit starts.
func TestDefectForceExitReachesAgent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		strategy, format string
		force            func(tr *Tracker)
	}{
		{"bootstrap", "dimensionDigest", func(tr *Tracker) { tr.ShouldExit() }},
		{"analyst", "Markdown", func(tr *Tracker) { tr.ShouldExit() }},
		{"bootstrap", "dimensionDigest", func(tr *Tracker) { tr.ShouldExit(); tr.ForceTerminal("token_pressure") }},
	}
	for _, c := range cases {
		t.Run(c.strategy, func(t *testing.T) {
			t.Parallel()
			tr := newTracker(t, c.strategy, func(b *Budget) { b.MaxIterations = 4 })
			for range 3 {
				round(t, tr, grep(t.Name()+string(rune('a'+tr.Iteration()))))
			}
			tr.Tick(t0)
			c.force(tr)
			if tr.Phase() != tr.s.Strategy.Terminal() {
				t.Fatalf("phase %s", tr.Phase())
			}
			n := tr.Nudge()
			if kindOf(n) != NudgeForceExit || !strings.Contains(n.Text, c.format) {
				t.Fatalf("nudge in the round graceful exit starts: %+v, want force_exit with %q", n, c.format)
			}
			if ctx := tr.PhaseContext(); !strings.Contains(ctx, "Do not call any more tools") {
				t.Errorf("phase context %q", ctx)
			}
			if d := tr.OnTextResponse("the answer"); !d.Final() {
				t.Errorf("answer after force_exit: %+v, want final", d)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	overrides := map[string]ToolKind{"my_search": KindSearch, "read": KindOther}
	cases := []struct {
		call ToolCall
		over map[string]ToolKind
		want ToolKind
	}{
		{ToolCall{Name: "Grep"}, nil, KindSearch},
		{ToolCall{Name: "Glob"}, nil, KindSearch},
		{ToolCall{Name: "Read"}, nil, KindRead},
		{ToolCall{Name: "LS"}, nil, KindList},
		{ToolCall{Name: "Bash", Args: map[string]any{"command": "go test ./..."}}, nil, KindExec},
		{ToolCall{Name: "Bash", Args: map[string]any{"command": "rg -n Tracker explore"}}, nil, KindSearch},
		{ToolCall{Name: "Bash", Args: map[string]any{"command": "git grep foo"}}, nil, KindSearch},
		{ToolCall{Name: "WebSearch"}, nil, KindSearch},
		{ToolCall{Name: "WebFetch"}, nil, KindRead},
		{ToolCall{Name: "Edit"}, nil, KindWrite},
		{ToolCall{Name: "Write"}, nil, KindWrite},
		{ToolCall{Name: "TodoWrite"}, nil, KindOther},
		{ToolCall{Name: "mcp__kaizen__note_finding"}, nil, KindFinding},
		{ToolCall{Name: "mcp__github__search_code"}, nil, KindSearch},
		{ToolCall{Name: "code", Args: map[string]any{"action": "search"}}, nil, KindSearch},
		{ToolCall{Name: "code.read"}, nil, KindRead},
		{ToolCall{Name: "code.structure"}, nil, KindList},
		{ToolCall{Name: "graph", Args: map[string]any{"action": "query"}}, nil, KindSearch},
		{ToolCall{Name: "graph", Args: map[string]any{"action": "callers"}}, nil, KindQuery},
		{ToolCall{Name: "graph.overview"}, nil, KindList},
		{ToolCall{Name: "memory", Args: map[string]any{"action": "note_finding"}}, nil, KindFinding},
		{ToolCall{Name: "memory", Args: map[string]any{"action": "recall"}}, nil, KindOther},
		{ToolCall{Name: "knowledge"}, nil, KindSubmit},
		{ToolCall{Name: "submit_knowledge"}, nil, KindSubmit},
		{ToolCall{Name: "collect_scan_recipe"}, nil, KindSubmit},
		{ToolCall{Name: "My_Search"}, overrides, KindSearch},
		{ToolCall{Name: "Read"}, overrides, KindOther},
	}
	for _, c := range cases {
		if got := classify(c.over, &c.call); got != c.want {
			t.Errorf("classify(%s %v) = %s, want %s", c.call.Name, c.call.Args, got, c.want)
		}
	}
}

func TestNewInformation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		calls []ToolCall
		want  []bool
	}{
		{"paths are normalised", []ToolCall{read("a/b.go"), read("./a/b.go"), read("a//b.go"), read("a/c.go")}, []bool{true, false, false, true}},
		{"search hits count as seen files", []ToolCall{
			{Name: "Grep", Args: map[string]any{"pattern": "Tick"}, Output: "explore/tracker.go:120:func Tick\nexplore/tracker.go-121-\tif"},
			read("explore/tracker.go"),
		}, []bool{true, false}},
		{"separator lines count as seen files", []ToolCall{
			{Name: "code.search", Args: map[string]any{"patterns": []any{"a", "b"}}, Output: "── lib/x.ts ──\n  12: foo"},
			read("lib/x.ts"), {Name: "code.search", Args: map[string]any{"patterns": []any{"b"}}},
		}, []bool{true, false, false}},
		{"patterns are whitespace-normalised", []ToolCall{grep("foo  bar"), grep(" foo bar "), grep("foo bar baz")}, []bool{true, false, true}},
		{"submits and findings are never new", []ToolCall{submit("a"), submit("b"), finding("x", "a.go:1")}, []bool{false, false, false}},
		{"failed calls bring nothing", []ToolCall{{Name: "Read", Args: map[string]any{"file_path": "x.go"}, Status: StatusError}, read("x.go")}, []bool{false, true}},
		{"shell commands", []ToolCall{
			{Name: "Bash", Args: map[string]any{"command": "go test ./..."}},
			{Name: "Bash", Args: map[string]any{"command": "go  test ./..."}},
			{Name: "Bash", Args: map[string]any{"command": "go vet ./..."}},
		}, []bool{true, false, true}},
		{"other tools by argument hash, independent of key order", []ToolCall{
			{Name: "lookup", Args: map[string]any{"a": 1.0, "b": "x"}},
			{Name: "lookup", Args: map[string]any{"b": "x", "a": 1.0}},
			{Name: "lookup", Args: map[string]any{"a": 2.0, "b": "x"}},
		}, []bool{true, false, true}},
		{"listings", []ToolCall{{Name: "LS", Args: map[string]any{"path": "."}}, {Name: "LS"}, {Name: "LS", Args: map[string]any{"path": "./"}}}, []bool{true, true, false}},
		{"long commands do not collide on their prefix", []ToolCall{
			{Name: "Bash", Args: map[string]any{"command": strings.Repeat("x", 120) + " one"}},
			{Name: "Bash", Args: map[string]any{"command": strings.Repeat("x", 120) + " two"}},
		}, []bool{true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newTracker(t, "bootstrap", nil)
			tr.Tick(t0)
			var got []bool
			for _, call := range c.calls {
				res, err := tr.RecordToolCall(call)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, res.New)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("new = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRoundCounters(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", nil)
	round(t, tr, read("a.go"), read("b.go"))
	if c := tr.s.Counters; c.SearchRoundsInPhase != 0 || c.ReadRoundsInPhase != 1 || c.ToolRoundsInPhase != 1 {
		t.Fatalf("read-only round: %+v", c)
	}
	round(t, tr, grep("a"), grep("b"), grep("c"))
	if c := tr.s.Counters; c.SearchRoundsInPhase != 1 {
		t.Fatalf("three searches in one round count %d search rounds, want 1", c.SearchRoundsInPhase)
	}
	round(t, tr, ToolCall{Name: "Grep", Args: map[string]any{"pattern": "z"}, Status: StatusError})
	if c := tr.s.Counters; c.SearchRoundsInPhase != 1 || c.RoundsSinceNewInfo != 1 {
		t.Fatalf("failed search: %+v", c)
	}
	round(t, tr)
	if c := tr.s.Counters; c.ConsecutiveIdleRounds != 1 || c.RoundsSinceNewInfo != 2 {
		t.Fatalf("idle round: %+v", c)
	}
	tr.s.Phase = "PRODUCE"
	round(t, tr,
		submit("ok"),
		ToolCall{Name: "submit_knowledge", Status: StatusRejected},
		ToolCall{Name: "submit_knowledge", Status: StatusDuplicate},
		ToolCall{Name: "submit_knowledge", Status: StatusError})
	if c := tr.s.Counters; c.SubmitCount != 1 || c.RoundsSinceSubmit != 0 || c.TotalToolCalls != 10 {
		t.Fatalf("submits: %+v", c)
	}
	m := tr.Metrics()
	if m.UniqueFiles != 2 || m.UniquePatterns != 3 || m.NewInfoRate != 0.4 || m.Phase != "PRODUCE" || m.Strategy != "bootstrap" {
		t.Fatalf("metrics %+v", m)
	}
}

func TestFindingEvidence(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "analyst-evidence", nil)
	tr.Tick(t0)
	for _, c := range []ToolCall{
		{Name: "note_finding", Args: map[string]any{"text": "no evidence"}},
		{Name: "note_finding", Args: map[string]any{"text": "x", "evidence": "see store/open.go:44 for details"}},
		{Name: "note_finding", Args: map[string]any{"text": "x", "file_path": "a.go", "line": 3, "slot": "tradeoffs"}},
		{Name: "note_finding", Args: map[string]any{"text": "x", "refs": []any{map[string]any{"at": "b.go:9"}}, "dimension": "designIntent"}},
		{Name: "note_finding", Args: map[string]any{"text": "x", "evidence": "a.go:1"}, Status: StatusError},
	} {
		tr.RecordToolCall(c)
	}
	if c := tr.s.Counters; c.FindingCount != 4 || c.VerifiedFindingCount != 3 || c.DepthSlottedFindings != 2 {
		t.Fatalf("findings %+v", c)
	}
	if got := tr.effectiveFindings(); got != 4 {
		t.Fatalf("effective findings %v, want 3 + 0.5·2 = 4", got)
	}
}

func TestRecordToolCallErrors(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", nil)
	for _, c := range []ToolCall{{}, {Name: "  "}, {Name: "Read", Status: "weird"}, {Name: strings.Repeat("x", 300)}} {
		if _, err := tr.RecordToolCall(c); !errors.Is(err, ErrInvalidToolCall) {
			t.Errorf("RecordToolCall(%q): %v, want ErrInvalidToolCall", c.Name, err)
		}
	}
	if tr.s.Counters.TotalToolCalls != 0 {
		t.Fatal("invalid calls were counted")
	}
}

func TestPhaseContext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		strategy, phase string
		metrics         map[string]int
		want            string
	}{
		{"bootstrap", "EXPLORE", map[string]int{"iteration": 3}, "Round 3/24 · explore · 21 rounds left."},
		{"bootstrap", "EXPLORE", map[string]int{"iteration": 3, "search_rounds_in_phase": 16}, "Search budget nearly used (16/18 search rounds)"},
		{"bootstrap", "EXPLORE", map[string]int{"iteration": 22}, "Only 2 round(s) left"},
		{"bootstrap", "PRODUCE", map[string]int{"iteration": 5, "phase_rounds": 1}, "Nothing submitted yet: call submit_knowledge now."},
		{"bootstrap", "PRODUCE", map[string]int{"iteration": 9, "submit_count": 8}, "8 submitted, 10 allowed."},
		{"analyst", "RECORD", map[string]int{"iteration": 20, "finding_count": 2}, "Only note_finding is available: 2/3"},
		{"analyst-evidence", "RECORD", map[string]int{"iteration": 5, "verified_finding_count,finding_count": 1, "depth_slotted_finding_count": 1}, "1.5/3 evidence-backed"},
		{"bootstrap", "SUMMARIZE", map[string]int{"iteration": 23}, "Round 23/24 · summarize · 1 rounds left."},
	}
	for _, c := range cases {
		tr := newTracker(t, c.strategy, nil)
		tr.s.Phase = c.phase
		setMetrics(t, tr, c.metrics)
		if got := tr.PhaseContext(); !strings.Contains(got, c.want) {
			t.Errorf("%s %s %v: context %q, want it to contain %q", c.strategy, c.phase, c.metrics, got, c.want)
		}
	}
}

func TestSignals(t *testing.T) {
	t.Parallel()
	bus := NewBus()
	var got []string
	bus.Subscribe(SignalPhase+"|"+SignalNudge+"|"+SignalExit, func(s Signal) {
		got = append(got, s.Type+":"+formatNumber(s.Value))
	})
	s, _ := BuiltinStrategy("producer")
	tr, err := New(s, ProducerBudget(), WithBus(bus))
	if err != nil {
		t.Fatal(err)
	}
	setMetrics(t, tr, map[string]int{"submit_count": 10})
	round(t, tr)
	tr.Tick(t0)
	tr.OnTextResponse("done")
	want := []string{SignalPhase + ":1", SignalNudge + ":0.5", SignalExit + ":0"}
	if !slices.Equal(got, want) {
		t.Fatalf("signals %v, want %v", got, want)
	}
}

func TestToolCallFromHook(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, tool, input, response string
		want                        ToolCall
		err                         bool
	}{
		{"claude grep", "Grep", `{"pattern":"Tick","output_mode":"content"}`, `{"mode":"content","content":"a.go:3:Tick","numFiles":1}`,
			ToolCall{Name: "Grep", Args: map[string]any{"pattern": "Tick", "output_mode": "content"}, Output: "a.go:3:Tick"}, false},
		{"bash stdout", "Bash", `{"command":"ls"}`, `{"stdout":"x\n","stderr":"","interrupted":false}`,
			ToolCall{Name: "Bash", Args: map[string]any{"command": "ls"}, Output: "x\n"}, false},
		{"string response", "mcp__kaizen__note_finding", `{}`, `"ok"`,
			ToolCall{Name: "mcp__kaizen__note_finding", Args: map[string]any{}, Output: "ok"}, false},
		{"error response", "Read", `{"file_path":"x"}`, `{"is_error":true,"content":"no such file"}`,
			ToolCall{Name: "Read", Args: map[string]any{"file_path": "x"}, Output: "no such file", Status: StatusError}, false},
		{"no input or response", "TodoWrite", ``, ``, ToolCall{Name: "TodoWrite"}, false},
		{"claude read: nested content and file", "Read", `{"file_path":"a.go"}`,
			`{"type":"text","file":{"filePath":"a.go","content":"package a","numLines":1}}`,
			ToolCall{Name: "Read", Args: map[string]any{"file_path": "a.go"}, Output: "package a", Files: []string{"a.go"}}, false},
		{"claude glob: file list", "Glob", `{"pattern":"**/*.go"}`, `{"filenames":["a.go","b/c.go"],"numFiles":2,"truncated":false}`,
			ToolCall{Name: "Glob", Args: map[string]any{"pattern": "**/*.go"}, Files: []string{"a.go", "b/c.go"}}, false},
		{"stdout and stderr, in key order", "Bash", `{"command":"go vet"}`, `{"stdout":"ok","stderr":"warn"}`,
			ToolCall{Name: "Bash", Args: map[string]any{"command": "go vet"}, Output: "warn\nok"}, false},
		{"input not an object", "Read", `[1,2]`, ``, ToolCall{}, true},
		{"response not json", "Read", `{}`, `{oops`, ToolCall{}, true},
		{"no name", "", `{}`, `{}`, ToolCall{}, true},
	}
	for _, c := range cases {
		got, err := ToolCallFromHook(c.tool, []byte(c.input), []byte(c.response))
		if c.err {
			if !errors.Is(err, ErrInvalidToolCall) {
				t.Errorf("%s: error %v, want ErrInvalidToolCall", c.name, err)
			}
			continue
		}
		if err != nil || got.Name != c.want.Name || got.Output != c.want.Output || got.Status != c.want.Status || len(got.Args) != len(c.want.Args) ||
			!slices.Equal(got.Files, c.want.Files) {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}
