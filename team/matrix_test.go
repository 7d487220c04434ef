package team

// The per-pattern test matrix of issue 16: for every pattern, its success
// path, each fallback row of the seed, its timeout (on the harness's
// injected clock) and its maximum iterations. docs/team.md ("Test
// matrix") maps each seed row to the test that covers it; this file holds
// the rows patterns_test.go did not.

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// noTimers checks a run has set no timer: the seed gives the pattern no
// explicit timeout.
func (h *harness) noTimers() {
	h.t.Helper()
	for _, c := range h.all {
		if c.Kind == CmdSetTimer {
			h.t.Fatalf("timer %q set; the pattern has no run timeout", c.Key)
		}
	}
}

func (h *harness) learnings(kind CommandKind) []Learning {
	var out []Learning
	for _, c := range h.all {
		if c.Kind == kind {
			out = append(out, *c.Learning)
		}
	}
	return out
}

func TestCP1Matrix(t *testing.T) {
	t.Parallel()
	t.Run("timeout: none (each stage converges on its own)", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login", NoReview: true})
		h.task("plan-1", StatusCompleted, nil)
		h.now = h.now.Add(30 * 24 * time.Hour) // a month later nothing has fired
		h.task("impl-1", StatusCompleted, nil)
		h.task("test-1", StatusCompleted, TestResult{PassRate: ptr(1.0)})
		h.wantOutcome(OutcomeSuccess)
		h.noTimers()
	})
	t.Run("max iterations: configurable rounds, then the user", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Pipeline.MaxIterations = 2
		h := newHarnessCfg(t, CP1, cfg, PipelineInput{Requirement: "login", NoReview: true})
		h.task("plan-1", StatusCompleted, nil)
		h.task("impl-1", StatusCompleted, nil)
		h.task("test-1", StatusCompleted, TestResult{Passed: 90, Total: 100})
		h.wantState(p1Fix)
		h.task("fix-2", StatusCompleted, nil)
		h.task("test-2", StatusCompleted, TestResult{Passed: 90, Total: 100})
		o := h.wantOutcome(OutcomeEscalated)
		if h.r.Iteration != 2 || h.r.MaxIterations != 2 || !strings.Contains(o.Summary, "user") {
			t.Fatalf("iteration %d/%d: %s", h.r.Iteration, h.r.MaxIterations, o.Summary)
		}
	})
	t.Run("fallback: failed plan tasks count as rejections", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login"})
		h.task("plan-1", StatusFailed, nil)
		h.task("plan-2", StatusFailed, nil)
		h.task("plan-3", StatusFailed, nil)
		if s := h.created("plan-4"); s.Role != RoleCoordinator {
			t.Fatalf("after 3 failed plans: %+v", s)
		}
		h.task("plan-4", StatusFailed, nil) // the coordinator's own plan failed
		h.wantOutcome(OutcomeFailed)
	})
}

// inDiagram checks every state change of the run is an edge of its diagram.
func (h *harness) inDiagram() {
	h.t.Helper()
	d, _ := DiagramFor(h.r.Pattern)
	for _, dec := range h.r.Decisions {
		if dec.From != dec.To && !d.Has(dec.From, dec.To) {
			h.t.Errorf("%s → %s is not in the %s diagram", dec.From, dec.To, h.r.Pattern)
		}
	}
}

func TestCP1ReviewCycle(t *testing.T) {
	t.Parallel()
	t.Run("composition: CP-2 nested as the review stage, then TEST", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login", ReviewCycle: true})
		h.task("plan-1", StatusCompleted, nil)
		if h.r.Tasks["test-1"].Subject != "" || h.r.Tasks["review-1"].Subject != "" {
			t.Fatal("TEST/REVIEW created before the review-fix cycle")
		}
		h.task("impl-1", StatusCompleted, nil)
		h.wantState(p1ReviewFix)
		c := h.has(CmdStartRun)
		if c == nil || c.Child.Pattern != CP2 || !strings.Contains(string(c.Child.Input), `"reviewer":"reviewer"`) {
			t.Fatalf("nested CP-2 %+v", c)
		}
		h.child("review", OutcomeSuccess)
		h.wantState(p1Verify)
		h.task("test-1", StatusCompleted, TestResult{PassRate: ptr(1.0)})
		h.wantOutcome(OutcomeSuccess)
		h.inDiagram()
	})
	t.Run("fallback: a cycle that does not converge escalates the pipeline", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login", ReviewCycle: true})
		h.task("plan-1", StatusCompleted, nil)
		h.task("impl-1", StatusCompleted, nil)
		h.child("review", OutcomeEscalated)
		h.wantOutcome(OutcomeEscalated)
		h.inDiagram()
		if _, _, err := Start(RunSpec{ID: "x", Pattern: CP1, Team: "alpha", Config: DefaultConfig(), Input: []byte(`{"requirement":"r","review_cycle":true,"no_review":true}`)}, t0); !errors.Is(err, ErrInvalid) {
			t.Fatal(err)
		}
	})
}

