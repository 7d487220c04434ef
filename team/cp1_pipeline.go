package team

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PipelineInput starts a CP-1 Linear Pipeline run.
type PipelineInput struct {
	Requirement string `json:"requirement"`
	// Roles of the stages (defaults planner, executor, tester; the seed has
	// the tester review too, so Reviewer defaults to tester).
	Planner  Role `json:"planner,omitempty"`
	Executor Role `json:"executor,omitempty"`
	Tester   Role `json:"tester,omitempty"`
	Reviewer Role `json:"reviewer,omitempty"`
	// ApproveBy is the address asked to approve each plan (plan_approved or
	// plan_revision); empty: the coordinator approves a plan when it arrives.
	ApproveBy string `json:"approve_by,omitempty"`
	// NoReview skips the REVIEW stage.
	NoReview bool `json:"no_review,omitempty"`
	// ReviewCycle runs the REVIEW stage as a nested CP-2 Review-Fix Cycle
	// (the seed's "standard development": CP-1 + CP-2): once the
	// implementation is complete a CP-2 child reviews and fixes it, and
	// TEST runs on the reviewed code. A cycle that does not converge
	// escalates the pipeline.
	ReviewCycle bool `json:"review_cycle,omitempty"`
	// TestGate is the gate command of the TEST tasks.
	TestGate string `json:"test_gate,omitempty"`
}

// CP-1 states.
const (
	p1Plan       = "PLAN"
	p1PlanReview = "PLAN_REVIEW"
	p1Impl       = "IMPL"
	p1Verify     = "VERIFY"
	p1Fix        = "FIX"
	p1ReviewFix  = "REVIEW_FIX" // the nested CP-2 (review_cycle)
)

type pipeline struct {
	In            PipelineInput `json:"in"`
	PlanN         int           `json:"plan_n"`
	PlanKey       string        `json:"plan_key"`
	Rejections    int           `json:"rejections"`
	CoordPlanning bool          `json:"coord_planning"`
	Plan          *PlanReady    `json:"plan,omitempty"`
	ImplKey       string        `json:"impl_key,omitempty"`
	TestKey       string        `json:"test_key,omitempty"`
	ReviewKey     string        `json:"review_key,omitempty"`
	Test          *TestResult   `json:"test,omitempty"`
	TestIn        bool          `json:"test_in"`
	Review        *ReviewResult `json:"review,omitempty"`
	ReviewIn      bool          `json:"review_in"`
	History       []string      `json:"history,omitempty"`
}

func (p *pipeline) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-1"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if strings.TrimSpace(p.In.Requirement) == "" {
		return invalid(op, "requirement", "required")
	}
	if p.In.ReviewCycle && p.In.NoReview {
		return invalid(op, "review_cycle", "contradicts no_review")
	}
	if p.In.ApproveBy != "" {
		if err := ValidateAddress(p.In.ApproveBy); err != nil {
			return err
		}
	}
	p.In.Planner = orRole(p.In.Planner, RolePlanner)
	p.In.Executor = orRole(p.In.Executor, RoleExecutor)
	p.In.Tester = orRole(p.In.Tester, RoleTester)
	if p.In.ReviewCycle && p.In.Reviewer == "" {
		p.In.Reviewer = RoleReviewer // CP-2's reviewer
	}
	p.In.Reviewer = orRole(p.In.Reviewer, RoleTester)
	c.r.MaxIterations = c.r.Config.Pipeline.MaxIterations
	p.newPlan(c, p.In.Planner, "", "plan the requirement")
	return nil
}

func (p *pipeline) newPlan(c *ctx, role Role, feedback, reason string) {
	p.PlanN++
	p.PlanKey = fmt.Sprintf("plan-%d", p.PlanN)
	subject := "PLAN-" + ord(p.PlanN)
	if p.CoordPlanning {
		subject = "PLAN-coord"
	}
	desc := "Plan: " + p.In.Requirement
	if feedback != "" {
		desc += "\n\nRevise the previous plan. Feedback: " + feedback
	}
	c.task(p.PlanKey, TaskSpec{Subject: subject, Description: desc, Role: role, Expect: MsgPlanReady})
	c.to(p1Plan, reason)
}

