package team

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCP1Pipeline(t *testing.T) {
	t.Parallel()
	t.Run("success", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login"})
		h.wantState(p1Plan)
		h.task("plan-1", StatusCompleted, PlanReady{Summary: "p"})
		h.wantState(p1Impl)
		if h.created("impl-1").Subject != "IMPL-001" || h.created("test-1").BlockedBy[0] != "impl-1" || h.created("review-1").Subject != "REVIEW-001" {
			t.Fatal("task chain")
		}
		h.task("impl-1", StatusCompleted, nil)
		h.task("test-1", StatusCompleted, TestResult{PassRate: ptr(0.95)}) // exactly at the gate
		h.msgFor("qa", MsgReviewResult, ReviewResult{Verdict: VerdictConditional, Findings: Findings{Low: []Finding{{Description: "nit"}}}}, "review-1")
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("plan rejected 3 times: coordinator plans", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login", ApproveBy: "lead"})
		for i := 1; i <= 2; i++ {
			h.msg("planner", MsgPlanReady, PlanReady{})
			h.wantState(p1PlanReview)
			h.msg("lead", MsgPlanRevision, PlanRevision{Feedback: "no"})
			h.wantState(p1Plan)
		}
		h.msg("planner", MsgPlanReady, PlanReady{})
		h.msg("lead", MsgPlanRevision, PlanRevision{Feedback: "still no"})
		if spec := h.created("plan-4"); spec.Role != RoleCoordinator || spec.Subject != "PLAN-coord" {
			t.Fatalf("third rejection: %+v", spec)
		}
		h.task("plan-4", StatusCompleted, nil) // the coordinator's plan needs no approval
		h.wantState(p1Impl)
	})
	t.Run("critical review finding creates IMPL-fix; tests below 95% after 5 rounds go to the user", func(t *testing.T) {
		h := newHarness(t, CP1, PipelineInput{Requirement: "login"})
		h.task("plan-1", StatusCompleted, nil)
		h.task("impl-1", StatusCompleted, nil)
		h.task("test-1", StatusCompleted, TestResult{PassRate: ptr(1.0)})
		h.task("review-1", StatusCompleted, ReviewResult{Verdict: VerdictBlock, Findings: Findings{Critical: []Finding{{Description: "sql injection"}}}})
		h.wantState(p1Fix)
		if s := h.created("fix-2"); s.Subject != "IMPL-fix-1" || !strings.Contains(s.Description, "sql injection") {
			t.Fatalf("fix task %+v", s)
		}
		h.created("review-2")
		for round := 2; round <= 5; round++ {
			h.task(keyf("fix-%d", round), StatusCompleted, nil)
			h.task(keyf("test-%d", round), StatusCompleted, TestResult{Passed: 94, Total: 100})
			if round == 2 {
				h.task("review-2", StatusCompleted, ReviewResult{Verdict: VerdictApprove})
			}
			if round < 5 {
				h.wantState(p1Fix)
			}
		}
		h.wantOutcome(OutcomeEscalated)
		if h.r.Iteration != 5 {
			t.Fatalf("iterations %d", h.r.Iteration)
		}
	})
}

func keyf(f string, n int) string { return strings.Replace(f, "%d", itoa(n), 1) }

func itoa(n int) string { return string(rune('0' + n)) }