func TestCP2Matrix(t *testing.T) {
	t.Parallel()
	block := func(n int) ReviewResult {
		var f Findings
		for i := range n {
			f.High = append(f.High, Finding{File: "a.go", Line: i, Description: "issue"})
		}
		return ReviewResult{Verdict: VerdictBlock, Findings: f}
	}
	t.Run("fallback: still BLOCK after max rounds → user with the whole findings history", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		for r := 1; r <= 5; r++ {
			h.msg("rev", MsgReviewResult, block(10-r))
			if r < 5 {
				h.task(keyf("fix-%d", r), StatusCompleted, nil)
			}
		}
		o := h.wantOutcome(OutcomeEscalated)
		var d struct {
			History []RoundRecord `json:"history"`
		}
		if err := json.Unmarshal(o.Data, &d); err != nil || len(d.History) != 5 || d.History[4].Total != 5 || d.History[1].Delta.Fixed != 1 {
			t.Fatalf("history %+v (%v)", d.History, err)
		}
	})
	t.Run("fallback: design issue → CP-1 replan (escalate_to)", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth", EscalateTo: CP1})
		h.msg("rev", MsgReviewResult, ReviewResult{Verdict: VerdictBlock, DesignIssue: true})
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP1 || !strings.Contains(string(c.Child.Input), "Replan") {
			t.Fatal("no CP-1 child")
		}
		h.child("escalation", OutcomeFailed)
		h.wantOutcome(OutcomeEscalated)
	})
	t.Run("composition: CP-2 escalates to CP-7 when the fix fails", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth", EscalateTo: CP7})
		h.msg("rev", MsgReviewResult, block(1))
		h.task("fix-1", StatusFailed, nil)
		h.wantState(p2Escalate)
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP7 {
			t.Fatal("no CP-7 child")
		}
		h.child("escalation", OutcomeSuccess)
		h.wantState(p2Review) // swarm solved it: re-review
		if h.r.Iteration != 2 {
			t.Fatal(h.r.Iteration)
		}
	})
	t.Run("timeout: the round's stage timeout (task leases), no run timer", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		h.task("review-1", StatusFailed, nil) // the reviewer's lease ran out of attempts
		h.wantOutcome(OutcomeFailed)
		h.noTimers()
	})
}

func TestCP3Matrix(t *testing.T) {
	t.Parallel()
	in := FanOutInput{Requirement: "review", Workers: []FanOutWorker{{Angle: "security", Member: "a"}, {Angle: "perf", Member: "b"}, {Angle: "arch", Member: "c"}}}
	t.Run("success gate: quorum ratio below 1 fans in early and marks the missing angle", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.FanOut.QuorumRatio = 0.6 // ceil(3 × 0.6) = 2, the seed's Math.ceil
		h := newHarnessCfg(t, CP3, cfg, in)
		h.task("analyze-1", StatusCompleted, AnalysisResult{})
		h.wantState(p3FanOut)
		h.task("analyze-3", StatusCompleted, AnalysisResult{})
		o := h.wantOutcome(OutcomeDegraded)
		if !strings.Contains(string(o.Data), `"missing":["perf"]`) {
			t.Fatal(string(o.Data))
		}
	})
	t.Run("max iterations: one fan-out; a late result is refused", func(t *testing.T) {
		h := newHarness(t, CP3, in)
		h.fire("deadline")
		h.wantOutcome(OutcomeFailed) // nothing arrived
		if h.r.Iteration != 1 || h.r.MaxIterations != 1 {
			t.Fatal(h.r.Iteration, h.r.MaxIterations)
		}
		if _, _, err := Step(h.r, Event{Kind: EventTask, TaskKey: "analyze-1", Task: &TaskChange{Status: StatusCompleted}}, h.now); !errors.Is(err, ErrRunFinished) {
			t.Fatal(err)
		}
	})
	t.Run("fallback: every worker errors → failed", func(t *testing.T) {
		h := newHarness(t, CP3, in)
		for _, k := range []string{"analyze-1", "analyze-2", "analyze-3"} {
			h.task(k, StatusFailed, nil)
		}
		h.wantOutcome(OutcomeFailed)
	})
}