func (p *pipeline) handle(c *ctx, s signal) error {
	cfg := c.r.Config.Pipeline
	switch c.r.State {
	case p1Plan:
		switch {
		case s.typ == MsgPlanReady && (s.key == p.PlanKey || s.key == ""),
			s.kind == sigTask && s.key == p.PlanKey && s.status == StatusCompleted:
			if pr, ok := s.payload.(*PlanReady); ok {
				p.Plan = pr
			}
			if p.CoordPlanning || p.In.ApproveBy == "" {
				p.approve(c, "plan arrived; the coordinator approves it")
				return nil
			}
			c.send(p.In.ApproveBy, MsgPlanReady, "plan ready for approval", p.Plan)
			c.to(p1PlanReview, "plan arrived; asked "+p.In.ApproveBy+" to approve")
		case s.kind == sigTask && s.key == p.PlanKey && (s.status == StatusFailed || s.status == StatusCancelled):
			p.reject(c, cfg, "plan task "+string(s.status)+" "+s.errText)
		}
	case p1PlanReview:
		switch s.typ {
		case MsgPlanApproved:
			p.approve(c, "plan approved by "+s.from)
		case MsgPlanRevision:
			p.reject(c, cfg, s.payload.(*PlanRevision).Feedback)
		}
	case p1Impl, p1Fix:
		if p.collect(c, s, false) {
			return nil
		}
		switch {
		case (s.key == p.ImplKey || s.key == "") && s.typ == MsgImplComplete,
			s.kind == sigTask && s.key == p.ImplKey && s.status == StatusCompleted:
			if p.In.ReviewCycle && p.TestKey == "" {
				c.r.Tasks[p.ImplKey] = withStatus(c.r.Tasks[p.ImplKey], StatusCompleted)
				in := ReviewFixInput{Artifact: "IMPL-001: " + p.In.Requirement, Producer: p.In.Executor, Reviewer: orRole(p.In.Reviewer, RoleReviewer)}
				if err := c.startChild("review", CP2, in, "review-fix in validation"); err != nil {
					return err
				}
				c.to(p1ReviewFix, "implementation complete: CP-2 reviews and fixes it before TEST")
				return nil
			}
			c.to(p1Verify, "implementation complete; TEST and REVIEW unlocked")
			p.evaluate(c, cfg)
		case s.kind == sigTask && s.key == p.ImplKey && (s.status == StatusFailed || s.status == StatusCancelled):
			p.History = append(p.History, fmt.Sprintf("round %d: implementation %s %s", c.r.Iteration, s.status, s.errText))
			p.fixOrEscalate(c, cfg, "implementation "+string(s.status)+": "+s.errText)
		}
	case p1Verify:
		if p.collect(c, s, true) {
			p.evaluate(c, cfg)
		}
	case p1ReviewFix:
		if s.kind != sigChild {
			return nil
		}
		if s.child.Status != OutcomeSuccess && s.child.Status != OutcomeDegraded {
			p.History = append(p.History, "review-fix cycle "+string(s.child.Status)+": "+s.child.Summary)
			c.finish(OutcomeEscalated, "the nested review-fix cycle did not converge ("+string(s.child.Status)+": "+s.child.Summary+"); the user must decide", p.report())
			return nil
		}
		p.TestKey = "test-1"
		c.task(p.TestKey, TaskSpec{Subject: "TEST-001", Description: "Test the reviewed implementation", Role: p.In.Tester, Gate: p.In.TestGate, Expect: MsgTestResult})
		c.to(p1Verify, "review-fix cycle "+string(s.child.Status)+": TEST unlocked")
	}
	return nil
}

// collect records a TEST or REVIEW report of the current round; a message
// without a task link counts only in VERIFY (it could be a stale round's).
func (p *pipeline) collect(c *ctx, s signal, verifying bool) bool {
	anyKey := verifying && s.key == ""
	switch {
	case s.key == p.TestKey || (anyKey && s.typ == MsgTestResult):
		if p.TestIn {
			return false
		}
		switch {
		case s.typ == MsgTestResult:
			p.Test = s.payload.(*TestResult)
		case s.status == StatusCompleted:
			one := 1.0
			p.Test = &TestResult{PassRate: &one, Summary: "TEST task completed"}
		case s.status == StatusFailed || s.status == StatusCancelled:
			zero := 0.0
			p.Test = &TestResult{PassRate: &zero, Summary: "TEST task " + string(s.status) + " " + s.errText}
		default:
			return false
		}
		p.TestIn = true
		c.note(fmt.Sprintf("test result: pass rate %.3f", p.Test.Rate()))
		return true
	case p.ReviewKey != "" && (s.key == p.ReviewKey || (anyKey && s.typ == MsgReviewResult)):
		if p.ReviewIn {
			return false
		}
		switch {
		case s.typ == MsgReviewResult:
			p.Review = s.payload.(*ReviewResult)
		case s.status == StatusCompleted:
			p.Review = &ReviewResult{Verdict: VerdictApprove, Summary: "REVIEW task completed"}
		case s.status == StatusFailed || s.status == StatusCancelled:
			p.Review = &ReviewResult{Verdict: VerdictBlock, Summary: "REVIEW task " + string(s.status) + " " + s.errText}
		default:
			return false
		}
		p.ReviewIn = true
		c.note("review verdict " + string(p.Review.Verdict))
		return true
	}
	return false
}

func (p *pipeline) evaluate(c *ctx, cfg PipelineConfig) {
	if c.r.State != p1Verify || !p.TestIn || (p.ReviewKey != "" && !p.ReviewIn) {
		return
	}
	rate := p.Test.Rate()
	testOK := rate >= cfg.TestPassRate
	reviewOK := p.ReviewKey == "" || p.Review.Passes()
	if testOK && reviewOK {
		c.finish(OutcomeSuccess, fmt.Sprintf("all stages completed after %d verification round(s); pass rate %.3f", c.r.Iteration, rate), p.report())
		return
	}
	var why []string
	if !testOK {
		why = append(why, fmt.Sprintf("pass rate %.3f < %.3f", rate, cfg.TestPassRate))
	}
	if !reviewOK {
		why = append(why, fmt.Sprintf("review %s with %d critical finding(s)", p.Review.Verdict, len(p.Review.Findings.Critical)))
	}
	p.History = append(p.History, fmt.Sprintf("round %d: %s", c.r.Iteration, strings.Join(why, "; ")))
	p.fixOrEscalate(c, cfg, strings.Join(why, "; "))
}