func TestCP2ReviewFix(t *testing.T) {
	t.Parallel()
	block := func(n int) ReviewResult {
		var f Findings
		for i := 0; i < n; i++ {
			f.High = append(f.High, Finding{File: "a.go", Line: i, Description: "issue"})
		}
		return ReviewResult{Verdict: VerdictBlock, Findings: f}
	}
	t.Run("approve after a fix, with delta", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		h.wantState(p2Review)
		h.msgFor("rev", MsgReviewResult, block(3), "review-1")
		h.wantState(p2Fix)
		if h.created("fix-1").Subject != "IMPL-fix-1" || len(h.sent(MsgFixRequired)) != 1 {
			t.Fatal("fix task and fix_required")
		}
		h.task("fix-1", StatusCompleted, nil)
		h.msg("rev", MsgReviewResult, block(1))
		if d := FindingsDelta(block(3).Findings, block(1).Findings); d.Fixed != 2 || d.New != 0 || d.String() != "+2 fixed, -0 new issues" {
			t.Fatalf("delta %+v %s", d, d)
		}
		h.task("fix-2", StatusCompleted, nil)
		h.msg("rev", MsgReviewResult, ReviewResult{Verdict: VerdictConditional})
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("CONDITIONAL with a critical finding does not pass", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		h.msg("rev", MsgReviewResult, ReviewResult{Verdict: VerdictConditional, Findings: Findings{Critical: []Finding{{Description: "x"}}}})
		h.wantState(p2Fix)
	})
	t.Run("two rounds without fewer findings stop", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		h.msg("rev", MsgReviewResult, block(2))
		h.task("fix-1", StatusCompleted, nil)
		h.msg("rev", MsgReviewResult, block(2)) // no improvement 1
		h.wantState(p2Fix)
		h.task("fix-2", StatusCompleted, nil)
		h.msg("rev", MsgReviewResult, block(3)) // no improvement 2
		o := h.wantOutcome(OutcomeEscalated)
		if !strings.Contains(o.Summary, "did not decrease") {
			t.Fatal(o.Summary)
		}
	})
	t.Run("max 5 rounds", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		for r := 1; r <= 5; r++ {
			h.msg("rev", MsgReviewResult, block(10-r)) // improving every round
			if r < 5 {
				h.task(keyf("fix-%d", r), StatusCompleted, nil)
			}
		}
		h.wantOutcome(OutcomeEscalated)
		if h.r.Iteration != 5 {
			t.Fatal(h.r.Iteration)
		}
	})
	t.Run("design issue escalates to CP-5", func(t *testing.T) {
		h := newHarness(t, CP2, ReviewFixInput{Artifact: "auth"})
		h.msg("rev", MsgReviewResult, ReviewResult{Verdict: VerdictBlock, DesignIssue: true})
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP5 {
			t.Fatal("no CP-5 child")
		}
		h.child("escalation", OutcomeSuccess)
		h.wantState(p2Review)
	})
}

