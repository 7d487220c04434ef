package team

import (
	"errors"
	"slices"
	"testing"
)

func TestSelectPatternsSeedRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		taskType, complexity, risk string
		expert                     bool
		want                       []PatternID
	}{
		{"feature", "Medium", "low", false, []PatternID{CP1, CP10}},
		{"feature", "High", "high", false, []PatternID{CP1, CP4, CP6, CP10}},
		{"bugfix", "High", "low", false, []PatternID{CP1, CP10}},
		{"review", "Low", "low", true, []PatternID{CP1, CP2, CP10}},
		{"test", "Medium", "low", true, []PatternID{CP1, CP2, CP8, CP10}},
		{"feature", "high", "HIGH", true, []PatternID{CP1, CP4, CP6, CP8, CP10}},
	}
	for _, c := range cases {
		if got := SelectPatterns(c.taskType, c.complexity, c.risk, 3, c.expert); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c, got, c.want)
		}
	}
	sel := Select("feature", "Low", "low", 2, false, []PatternStats{{Pattern: CP2, Runs: 10, Successes: 9}, {Pattern: CP3, Runs: 0}, {Pattern: CP7, Runs: 4, Successes: 0, Degraded: 4}}, nil)
	if sel.Ranking[0].Pattern != CP2 || sel.Ranking[1].Pattern != CP7 && sel.Ranking[1].Pattern != CP3 {
		t.Fatalf("ranking %+v", sel.Ranking)
	}
	// CP-3 unseen scores 0.5, CP-7 4 degraded scores (2+1)/6 = 0.5: tie → more runs first.
	if sel.Ranking[1].Pattern != CP7 || sel.Ranking[1].Score != 0.5 || sel.Ranking[2].Score != 0.5 {
		t.Fatalf("tie order %+v", sel.Ranking)
	}
}

func TestCompositionRules(t *testing.T) {
	t.Parallel()
	for _, ok := range [][2]PatternID{{CP6, CP2}, {CP2, CP5}, {CP2, CP7}, {CP9, CP1}, {CP3, CP4}, {CP8, CP4}, {CP7, CP5}} {
		if err := CheckChild(ok[0], ok[1]); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, bad := range [][2]PatternID{{CP2, CP10}, {CP10, CP1}, {CP4, CP7}, {CP1, CP9}} {
		if err := CheckChild(bad[0], bad[1]); !errors.Is(err, ErrComposition) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if len(Compositions()) != 5 {
		t.Fatal("five named compositions")
	}
	c, ok := CompositionByName("high-risk")
	if !ok || c.Steps[0].Pattern != CP4 || c.Steps[1].Pattern != CP6 || c.Steps[2].Pattern != CP2 {
		t.Fatalf("high-risk %+v", c)
	}
	if err := CheckStart(CP7, CP2, "alpha", []ActiveRun{{ID: "s", Pattern: CP7, Team: "alpha"}}, nil); !errors.Is(err, ErrSwarmActive) {
		t.Fatal(err)
	}
}

func TestCoordinatorFSM(t *testing.T) {
	t.Parallel()
	c := NewCoordinator(SelectPatterns("feature", "High", "high", 4, false), "new requirement", t0)
	if c.State != CoordPlan || !slices.Equal(c.Transitions[0].Start, []PatternID{CP1, CP4}) {
		t.Fatalf("%+v", c)
	}
	step := func(k CoordinatorEventKind, b *BlockInfo) CoordinatorTransition {
		t.Helper()
		var tr CoordinatorTransition
		var err error
		c, tr, err = CoordinatorStep(c, CoordinatorEvent{Kind: k, Cause: string(k), Block: b}, t0)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	if tr := step(CoordPlanApproved, nil); tr.To != CoordExecute || !slices.Equal(tr.Start, []PatternID{CP6}) {
		t.Fatalf("%+v", tr)
	}
	tr := step(CoordBlockedEvent, &BlockInfo{Critical: true, SelfRepairFailed: true, SpecialistFailed: true, Downstream: 3})
	if tr.To != CoordBlocked || tr.Start[0] != CP7 {
		t.Fatalf("%+v", tr)
	}
	if tr := step(CoordUnblocked, nil); tr.To != CoordExecute {
		t.Fatalf("%+v", tr)
	}
	step(CoordExecutionDone, nil)
	step(CoordValidationFailed, nil)
	step(CoordExecutionDone, nil)
	if tr := step(CoordValidationPassed, nil); tr.To != CoordDone || !slices.Equal(tr.Start, []PatternID{CP10}) {
		t.Fatalf("%+v", tr)
	}
	if _, _, err := CoordinatorStep(c, CoordinatorEvent{Kind: CoordPlanApproved}, t0); !errors.Is(err, ErrCoordinator) {
		t.Fatal(err)
	}
	if len(c.Transitions) != 8 {
		t.Fatalf("transitions recorded: %d", len(c.Transitions))
	}
	if ChooseUnblock(BlockInfo{Critical: true, SelfRepairFailed: true, SpecialistFailed: true, Downstream: 3, SwarmActive: true}) != CP5 {
		t.Fatal("a second swarm was chosen")
	}
	if r, ok := RouteFor(MsgReviewResult, &ReviewResult{Verdict: VerdictBlock}); !ok || r.Patterns[0] != CP2 {
		t.Fatal("review BLOCK route")
	}
	if _, ok := RouteFor(MsgReviewResult, &ReviewResult{Verdict: VerdictApprove}); ok {
		t.Fatal("APPROVE routed to CP-2")
	}
	if len(RoutingTable()) != 11 {
		t.Fatal("routing table rows")
	}
}

func TestDiagramsCoverEveryPattern(t *testing.T) {
	t.Parallel()
	for _, p := range Patterns {
		d, ok := DiagramFor(p)
		if !ok || len(d.States) == 0 || d.Name == "" {
			t.Fatalf("%s: no diagram", p)
		}
		names := map[string]bool{"": true}
		for _, s := range d.States {
			names[s.Name] = true
		}
		for _, e := range d.Edges {
			if !names[e.From] || !names[e.To] || e.Label == "" {
				t.Errorf("%s: edge %+v names an unknown state", p, e)
			}
		}
	}
}

func TestDefaultConfigIsTheSeeds(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Pipeline.PlanMaxRejections != 3 || c.Pipeline.TestPassRate != 0.95 || c.ReviewFix.MaxRounds != 5 || c.ReviewFix.NoImprovementRounds != 2 ||
		c.FanOut.QuorumRatio != 1 || c.Consensus.ApprovalRatio != 0.67 || c.Consensus.MaxRounds != 2 || c.Escalation.MaxAttempts != [4]int{2, 1, 1, 1} ||
		c.Incremental.MaxRetries != 3 || c.Swarm.MaxRounds != 2 || c.Consult.ApplyConfidence != 0.8 || c.DualTrack.MaxAlignAttempts != 2 {
		t.Fatalf("%+v", c)
	}
	c.Consensus.ApprovalRatio = 1.5
	if err := c.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
}