// fixOrEscalate starts the next fix round, or reports to the user once the
// verification rounds are used up (seed: tests < 95 % after 5 iterations).
func (p *pipeline) fixOrEscalate(c *ctx, cfg PipelineConfig, why string) {
	if c.r.Iteration >= cfg.MaxIterations {
		c.finish(OutcomeEscalated, fmt.Sprintf("not passing after %d verification rounds (%s); the user must decide", c.r.Iteration, why), p.report())
		return
	}
	c.r.Iteration++
	c.r.Retries++
	// A review that already passed stands; any other is redone after the fix.
	rereview := p.ReviewKey != "" && !(p.ReviewIn && p.Review.Passes())
	c.cancelTask(p.TestKey, "superseded by fix round")
	if rereview {
		c.cancelTask(p.ReviewKey, "superseded by fix round")
	}
	n := c.r.Iteration
	fixKey := fmt.Sprintf("fix-%d", n)
	desc := "Fix: " + why
	if p.Review != nil && p.Review.Findings.Total() > 0 {
		b, _ := json.Marshal(p.Review.Findings)
		desc += "\nFindings: " + string(b)
	}
	c.task(fixKey, TaskSpec{Subject: fmt.Sprintf("IMPL-fix-%d", n-1), Description: desc, Role: p.In.Executor, Expect: MsgImplComplete})
	p.ImplKey = fixKey
	p.TestKey = fmt.Sprintf("test-%d", n)
	c.task(p.TestKey, TaskSpec{Subject: "TEST-" + ord(n), Description: "Re-test after " + fixKeySubject(n), Role: p.In.Tester, BlockedBy: []string{fixKey}, Gate: p.In.TestGate, Expect: MsgTestResult})
	p.Test, p.TestIn = nil, false
	if rereview {
		p.ReviewKey = fmt.Sprintf("review-%d", n)
		c.task(p.ReviewKey, TaskSpec{Subject: "REVIEW-" + ord(n), Description: "Re-review after " + fixKeySubject(n), Role: p.In.Reviewer, BlockedBy: []string{fixKey}, Expect: MsgReviewResult})
		p.Review, p.ReviewIn = nil, false
	}
	c.to(p1Fix, "fix round "+fmt.Sprint(n-1)+": "+why)
}

func fixKeySubject(n int) string { return fmt.Sprintf("IMPL-fix-%d", n-1) }

func (p *pipeline) reject(c *ctx, cfg PipelineConfig, feedback string) {
	p.Rejections++
	c.r.Retries++
	c.cancelTask(p.PlanKey, "plan rejected")
	if p.CoordPlanning {
		c.finish(OutcomeFailed, "the coordinator's own plan failed: "+feedback, p.report())
		return
	}
	if p.Rejections >= cfg.PlanMaxRejections {
		p.CoordPlanning = true
		p.newPlan(c, RoleCoordinator, feedback, fmt.Sprintf("plan rejected %d times: the coordinator plans itself", p.Rejections))
		return
	}
	p.newPlan(c, p.In.Planner, feedback, fmt.Sprintf("plan rejected (%d): planner revises", p.Rejections))
}

func (p *pipeline) approve(c *ctx, reason string) {
	c.send(RoleAddress(p.In.Executor), MsgPlanApproved, "plan approved: implement", &PlanApproved{Notes: reason})
	c.r.Iteration = 1
	p.ImplKey, p.TestKey = "impl-1", "test-1"
	c.task(p.ImplKey, TaskSpec{Subject: "IMPL-001", Description: "Implement: " + p.In.Requirement, Role: p.In.Executor, BlockedBy: []string{p.PlanKey}, Expect: MsgImplComplete})
	if p.In.ReviewCycle {
		p.TestKey = "" // TEST follows the nested review-fix cycle
		c.to(p1Impl, reason)
		return
	}
	c.task(p.TestKey, TaskSpec{Subject: "TEST-001", Description: "Test the implementation", Role: p.In.Tester, BlockedBy: []string{p.ImplKey}, Gate: p.In.TestGate, Expect: MsgTestResult})
	if !p.In.NoReview {
		p.ReviewKey = "review-1"
		c.task(p.ReviewKey, TaskSpec{Subject: "REVIEW-001", Description: "Review the implementation", Role: p.In.Reviewer, BlockedBy: []string{p.ImplKey}, Expect: MsgReviewResult})
	}
	c.to(p1Impl, reason)
}

func (p *pipeline) report() map[string]any {
	return map[string]any{"plan_rejections": p.Rejections, "coordinator_planned": p.CoordPlanning, "history": p.History}
}

func orRole(r, def Role) Role {
	if r == "" {
		return def
	}
	return r
}