func TestCP4Matrix(t *testing.T) {
	t.Parallel()
	in := ConsensusInput{Proposal: Proposal{ID: "P1", Title: "strategy"}, Voters: []string{"a", "b", "c"}, Proposer: "arch"}
	vote := func(v VoteChoice) Vote { return Vote{ProposalID: "P1", Vote: v, Rationale: "r"} }
	t.Run("correction: not passed → the proposer revises, round 2 passes", func(t *testing.T) {
		h := newHarness(t, CP4, in)
		h.msg("a", MsgVote, vote(VoteReject))
		h.msg("b", MsgVote, vote(VoteReject))
		h.msg("c", MsgVote, vote(VoteApprove))
		h.wantState(p4Revise)
		if s := h.created("revise-1"); s.Owner != "arch" || !strings.Contains(s.Description, "a REJECT: r") {
			t.Fatalf("revise task %+v", s)
		}
		h.task("revise-1", StatusCompleted, Proposal{ID: "ignored", Title: "strategy v2"})
		h.wantState(p4Voting)
		if len(h.sent(MsgProposal)) != 3 || h.r.Iteration != 2 {
			t.Fatal("round 2 not broadcast")
		}
		for _, v := range []string{"a", "b", "c"} {
			h.msg(v, MsgVote, vote(VoteApprove))
		}
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("signal: votes of non-voters and second votes are ignored", func(t *testing.T) {
		h := newHarness(t, CP4, ConsensusInput{Proposal: Proposal{ID: "P1", Title: "x"}, Voters: []string{"a", "b"}})
		h.msg("z", MsgVote, vote(VoteApprove))
		h.msg("a", MsgVote, vote(VoteApprove))
		h.msg("a", MsgVote, vote(VoteReject))
		h.wantState(p4Voting)
		h.msg("b", MsgVote, vote(VoteApprove))
		h.wantOutcome(OutcomeSuccess)
	})
}

func TestCP5Matrix(t *testing.T) {
	t.Parallel()
	t.Run("success at L0: no escalation, no pattern to learn", func(t *testing.T) {
		h := newHarness(t, CP5, EscalationInput{Issue: "x"})
		h.task("l0-1", StatusCompleted, EscalationReport{Resolved: true, Solution: "retry with context"})
		h.wantOutcome(OutcomeSuccess)
		if len(h.learnings(CmdRecordPattern)) != 0 || len(h.sent(MsgEscalate)) != 0 {
			t.Fatal("L0 success escalated or learned")
		}
	})
	t.Run("L3: the user answers before the timeout", func(t *testing.T) {
		h := newHarness(t, CP5, EscalationInput{Issue: "x", StartLevel: 3})
		if at := h.r.Timers["user"]; !at.Equal(t0.Add(30 * time.Minute)) {
			t.Fatal(at)
		}
		h.reply("l3", "rewrite", "do the rewrite")
		o := h.wantOutcome(OutcomeSuccess)
		if !strings.Contains(o.Summary, "L3") || len(h.sent(MsgResolution)) != 1 {
			t.Fatal(o.Summary)
		}
	})
	t.Run("max iterations: per-level attempts are configurable", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Escalation.MaxAttempts = [4]int{1, 2, 1, 1}
		h := newHarnessCfg(t, CP5, cfg, EscalationInput{Issue: "x"})
		if h.r.MaxIterations != 5 {
			t.Fatal(h.r.MaxIterations)
		}
		h.task("l0-1", StatusFailed, nil)
		h.wantState("L1")
		h.task("l1-1", StatusCompleted, EscalationReport{Diagnosis: "cycle"})
		h.wantState("L1")
		h.task("l1-2", StatusCompleted, EscalationReport{Diagnosis: "cycle", Recommendation: "split"})
		h.wantState("L2")
		if esc := h.sent(MsgEscalate); len(esc) != 1 || !strings.Contains(string(esc[0].Data), `"recommendation":"split"`) {
			t.Fatalf("diagnosis chain not carried: %+v", esc)
		}
	})
}

func TestCP6Matrix(t *testing.T) {
	t.Parallel()
	t.Run("composition: CP-2 nested inside each increment (review_each)", func(t *testing.T) {
		h := newHarness(t, CP6, IncrementalInput{Plan: []PlanItem{{ID: "a"}, {ID: "b", BlockedBy: []string{"a"}}}, ReviewEach: true})
		for i := 1; i <= 2; i++ {
			id := keyf("INCREMENT-%d", i)
			h.task(keyf("impl-%d-1", i), StatusCompleted, nil)
			h.task(keyf("validate-%d-1", i), StatusCompleted, IncrementReady{Increment: id, Status: "PASS"})
			h.wantState(p6Review)
			c := h.has(CmdStartRun)
			if c == nil || c.Child.Pattern != CP2 || c.Key != "review-"+id {
				t.Fatalf("increment %d: no nested CP-2", i)
			}
			h.child("review-"+id, OutcomeSuccess)
		}
		h.wantState(p6Final)
		h.task("final", StatusCompleted, nil)
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("timeout off by default; max iterations = increments × (1 + 3 retries)", func(t *testing.T) {
		h := newHarness(t, CP6, IncrementalInput{Plan: []PlanItem{{ID: "a"}, {ID: "b"}, {ID: "c", BlockedBy: []string{"a"}}}})
		if h.r.MaxIterations != 8 || len(h.r.Timers) != 0 {
			t.Fatal(h.r.MaxIterations, h.r.Timers)
		}
	})
}

func TestCP7Matrix(t *testing.T) {
	t.Parallel()
	in := SwarmInput{Issue: "build broken", Participants: []string{"a", "b"}, Pause: []string{"T1"}}
	diag := func(conf float64, fix string) SwarmDiagnosis {
		return SwarmDiagnosis{Perspective: "p", RootCause: "rc", Confidence: conf, FixSuggestion: fix}
	}
	t.Run("a failed fix task tries the next-best diagnosis", func(t *testing.T) {
		h := newHarness(t, CP7, in)
		h.msg("a", MsgSwarmDiagnosis, diag(0.9, "one"))
		h.msg("b", MsgSwarmDiagnosis, diag(0.5, "two"))
		h.task("fix-1", StatusFailed, nil)
		if s := h.created("fix-2"); s.Owner != "b" {
			t.Fatalf("next best %+v", s)
		}
	})
	t.Run("cancelling a swarm resumes the paused tasks", func(t *testing.T) {
		h := newHarness(t, CP7, in)
		_, cmds, err := Cancel(h.r, "stop", h.now)
		if err != nil {
			t.Fatal(err)
		}
		if kinds(cmds) == "" || !strings.Contains(kinds(cmds), "resume_task") {
			t.Fatal(kinds(cmds))
		}
	})
}

func TestCP8Matrix(t *testing.T) {
	t.Parallel()
	roster := []Member{{Name: "dev", Role: RoleExecutor, Worker: Worker{Kind: WorkerAgent}},
		{Name: "sec", Role: RoleSpecialist, Capabilities: []string{"security"}, Worker: Worker{Kind: WorkerAgent}}}
	in := ConsultInput{Requester: "dev", Request: ConsultRequest{Topic: "security", Question: "hash?"}, Members: roster}
	t.Run("timeout: normal urgency 5 min", func(t *testing.T) {
		h := newHarness(t, CP8, in)
		if at := h.r.Timers["advice"]; !at.Equal(t0.Add(5 * time.Minute)) {
			t.Fatal(at)
		}
	})
	t.Run("max iterations: one consult + one follow-up to the same consultant", func(t *testing.T) {
		h := newHarness(t, CP8, in)
		h.msg("sec", MsgConsultResponse, ConsultResponse{Recommendation: "maybe", Confidence: 0.5})
		m := h.sent(MsgConsultRequest)
		if len(m) != 1 || m[0].To != "sec" || !strings.Contains(string(m[0].Data), `"follow_up":true`) {
			t.Fatalf("follow-up %+v", m)
		}
		h.msg("sec", MsgConsultResponse, ConsultResponse{Recommendation: "bcrypt", Confidence: 0.9})
		h.wantState(p8Apply)
		if h.r.Iteration != 2 || h.r.MaxIterations != 2 {
			t.Fatal(h.r.Iteration)
		}
		h.fire("apply") // the requester never confirmed
		h.wantOutcome(OutcomeDegraded)
	})
	t.Run("fallback: nobody to consult → unverified at once", func(t *testing.T) {
		h := newHarness(t, CP8, ConsultInput{Requester: "dev", Request: ConsultRequest{Topic: "security", Question: "q"}, Members: roster[:1]})
		if o := h.wantOutcome(OutcomeDegraded); !strings.Contains(o.Summary, "unverified") {
			t.Fatal(o.Summary)
		}
	})
}

func TestCP9Matrix(t *testing.T) {
	t.Parallel()
	in := DualTrackInput{Requirement: "api", SyncPoints: []SyncPoint{{ID: "SYNC-1", TrackADeliverable: "schema", TrackBDeliverable: "stubs"}}}
	t.Run("fallback: a blocked track pauses the other and starts CP-7; blocked again → user", func(t *testing.T) {
		h := newHarness(t, CP9, in)
		h.task("b-SYNC-1-2", StatusBlocked, nil)
		h.wantState(p9Swarm)
		var paused bool
		for _, c := range h.cmds {
			paused = paused || c.Kind == CmdPauseTask && c.Key == "a-SYNC-1-1"
		}
		if !paused || h.has(CmdStartRun).Child.Pattern != CP7 {
			t.Fatal("track A not paused or no CP-7")
		}
		h.child("swarm-SYNC-1", OutcomeSuccess)
		if h.has(CmdResumeTask) == nil {
			t.Fatal("track A not resumed")
		}
		h.task("b-SYNC-1-3", StatusFailed, nil)
		h.wantOutcome(OutcomeEscalated)
	})
	t.Run("max iterations: 2 alignments per sync point", func(t *testing.T) {
		h := newHarness(t, CP9, in)
		if h.r.MaxIterations != 2 {
			t.Fatal(h.r.MaxIterations)
		}
	})
	t.Run("fallback: the fast track's failed pre-build is redone at the next sync point", func(t *testing.T) {
		two := DualTrackInput{SyncPoints: []SyncPoint{{ID: "S1", TrackADeliverable: "a1", TrackBDeliverable: "b1"}, {ID: "S2", TrackADeliverable: "a2", TrackBDeliverable: "b2"}}}
		h := newHarness(t, CP9, two)
		h.task("b-S1-2", StatusCompleted, nil)
		h.created("pb-S2-3")
		h.task("pb-S2-3", StatusFailed, nil)
		h.task("a-S1-1", StatusCompleted, nil)
		h.task("align-S1-1", StatusCompleted, nil)
		h.created("a-S2-4")
		h.created("b-S2-5")
	})
}

func TestCP10Matrix(t *testing.T) {
	t.Parallel()
	t.Run("fallback: execution data missing → partial report", func(t *testing.T) {
		h := newHarness(t, CP10, PostMortemInput{Team: "alpha"})
		o := h.wantOutcome(OutcomeSuccess)
		if !strings.Contains(string(o.Data), `"partial":true`) {
			t.Fatal(string(o.Data))
		}
	})
	t.Run("max iterations: one retrospective round; a late finding is refused", func(t *testing.T) {
		h := newHarness(t, CP10, PostMortemInput{Team: "alpha", Participants: []string{"p"}, Execution: &ExecutionData{TotalTasks: 1, Completed: 1}})
		h.msg("p", MsgRetroFinding, RetroFinding{WentWell: []string{"ok"}})
		h.wantOutcome(OutcomeSuccess)
		if h.r.Iteration != 1 || h.r.MaxIterations != 1 {
			t.Fatal(h.r.Iteration)
		}
		m := &Message{Team: "alpha", Seq: 99, From: "p", Type: MsgRetroFinding, Data: mustJSON(t, RetroFinding{})}
		if _, _, err := Step(h.r, Event{Kind: EventMessage, Message: m}, h.now); !errors.Is(err, ErrRunFinished) {
			t.Fatal(err)
		}
	})
	t.Run("learning: patterns carry the work's outcome; actions become heuristics", func(t *testing.T) {
		failed := &ExecutionData{TotalTasks: 3, Completed: 2, Failed: 1}
		h := newHarness(t, CP10, PostMortemInput{Team: "alpha", Subject: "payment gateway", Participants: []string{"p"}, Execution: failed})
		h.msg("p", MsgRetroFinding, RetroFinding{Difficult: []string{"flaky sandbox"}, Suggestions: []string{"stub the sandbox"}, Patterns: []string{"contract tests first"}})
		h.wantOutcome(OutcomeSuccess)
		pats, heur := h.learnings(CmdRecordPattern), h.learnings(CmdRecordHeuristic)
		if len(pats) != 1 || pats[0].Success {
			t.Fatalf("pattern from failed work recorded as a success: %+v", pats)
		}
		if len(heur) != 1 || heur[0].Content != "stub the sandbox" || heur[0].Trigger != "payment gateway" || heur[0].Evidence[0] != "flaky sandbox" {
			t.Fatalf("heuristic %+v", heur)
		}
		ok := true
		h = newHarness(t, CP10, PostMortemInput{Team: "alpha", Participants: []string{"p"}, WorkSucceeded: &ok})
		h.msg("p", MsgRetroFinding, RetroFinding{Patterns: []string{"contract tests first"}})
		if pats := h.learnings(CmdRecordPattern); len(pats) != 1 || !pats[0].Success {
			t.Fatalf("pattern from successful work: %+v", pats)
		}
	})
}