func TestCP3FanOut(t *testing.T) {
	t.Parallel()
	in := FanOutInput{Requirement: "review", Workers: []FanOutWorker{{Angle: "security", Member: "a"}, {Angle: "perf", Member: "b"}, {Angle: "arch", Member: "c"}}}
	res := func(claim string, descs ...string) AnalysisResult {
		r := AnalysisResult{Claims: map[string]string{"cache": claim}}
		for _, d := range descs {
			r.Findings = append(r.Findings, AnalysisFinding{Finding: Finding{Description: d}})
		}
		return r
	}
	t.Run("all report, union, no conflict", func(t *testing.T) {
		h := newHarness(t, CP3, in)
		h.task("analyze-1", StatusCompleted, res("yes", "x"))
		h.msg("b", MsgAnalysisResult, res("yes", "y"))
		h.msg("c", "arch_result", res("yes", "x"))
		o := h.wantOutcome(OutcomeSuccess)
		if !strings.Contains(o.Summary, "2 finding(s)") {
			t.Fatal(o.Summary)
		}
	})
	t.Run("worker error: N-1", func(t *testing.T) {
		h := newHarness(t, CP3, in)
		h.task("analyze-2", StatusFailed, nil)
		h.task("analyze-1", StatusCompleted, res("yes"))
		h.task("analyze-3", StatusCompleted, res("yes"))
		h.wantOutcome(OutcomeDegraded)
	})
	t.Run("timeout aggregates what arrived and marks missing angles", func(t *testing.T) {
		h := newHarness(t, CP3, in)
		h.task("analyze-1", StatusCompleted, res("yes", "x"))
		if at := h.r.Timers["deadline"]; !at.Equal(t0.Add(5 * time.Minute)) {
			t.Fatalf("deadline %v", at)
		}
		h.fire("deadline")
		o := h.wantOutcome(OutcomeDegraded)
		if !strings.Contains(string(o.Data), `"missing":["perf","arch"]`) {
			t.Fatal(string(o.Data))
		}
	})
	t.Run("conflicts go to CP-4", func(t *testing.T) {
		h := newHarness(t, CP3, in)
		h.task("analyze-1", StatusCompleted, res("yes"))
		h.task("analyze-2", StatusCompleted, res("no"))
		h.task("analyze-3", StatusCompleted, res("yes"))
		h.wantState(p3Consensus)
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP4 {
			t.Fatal("no CP-4")
		}
		h.child("consensus", OutcomeSuccess)
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("aggregation strategies", func(t *testing.T) {
		w := []FanOutWorker{{Angle: "a", Weight: 3}, {Angle: "b", Weight: 1}, {Angle: "c", Weight: 1}}
		rs := map[int]*AnalysisResult{0: ptr(res("y", "x", "only-a")), 1: ptr(res("y", "x", "bc")), 2: ptr(res("y", "bc"))}
		cfg := DefaultConfig().FanOut
		count := func(s string) int { return len(AggregateResults(w, rs, nil, s, cfg).Findings) }
		if count(AggregateUnion) != 3 || count(AggregateIntersection) != 2 {
			t.Fatalf("union %d intersection %d", count(AggregateUnion), count(AggregateIntersection))
		}
		// weighted: x 4/5, only-a 3/5, bc 2/5 < 0.5
		if count(AggregateWeighted) != 2 {
			t.Fatalf("weighted %d", count(AggregateWeighted))
		}
	})
}

func TestCP4Consensus(t *testing.T) {
	t.Parallel()
	in := ConsensusInput{Proposal: Proposal{ID: "P1", Title: "strategy"}, Voters: []string{"a", "b", "c"}}
	vote := func(v VoteChoice) map[string]any {
		return map[string]any{"proposalId": "P1", "vote": v, "rationale": "r", "conditions": []string{"compat layer"}}
	}
	t.Run("2 of 3 is 0.667 < 0.67: not passed; 3 of 3 passes with conditions", func(t *testing.T) {
		h := newHarness(t, CP4, in)
		if len(h.sent(MsgProposal)) != 3 {
			t.Fatal("proposal not sent to each voter")
		}
		h.msg("a", MsgVote, vote(VoteApprove))
		h.msg("b", MsgVote, vote(VoteApprove))
		h.msg("c", MsgVote, vote(VoteReject))
		h.wantState(p4Voting) // round 2 (no proposer: re-vote)
		if h.r.Iteration != 2 {
			t.Fatal(h.r.Iteration)
		}
		for _, v := range []string{"a", "b", "c"} {
			h.msg(v, MsgVote, vote(VoteApprove))
		}
		h.wantOutcome(OutcomeSuccess)
		var rec *TeamDecision
		for _, c := range h.all {
			if c.Kind == CmdRecordDecision {
				rec = c.Decision
			}
		}
		if rec == nil || len(rec.Constraints) != 1 || rec.Constraints[0] != "compat layer" {
			t.Fatalf("decision %+v", rec)
		}
	})
	t.Run("BLOCK-level reject vetoes", func(t *testing.T) {
		tl := TallyVotes(map[string]Vote{"a": {Vote: VoteApprove}, "b": {Vote: VoteApprove}, "c": {Vote: VoteApprove}, "d": {Vote: VoteReject, Block: true}},
			[]string{"a", "b", "c", "d"}, 0.67)
		if tl.Passed || tl.ApprovalRatio != 0.75 {
			t.Fatalf("%+v", tl)
		}
	})
	t.Run("timeout: fewer than N/2 votes extends once, then counts; 2 rounds → user", func(t *testing.T) {
		h := newHarness(t, CP4, in)
		h.msg("a", MsgVote, vote(VoteApprove))
		h.fire("deadline")
		h.wantState(p4Voting)
		if at := h.r.Timers["deadline"]; !at.Equal(t0.Add(10 * time.Minute)) {
			t.Fatalf("extended deadline %v", at)
		}
		h.fire("deadline") // 1 approval of 1 vote: ratio 1, passes
		h.wantOutcome(OutcomeSuccess)

		h = newHarness(t, CP4, in)
		h.msg("a", MsgVote, vote(VoteReject))
		h.msg("b", MsgVote, vote(VoteApprove))
		h.fire("deadline") // 2 of 3 voted (≥ N/2): no extension, 0.5 fails
		h.wantState(p4Voting)
		h.msg("a", MsgVote, vote(VoteReject))
		h.msg("b", MsgVote, vote(VoteReject))
		h.msg("c", MsgVote, vote(VoteApprove))
		h.wantState(p4AwaitUser)
		h.reply("decide", "REJECT", "too risky")
		h.wantOutcome(OutcomeEscalated)
	})
	t.Run("all ABSTAIN: coordinator decides", func(t *testing.T) {
		h := newHarness(t, CP4, in)
		for _, v := range []string{"a", "b", "c"} {
			h.msg(v, MsgVote, vote(VoteAbstain))
		}
		h.wantOutcome(OutcomeDegraded)
		if c := h.has(CmdRecordDecision); c == nil || c.Decision.DecidedBy != "coordinator" {
			t.Fatal("no coordinator decision")
		}
	})
}

func TestCP5Escalation(t *testing.T) {
	t.Parallel()
	fail := EscalationReport{Diagnosis: "no luck", Tried: []string{"retry"}}
	t.Run("L0 twice, L1 solves: learn a pattern for L0", func(t *testing.T) {
		h := newHarness(t, CP5, EscalationInput{Issue: "type mismatch"})
		h.task("l0-1", StatusCompleted, fail)
		h.wantState("L0")
		h.task("l0-2", StatusCompleted, fail)
		h.wantState("L1")
		esc := h.sent(MsgEscalate)
		if len(esc) != 1 || !strings.Contains(string(esc[0].Data), `"attempts_at_current":2`) {
			t.Fatalf("escalate %+v", esc)
		}
		h.task("l1-1", StatusCompleted, EscalationReport{Resolved: true, Solution: "break the cycle"})
		h.wantOutcome(OutcomeSuccess)
		if h.has(CmdRecordPattern) == nil {
			t.Fatal("no pattern recorded for L0")
		}
	})
	t.Run("up to L3; silent user → WORKAROUND", func(t *testing.T) {
		h := newHarness(t, CP5, EscalationInput{Issue: "x", Options: []string{"pin the old version", "rewrite"}})
		for _, k := range []string{"l0-1", "l0-2", "l1-1", "l2-1"} {
			h.task(k, StatusFailed, nil)
		}
		h.wantState("L3")
		if h.r.Iteration != 5 || h.r.MaxIterations != 5 {
			t.Fatal(h.r.Iteration, h.r.MaxIterations)
		}
		h.fire("user")
		o := h.wantOutcome(OutcomeDegraded)
		if !strings.Contains(o.Summary, "WORKAROUND: pin the old version") {
			t.Fatal(o.Summary)
		}
		if !strings.Contains(string(o.Data), `"level":2`) {
			t.Fatal("diagnosis chain lacks L2:", string(o.Data))
		}
	})
	t.Run("architectural root cause → CP-1", func(t *testing.T) {
		h := newHarness(t, CP5, EscalationInput{Issue: "x", StartLevel: 1})
		h.task("l1-1", StatusCompleted, EscalationReport{Architectural: true, Diagnosis: "module boundaries"})
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP1 {
			t.Fatal("no CP-1")
		}
		h.child("replan", OutcomeSuccess)
		h.wantOutcome(OutcomeSuccess)
	})
}

func TestCP6Incremental(t *testing.T) {
	t.Parallel()
	plan := []PlanItem{{ID: "a"}, {ID: "b", BlockedBy: []string{"a"}}, {ID: "c", BlockedBy: []string{"b"}}}
	pass := IncrementReady{Status: "PASS"}
	fail := IncrementReady{Status: "FAIL", FailedGates: []string{"syntax_clean"}}
	t.Run("success", func(t *testing.T) {
		h := newHarness(t, CP6, IncrementalInput{Plan: plan})
		for i := 1; i <= 3; i++ {
			h.task(keyf("impl-%d-1", i), StatusCompleted, nil)
			p := pass
			p.Increment = keyf("INCREMENT-%d", i)
			h.task(keyf("validate-%d-1", i), StatusCompleted, p)
		}
		h.wantState(p6Final)
		h.task("final", StatusCompleted, TestResult{PassRate: ptr(1.0)})
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("3 retries still failing roll back and block; more than half blocked stops", func(t *testing.T) {
		h := newHarness(t, CP6, IncrementalInput{Plan: plan})
		for a := 1; a <= 4; a++ { // the first attempt and 3 retries
			h.task(keyf("impl-1-%d", a), StatusCompleted, nil)
			f := fail
			f.Increment = "INCREMENT-1"
			h.task(keyf("validate-1-%d", a), StatusCompleted, f)
		}
		if h.created("rollback-1").Subject != "ROLLBACK-INCREMENT-1" || h.created("impl-2-1").BlockedBy[0] != "rollback-1" {
			t.Fatal("rollback before the next increment")
		}
		h.wantState(p6Impl) // 1 of 3 blocked: continue
		for a := 1; a <= 4; a++ {
			h.task(keyf("impl-2-%d", a), StatusCompleted, nil)
			f := fail
			f.Increment = "INCREMENT-2"
			h.task(keyf("validate-2-%d", a), StatusCompleted, f)
		}
		h.wantOutcome(OutcomeEscalated) // 2 of 3 > half
	})
	t.Run("final validation fails → bisect", func(t *testing.T) {
		h := newHarness(t, CP6, IncrementalInput{Plan: plan[:2]})
		for i := 1; i <= 2; i++ {
			h.task(keyf("impl-%d-1", i), StatusCompleted, nil)
			h.task(keyf("validate-%d-1", i), StatusCompleted, nil)
		}
		h.task("final", StatusCompleted, TestResult{Passed: 9, Total: 10})
		h.wantState(p6Bisect)
		h.task("bisect-2", StatusCompleted, TestResult{Passed: 9, Total: 10})
		h.task("bisect-1", StatusCompleted, TestResult{PassRate: ptr(1.0)})
		o := h.wantOutcome(OutcomeDegraded)
		if !strings.Contains(o.Summary, "INCREMENT-1") {
			t.Fatal(o.Summary)
		}
	})
	t.Run("timeout = tasks × per-task timeout; failing increment tests → CP-2", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Incremental.TaskTimeout = time.Minute
		h := newHarnessCfg(t, CP6, cfg, IncrementalInput{Plan: []PlanItem{{ID: "a"}, {ID: "b"}}})
		if at := h.r.Timers["increment"]; !at.Equal(t0.Add(2 * time.Minute)) {
			t.Fatalf("increment timer %v", at)
		}
		h.fire("increment")
		h.wantState(p6Impl)
		h.task("impl-1-2", StatusCompleted, nil)
		h.task("validate-1-2", StatusCompleted, IncrementReady{Increment: "INCREMENT-1", Status: "FAIL", FailedGates: []string{"increment_tests_pass"}})
		h.wantState(p6Review)
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP2 {
			t.Fatal("no CP-2")
		}
	})
}

func TestCP7Swarm(t *testing.T) {
	t.Parallel()
	in := SwarmInput{Issue: "build broken", Participants: []string{"a", "b", "c"}, Pause: []string{"T1", "T2"}}
	diag := func(conf float64, fix string) SwarmDiagnosis {
		return SwarmDiagnosis{Perspective: "p", RootCause: "rc", Confidence: conf, FixSuggestion: fix}
	}
	t.Run("best diagnosis fixes; paused tasks resume", func(t *testing.T) {
		h := newHarness(t, CP7, in)
		if len(h.sent(MsgSwarmJoin)) != 1 || h.has(CmdPauseTask) == nil {
			t.Fatal("pause + swarm_join")
		}
		h.msg("a", MsgSwarmDiagnosis, diag(0.8, "guard"))
		h.msg("b", MsgSwarmDiagnosis, diag(0.8, "edit pkg/x.go:12 to close the file"))
		h.msg("c", MsgSwarmDiagnosis, diag(0.6, "restart"))
		h.wantState(p7Fix)
		if s := h.created("fix-1"); s.Owner != "b" || !strings.HasPrefix(s.Subject, "SWARM-FIX") {
			t.Fatalf("equal confidence: the more specific fix wins, got %+v", s)
		}
		h.task("fix-1", StatusCompleted, nil)
		h.task("verify-1", StatusCompleted, TestResult{PassRate: ptr(1.0)})
		h.wantOutcome(OutcomeSuccess)
		n := 0
		for _, c := range h.cmds {
			if c.Kind == CmdResumeTask {
				n++
			}
		}
		if n != 2 {
			t.Fatal("paused tasks not resumed")
		}
	})
	t.Run("timeout skips silent agents; regression → next best; 2 rounds → CP-5 L3", func(t *testing.T) {
		h := newHarness(t, CP7, in)
		h.msg("a", MsgSwarmDiagnosis, diag(0.9, "one"))
		h.msg("b", MsgSwarmDiagnosis, diag(0.5, "two"))
		if at := h.r.Timers["diagnose"]; !at.Equal(t0.Add(10 * time.Minute)) {
			t.Fatal(at)
		}
		h.fire("diagnose")
		h.task("fix-1", StatusCompleted, nil)
		h.task("verify-1", StatusCompleted, TestResult{PassRate: ptr(0.5), Regression: true})
		h.wantState(p7Fix)
		if h.created("fix-2").BlockedBy[0] != "rollback-1" {
			t.Fatal("next best must wait for the rollback")
		}
		h.task("fix-2", StatusCompleted, nil)
		h.task("verify-2", StatusCompleted, TestResult{PassRate: ptr(0.5)})
		h.wantState(p7Diagnose)
		if h.r.Iteration != 2 {
			t.Fatal(h.r.Iteration)
		}
		h.msg("a", MsgSwarmDiagnosis, diag(0.9, "three"))
		h.msg("b", MsgSwarmDiagnosis, diag(0.9, "four"))
		h.wantState(p7Fix) // c was skipped: a and b suffice
		h.task("fix-3", StatusCompleted, nil)
		h.task("verify-3", StatusFailed, nil) // not solved in round 2 (no regression): no third round
		h.wantState(p7Escalate)
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP5 || !strings.Contains(string(c.Child.Input), `"start_level":3`) {
			t.Fatal("no CP-5 L3")
		}
	})
	t.Run("not re-entrant", func(t *testing.T) {
		err := CheckSwarmExclusive(CP7, "alpha", []ActiveRun{{ID: "r0", Pattern: CP7, Team: "alpha"}})
		if !errors.Is(err, ErrSwarmActive) {
			t.Fatal(err)
		}
		if CheckSwarmExclusive(CP7, "beta", []ActiveRun{{ID: "r0", Pattern: CP7, Team: "alpha"}}) != nil {
			t.Fatal("other team blocked")
		}
	})
}

func TestCP8Consult(t *testing.T) {
	t.Parallel()
	roster := []Member{{Name: "dev", Role: RoleExecutor, Worker: Worker{Kind: WorkerAgent}},
		{Name: "sec", Role: RoleSpecialist, Capabilities: []string{"security"}, Worker: Worker{Kind: WorkerAgent}},
		{Name: "sec2", Role: RoleConsultant, Capabilities: []string{"security"}, Worker: Worker{Kind: WorkerAgent}},
		{Name: "cli", Role: RoleWorker, Worker: Worker{Kind: WorkerCommand, Command: "gemini"}}}
	in := ConsultInput{Requester: "dev", Request: ConsultRequest{Topic: "security", Question: "hash?", Urgency: UrgencyBlocking}, Members: roster, Voters: []string{"dev", "sec"}}
	t.Run("confident advice applied", func(t *testing.T) {
		h := newHarness(t, CP8, in)
		if at := h.r.Timers["advice"]; !at.Equal(t0.Add(2 * time.Minute)) {
			t.Fatal(at)
		}
		h.msg("sec", MsgConsultResponse, ConsultResponse{Recommendation: "bcrypt", Confidence: 0.8})
		h.wantState(p8Apply)
		h.msg("dev", MsgConsultOutcome, ConsultOutcome{Applied: true})
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("low confidence: second opinion, then unverified", func(t *testing.T) {
		h := newHarness(t, CP8, in)
		h.msg("sec", MsgConsultResponse, ConsultResponse{Recommendation: "sha256?", Confidence: 0.79})
		if m := h.sent(MsgConsultRequest); len(m) != 1 || m[0].To != "sec2" {
			t.Fatalf("second opinion %+v", m)
		}
		h.msg("sec2", MsgConsultResponse, ConsultResponse{Recommendation: "argon", Confidence: 0.7})
		h.wantOutcome(OutcomeDegraded)
	})
	t.Run("timeout → requester decides, unverified; no specialist → CLI tool; conflict → CP-4", func(t *testing.T) {
		h := newHarness(t, CP8, in)
		h.fire("advice")
		if o := h.wantOutcome(OutcomeDegraded); !strings.Contains(o.Summary, "unverified") {
			t.Fatal(o.Summary)
		}
		in2 := in
		in2.Request.Topic = "database"
		in2.Request.Urgency = UrgencyLow
		h = newHarness(t, CP8, in2)
		if s := h.created("consult-1"); s.Owner != "cli" {
			t.Fatalf("CLI fallback %+v", s)
		}
		if len(h.r.Timers) != 0 {
			t.Fatal("low urgency has no timeout")
		}
		h.task("consult-1", StatusCompleted, ConsultResponse{Recommendation: "index", Confidence: 0.9})
		h.msg("dev", MsgConsultOutcome, ConsultOutcome{ConflictsWithDesign: true})
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP4 {
			t.Fatal("no CP-4")
		}
	})
}

func TestCP9DualTrack(t *testing.T) {
	t.Parallel()
	in := DualTrackInput{Requirement: "api", SyncPoints: []SyncPoint{{ID: "SYNC-1", TrackADeliverable: "schema", TrackBDeliverable: "stubs"}, {ID: "SYNC-2", TrackADeliverable: "spec", TrackBDeliverable: "impl"}}}
	t.Run("aligned twice", func(t *testing.T) {
		h := newHarness(t, CP9, in)
		h.task("a-SYNC-1-1", StatusCompleted, nil)
		if at := h.r.Timers["sync"]; !at.Equal(t0.Add(5 * time.Minute)) {
			t.Fatal(at)
		}
		// the fast track pre-builds SYNC-2's deliverable; the slow one is told to speed up
		if s := h.created("pa-SYNC-2-3"); s.Role != RoleTrackA || !strings.Contains(s.Subject, "pre-build") {
			t.Fatalf("pre-build %+v", s)
		}
		if m := h.sent(MsgProgress); len(m) != 1 || m[0].To != RoleAddress(RoleTrackB) {
			t.Fatalf("speed-up message %+v", m)
		}
		h.task("b-SYNC-1-2", StatusCompleted, nil)
		h.task("align-SYNC-1-1", StatusCompleted, SyncCheckpoint{SyncID: "SYNC-1", Status: Aligned})
		h.created("b-SYNC-2-4") // track A continues on its pre-built task
		h.task("pa-SYNC-2-3", StatusCompleted, nil)
		h.task("b-SYNC-2-4", StatusCompleted, nil)
		h.msg("lead", MsgSyncCheckpoint, map[string]any{"sync_id": "SYNC-2", "status": "ALIGNED", "trackA_state": "ok"})
		h.wantOutcome(OutcomeSuccess)
	})
	t.Run("2 misalignments degrade to CP-1", func(t *testing.T) {
		h := newHarness(t, CP9, in)
		h.task("a-SYNC-1-1", StatusCompleted, nil)
		h.task("b-SYNC-1-2", StatusCompleted, nil)
		h.task("align-SYNC-1-1", StatusCompleted, SyncCheckpoint{SyncID: "SYNC-1", Status: Misaligned, Adjust: "B"})
		h.wantState(p9Adjust)
		h.task("adjust-b-SYNC-1-1", StatusCompleted, nil)
		h.task("align-SYNC-1-2", StatusCompleted, SyncCheckpoint{SyncID: "SYNC-1", Status: Misaligned})
		h.wantState(p9Fallback)
		h.child("fallback", OutcomeSuccess)
		h.wantOutcome(OutcomeDegraded)
	})
	t.Run("sync wait timeout: other track paused, CP-7", func(t *testing.T) {
		h := newHarness(t, CP9, in)
		h.task("a-SYNC-1-1", StatusCompleted, nil)
		h.fire("sync")
		h.wantState(p9Swarm)
		if c := h.has(CmdStartRun); c == nil || c.Child.Pattern != CP7 {
			t.Fatal("no CP-7")
		}
		h.child("swarm-SYNC-1", OutcomeSuccess)
		h.wantState(p9Tracks)
		h.created("b-SYNC-1-4")
	})
}

func TestCP10PostMortem(t *testing.T) {
	t.Parallel()
	in := PostMortemInput{Team: "alpha", Participants: []string{"p", "e"}, Gone: []string{"t"},
		History:   map[string][]HistoryItem{"t": {{Type: MsgError, Summary: "flaky test"}}},
		Execution: &ExecutionData{TotalTasks: 4, Completed: 4, Escalations: 1}}
	t.Run("report with patterns recorded", func(t *testing.T) {
		h := newHarness(t, CP10, in)
		h.msg("p", MsgRetroFinding, RetroFinding{WentWell: []string{"Plan"}, Patterns: []string{"test first"}})
		h.msg("e", MsgRetroFinding, RetroFinding{WentWell: []string{"plan "}, Suggestions: []string{"pin deps"}})
		o := h.wantOutcome(OutcomeSuccess)
		for _, want := range []string{`"what_went_well":["plan"]`, `"what_was_difficult":["flaky test"]`, `"t: bus history"`, `"reusable_patterns":["test first"]`} {
			if !strings.Contains(string(o.Data), want) {
				t.Fatalf("report lacks %s: %s", want, o.Data)
			}
		}
		var pats, heur int
		for _, c := range h.cmds {
			switch c.Kind {
			case CmdRecordPattern:
				pats++
			case CmdRecordHeuristic:
				heur++
			}
		}
		if pats != 1 || heur != 1 {
			t.Fatal(pats, heur)
		}
	})
	t.Run("timeout and nothing notable: minimal report, no memory write", func(t *testing.T) {
		quiet := PostMortemInput{Team: "alpha", Participants: []string{"p"}, Execution: &ExecutionData{TotalTasks: 1, Completed: 1}}
		h := newHarness(t, CP10, quiet)
		if at := h.r.Timers["retro"]; !at.Equal(t0.Add(3 * time.Minute)) {
			t.Fatal(at)
		}
		h.fire("retro")
		o := h.wantOutcome(OutcomeSuccess)
		if !strings.Contains(string(o.Data), `"minimal":true`) || h.has(CmdRecordPattern) != nil {
			t.Fatal(string(o.Data))
		}
	})
	t.Run("only after every task ended", func(t *testing.T) {
		if err := CheckPostMortem([]Task{tk("a", StatusCompleted), tk("b", StatusBlocked)}); !errors.Is(err, ErrComposition) {
			t.Fatal(err)
		}
		if err := CheckStart(CP10, "", "alpha", nil, []Task{tk("a", StatusCompleted), tk("b", StatusCancelled)}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRunEventsAreIdempotentAndTimersStale(t *testing.T) {
	t.Parallel()
	h := newHarness(t, CP4, ConsensusInput{Proposal: Proposal{ID: "P1", Title: "x"}, Voters: []string{"a", "b"}})
	before := h.r
	m := &Message{Team: "alpha", Seq: 7, From: "a", Type: MsgVote, Data: mustJSON(t, Vote{ProposalID: "P1", Vote: VoteApprove, Rationale: "r"})}
	h.step(Event{Kind: EventMessage, Message: m})
	r1 := h.r
	r2, cmds, err := Step(r1, Event{Kind: EventMessage, Message: m}, h.now)
	if err != nil || len(cmds) != 0 || string(mustJSON(t, r2)) != string(mustJSON(t, r1)) {
		t.Fatal("duplicate message changed the run")
	}
	if _, _, err := Step(before, Event{Kind: EventTimer, Timer: "deadline"}, t0); !errors.Is(err, ErrTimerNotDue) {
		t.Fatalf("early timer: %v", err)
	}
	old := before.Timers["deadline"].Add(-time.Second)
	if r3, cmds, err := Step(before, Event{Kind: EventTimer, Timer: "deadline", TimerAt: old}, t0.Add(time.Hour)); err != nil || len(cmds) != 0 || r3.State != before.State {
		t.Fatal("stale timer acted")
	}
	if _, _, err := Step(before, Event{Kind: EventTask, TaskKey: "nope", Task: &TaskChange{Status: StatusCompleted}}, t0); !errors.Is(err, ErrUnknownTask) {
		t.Fatal(err)
	}
	if _, _, err := Start(RunSpec{ID: "x", Pattern: "CP-11", Team: "alpha", Config: DefaultConfig()}, t0); !errors.Is(err, ErrUnknownPattern) {
		t.Fatal(err)
	}
	if _, _, err := Start(RunSpec{ID: "x", Pattern: CP4, Team: "alpha", Config: DefaultConfig(), Input: []byte(`{"proposal":{"id":"P"},"voters":["a"],"x":1}`)}, t0); !errors.Is(err, ErrInvalid) {
		t.Fatal(err)
	}
	cancelled, cmds, err := Cancel(h.r, "user stop", h.now)
	if err != nil || cancelled.Outcome.Status != OutcomeFailed || cmds[len(cmds)-1].Kind != CmdFinishRun {
		t.Fatal("cancel", err)
	}
}
