package team

// DiagramState is one node of a pattern's state diagram.
type DiagramState struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Terminal bool   `json:"terminal,omitempty"`
}

// DiagramEdge is one labelled transition.
type DiagramEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Label string `json:"label"`
}

// Diagram is a pattern's state diagram for a viewer: draw the states and
// edges and highlight Run.State (the current state) and the edges of
// Run.Decisions (the path taken). The start edge has From "".
type Diagram struct {
	Pattern PatternID      `json:"pattern"`
	Name    string         `json:"name"`
	States  []DiagramState `json:"states"`
	Edges   []DiagramEdge  `json:"edges"`
}

// Has reports whether the diagram has an edge from → to.
func (d Diagram) Has(from, to string) bool {
	for _, e := range d.Edges {
		if e.From == from && e.To == to {
			return true
		}
	}
	return false
}

type e = DiagramEdge

var diagrams = map[PatternID]struct {
	states []DiagramState
	edges  []DiagramEdge
}{
	CP1: {
		[]DiagramState{{p1Plan, "planner plans", false}, {p1PlanReview, "plan awaits approval", false}, {p1Impl, "executor implements", false},
			{p1Verify, "test + review", false}, {p1Fix, "IMPL-fix", false}, {p1ReviewFix, "CP-2 review-fix (review_cycle)", false}},
		[]DiagramEdge{e{"", p1Plan, "new requirement"}, e{p1Plan, p1PlanReview, "plan_ready"}, e{p1Plan, p1Impl, "plan approved"},
			e{p1Plan, p1Plan, "plan task failed: revise / coordinator plans (3+)"}, e{p1PlanReview, p1Impl, "plan_approved"},
			e{p1PlanReview, p1Plan, "plan_revision"}, e{p1Plan, StateFailed, "coordinator's plan failed"}, e{p1PlanReview, StateFailed, "coordinator's plan rejected"},
			e{p1Impl, p1Verify, "impl_complete"}, e{p1Impl, p1Fix, "implementation failed"}, e{p1Fix, p1Verify, "fix complete"},
			e{p1Fix, p1Fix, "fix failed"}, e{p1Verify, StateDone, "tests ≥ 95 % and review passes"}, e{p1Verify, p1Fix, "tests < 95 % or review blocks"},
			e{p1Verify, StateEscalated, "5 rounds without passing"}, e{p1Impl, StateEscalated, "rounds used up"}, e{p1Fix, StateEscalated, "rounds used up"},
			e{p1Impl, p1ReviewFix, "impl_complete (review_cycle): CP-2"}, e{p1ReviewFix, p1Verify, "CP-2 converged: TEST"}, e{p1ReviewFix, StateEscalated, "CP-2 did not converge"}},
	},
	CP2: {
		[]DiagramState{{p2Produce, "producer delivers", false}, {p2Review, "reviewer reviews", false}, {p2Fix, "producer fixes", false}, {p2Escalate, "CP-5/CP-7/CP-1", false}},
		[]DiagramEdge{e{"", p2Produce, "no artifact yet"}, e{"", p2Review, "artifact delivered"}, e{p2Produce, p2Review, "impl_complete"},
			e{p2Produce, StateFailed, "producer failed"}, e{p2Review, StateDone, "APPROVE / CONDITIONAL without critical"},
			e{p2Review, p2Fix, "BLOCK: IMPL-fix + fix_required"}, e{p2Review, StateEscalated, "5 rounds, or 2 rounds without fewer findings"},
			e{p2Review, p2Escalate, "design issue"}, e{p2Review, StateFailed, "reviewer failed"}, e{p2Fix, p2Review, "revision delivered"},
			e{p2Fix, p2Escalate, "fix failed"}, e{p2Escalate, p2Review, "escalation resolved"}, e{p2Escalate, StateEscalated, "not resolved"}},
	},
	CP3: {
		[]DiagramState{{p3FanOut, "workers analyse", false}, {p3Consensus, "CP-4 on conflicts", false}},
		[]DiagramEdge{e{"", p3FanOut, "broadcast"}, e{p3FanOut, StateDone, "quorum, no conflict"}, e{p3FanOut, StateDegraded, "timeout or worker errors: partial"},
			e{p3FanOut, p3Consensus, "conflicts"}, e{p3FanOut, StateFailed, "no result"}, e{p3Consensus, StateDone, "consensus"},
			e{p3Consensus, StateDegraded, "consensus with gaps"}, e{p3Consensus, StateFailed, "no consensus"}},
	},
	CP4: {
		[]DiagramState{{p4Voting, "voters vote", false}, {p4Revise, "proposer revises", false}, {p4AwaitUser, "user decides", false}},
		[]DiagramEdge{e{"", p4Voting, "proposal broadcast"}, e{p4Voting, p4Voting, "< N/2 votes: extend / re-vote"}, e{p4Voting, StateDone, "ratio ≥ 0.67, no BLOCK"},
			e{p4Voting, StateDegraded, "all ABSTAIN: coordinator decides"}, e{p4Voting, p4Revise, "not passed: revise"},
			e{p4Voting, p4AwaitUser, "2 rounds without quorum"}, e{p4Revise, p4Voting, "revised proposal"}, e{p4AwaitUser, StateEscalated, "user decided"}},
	},
	CP5: {
		[]DiagramState{{"L0", "agent self-repair (2)", false}, {"L1", "specialist diagnosis (1)", false}, {"L2", "coordinator intervention (1)", false},
			{"L3", "user escalation (1)", false}, {p5Replan, "CP-1 replan", false}},
		[]DiagramEdge{e{"", "L0", "issue"}, e{"", "L1", "enter at L1"}, e{"", "L2", "enter at L2"}, e{"", "L3", "enter at L3"},
			e{"L0", "L0", "retry"}, e{"L0", "L1", "escalate"}, e{"L1", "L1", "retry"}, e{"L1", "L2", "escalate"}, e{"L2", "L2", "retry"}, e{"L2", "L3", "escalate"},
			e{"L0", StateDone, "resolved"}, e{"L1", StateDone, "resolved (learn pattern for L0)"}, e{"L2", StateDone, "resolved"}, e{"L3", StateDone, "user resolved"},
			e{"L3", StateDegraded, "user silent: WORKAROUND"}, e{"L3", StateFailed, "user: unresolved"},
			e{"L0", p5Replan, "architectural"}, e{"L1", p5Replan, "architectural"}, e{"L2", p5Replan, "architectural"},
			e{p5Replan, StateDone, "replanned"}, e{p5Replan, StateFailed, "replan failed"}, e{p5Replan, StateEscalated, "replan escalated"}, e{p5Replan, StateDegraded, "replan degraded"}},
	},
	CP6: {
		[]DiagramState{{p6Impl, "implement increment", false}, {p6Validate, "gate check", false}, {p6Review, "CP-2 in increment", false},
			{p6Final, "full validation", false}, {p6Bisect, "revert to locate", false}},
		[]DiagramEdge{e{"", p6Impl, "layers → increments"}, e{p6Impl, p6Validate, "increment ready"}, e{p6Impl, p6Impl, "failed: fix / next increment"},
			e{p6Validate, p6Impl, "gate failed: fix, or blocked → next"}, e{p6Validate, p6Review, "gate passed (review) / tests fail → CP-2"},
			e{p6Validate, p6Final, "last increment done"}, e{p6Impl, p6Final, "last increment blocked"}, e{p6Review, p6Impl, "next increment / fix"},
			e{p6Review, p6Validate, "CP-2 fixed tests: re-validate"}, e{p6Review, p6Final, "last increment done"},
			e{p6Validate, StateEscalated, "> half blocked"}, e{p6Impl, StateEscalated, "> half blocked"}, e{p6Review, StateEscalated, "> half blocked"},
			e{p6Validate, StateFailed, "all blocked"}, e{p6Impl, StateFailed, "all blocked"}, e{p6Review, StateFailed, "all blocked"},
			e{p6Final, StateDone, "final validation passed"}, e{p6Final, StateDegraded, "passed with blocked increments"}, e{p6Final, p6Bisect, "final failed: bisect"},
			e{p6Bisect, p6Bisect, "still failing: revert next"}, e{p6Bisect, StateDegraded, "culprit found"}, e{p6Bisect, StateFailed, "not located"}},
	},
	CP7: {
		[]DiagramState{{p7Diagnose, "all agents diagnose", false}, {p7Fix, "SWARM-FIX", false}, {p7Verify, "re-run scenario", false}, {p7Escalate, "CP-5 L3", false}},
		[]DiagramEdge{e{"", p7Diagnose, "pause tasks, swarm_join"}, e{p7Diagnose, p7Fix, "best diagnosis"}, e{p7Diagnose, p7Diagnose, "no diagnosis: next round"},
			e{p7Diagnose, p7Escalate, "rounds used up"}, e{p7Fix, p7Verify, "fix applied"}, e{p7Fix, p7Fix, "fix failed: next best"},
			e{p7Fix, p7Diagnose, "no candidate left: next round"}, e{p7Fix, p7Escalate, "rounds used up"},
			e{p7Verify, StateDone, "blocker solved: resume"}, e{p7Verify, p7Fix, "regression: roll back, next best"},
			e{p7Verify, p7Diagnose, "not solved: focused round"}, e{p7Verify, p7Escalate, "2 rounds failed"},
			e{p7Escalate, StateEscalated, "user resolved"}, e{p7Escalate, StateDegraded, "WORKAROUND"}, e{p7Escalate, StateFailed, "unresolved"}},
	},
	CP8: {
		[]DiagramState{{p8Advice, "consultant advises", false}, {p8Apply, "requester applies", false}, {p8Consensus, "CP-4 on design conflict", false}},
		[]DiagramEdge{e{"", p8Advice, "route to specialist or CLI tool"}, e{"", StateDegraded, "no consultant: unverified"},
			e{p8Advice, p8Advice, "confidence < 0.8: follow-up / second opinion"}, e{p8Advice, p8Apply, "confidence ≥ 0.8"},
			e{p8Advice, StateDone, "confidence ≥ 0.8 (no confirmation)"}, e{p8Advice, StateDegraded, "timeout or low confidence: unverified"},
			e{p8Apply, StateDone, "applied"}, e{p8Apply, p8Consensus, "conflicts with design"}, e{p8Apply, StateDegraded, "not applied / unconfirmed"},
			e{p8Apply, StateEscalated, "conflict, no voters"}, e{p8Consensus, StateDone, "settled"}, e{p8Consensus, StateFailed, "not settled"},
			e{p8Consensus, StateEscalated, "user decided"}, e{p8Consensus, StateDegraded, "default decision"}},
	},
	CP9: {
		[]DiagramState{{p9Tracks, "tracks A and B work", false}, {p9Align, "alignment check", false}, {p9Adjust, "track(s) adjust", false},
			{p9Swarm, "CP-7 on blocked track", false}, {p9Fallback, "CP-1 sequential", false}},
		[]DiagramEdge{e{"", p9Tracks, "launch tracks"}, e{p9Tracks, p9Align, "both reached sync point"}, e{p9Tracks, p9Swarm, "track blocked / 5 min wait"},
			e{p9Tracks, StateEscalated, "blocked again"}, e{p9Swarm, p9Tracks, "unblocked"}, e{p9Swarm, StateFailed, "swarm failed"},
			e{p9Swarm, StateEscalated, "swarm escalated"}, e{p9Align, p9Tracks, "ALIGNED: next sync point"}, e{p9Align, StateDone, "all aligned"},
			e{p9Align, p9Adjust, "MISALIGNED"}, e{p9Align, p9Fallback, "2 misalignments: degrade"}, e{p9Adjust, p9Align, "adjusted"},
			e{p9Fallback, StateDegraded, "CP-1 done"}, e{p9Fallback, StateFailed, "CP-1 failed"}, e{p9Fallback, StateEscalated, "CP-1 escalated"}},
	},
	CP10: {
		[]DiagramState{{p10Collect, "collect retrospectives", false}},
		[]DiagramEdge{e{"", p10Collect, "execution data + retro requests"}, e{p10Collect, StateDone, "report (minimal when nothing notable)"}},
	},
}

// DiagramFor returns the state diagram of a pattern, terminal states
// included. ok is false for an unknown pattern.
func DiagramFor(p PatternID) (Diagram, bool) {
	d, ok := diagrams[p]
	if !ok {
		return Diagram{}, false
	}
	out := Diagram{Pattern: p, Name: p.Name()}
	out.States = append(out.States, d.states...)
	terms := map[string]bool{}
	for _, ed := range d.edges {
		for _, t := range []string{StateDone, StateFailed, StateEscalated, StateDegraded} {
			if ed.To == t {
				terms[t] = true
			}
		}
	}
	labels := map[string]string{StateDone: "success", StateFailed: "failed", StateEscalated: "escalated to the user", StateDegraded: "fallback result"}
	for _, t := range []string{StateDone, StateDegraded, StateEscalated, StateFailed} {
		if terms[t] {
			out.States = append(out.States, DiagramState{Name: t, Label: labels[t], Terminal: true})
		}
	}
	out.Edges = append(out.Edges, d.edges...)
	return out, true
}
