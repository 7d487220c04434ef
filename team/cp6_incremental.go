package team

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// IncrementalInput starts a CP-6 Incremental Delivery run.
type IncrementalInput struct {
	Plan      []PlanItem `json:"plan"`
	Executor  Role       `json:"executor,omitempty"`  // default executor
	Validator Role       `json:"validator,omitempty"` // default tester
	// Gate is the command of each increment's validation task.
	Gate string `json:"gate,omitempty"`
	// ReviewEach nests a CP-2 Review-Fix Cycle in every increment whose
	// gate passed (the seed's composition rule 2).
	ReviewEach bool `json:"review_each,omitempty"`
}

// Increment is one CP-6 increment: a dependency layer of the plan.
type Increment struct {
	ID       string     `json:"id"`
	Items    []PlanItem `json:"items"`
	Attempts int        `json:"attempts"`
	Status   string     `json:"status"` // PENDING, IN_PROGRESS, PASS, BLOCKED
}

// IncrementProgress is the seed's progress record.
type IncrementProgress struct {
	TotalIncrements int           `json:"total_increments"`
	Completed       int           `json:"completed"`
	Blocked         int           `json:"blocked"`
	Current         int           `json:"current"`
	ProgressPercent int           `json:"progress_percent"`
	GateHistory     []GateHistory `json:"gate_history"`
}

// GateHistory is one increment's line in the progress record.
type GateHistory struct {
	ID       string `json:"id"`
	Attempts int    `json:"attempts"`
	Status   string `json:"status"`
}

// CP-6 states.
const (
	p6Impl     = "IMPL"
	p6Validate = "VALIDATE"
	p6Review   = "REVIEW"
	p6Final    = "FINAL"
	p6Bisect   = "BISECT"
)

type incremental struct {
	In          IncrementalInput `json:"in"`
	Incs        []Increment      `json:"incs"`
	Cur         int              `json:"cur"`
	ImplKey     string           `json:"impl_key,omitempty"`
	ValKey      string           `json:"val_key,omitempty"`
	RollbackKey string           `json:"rollback_key,omitempty"`
	Fixing      bool             `json:"fixing,omitempty"` // REVIEW state entered to fix failing increment tests
	Suggestion  string           `json:"suggestion,omitempty"`
	Failed      []string         `json:"failed,omitempty"`
	Bisect      []int            `json:"bisect,omitempty"` // increments reverted so far, last first
	BisectKey   string           `json:"bisect_key,omitempty"`
	Culprit     string           `json:"culprit,omitempty"`
}

func (p *incremental) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-6"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if len(p.In.Plan) == 0 {
		return invalid(op, "plan", "at least one plan item required")
	}
	layers, err := TopoLayers(p.In.Plan)
	if err != nil {
		return err
	}
	p.In.Executor = orRole(p.In.Executor, RoleExecutor)
	p.In.Validator = orRole(p.In.Validator, RoleTester)
	for i, l := range layers {
		p.Incs = append(p.Incs, Increment{ID: fmt.Sprintf("INCREMENT-%d", i+1), Items: l, Status: "PENDING"})
	}
	c.r.MaxIterations = len(p.Incs) * (c.r.Config.Incremental.MaxRetries + 1)
	p.implement(c, fmt.Sprintf("%d plan item(s) in %d increment(s) (dependency layers)", len(p.In.Plan), len(p.Incs)))
	return nil
}

func (p *incremental) inc() *Increment { return &p.Incs[p.Cur] }

func (p *incremental) implement(c *ctx, reason string) {
	in := p.inc()
	in.Attempts++
	in.Status = "IN_PROGRESS"
	c.r.Iteration++
	titles := make([]string, len(in.Items))
	for i, it := range in.Items {
		titles[i] = cmp.Or(it.Title, it.ID)
	}
	subject := "IMPL-inc-" + in.ID
	desc := "Implement increment: " + strings.Join(titles, ", ")
	if in.Attempts > 1 {
		c.r.Retries++
		subject = fmt.Sprintf("IMPL-fix-inc-%s-%d", in.ID, in.Attempts-1)
		desc = fmt.Sprintf("Fix increment %s (failed gates: %s). %s", in.ID, strings.Join(p.Failed, ", "), p.Suggestion)
	}
	var deps []string
	if p.RollbackKey != "" {
		deps = []string{p.RollbackKey}
	}
	p.ImplKey = fmt.Sprintf("impl-%d-%d", p.Cur+1, in.Attempts)
	c.task(p.ImplKey, TaskSpec{Subject: subject, Description: desc, Role: p.In.Executor, BlockedBy: deps, Expect: MsgImplComplete})
	c.cancelTimer("increment")
	if d := c.r.Config.Incremental.TaskTimeout; d > 0 {
		c.setTimer("increment", d*time.Duration(len(in.Items)))
	}
	c.to(p6Impl, reason)
}

func (p *incremental) handle(c *ctx, s signal) error {
	cfg := c.r.Config.Incremental
	if s.kind == sigTimer && s.key == "increment" && (c.r.State == p6Impl || c.r.State == p6Validate) {
		c.r.Errors++
		c.cancelTask(p.ImplKey, "increment timed out")
		c.cancelTask(p.ValKey, "increment timed out")
		return p.gateFailed(c, cfg, []string{"timeout"}, "increment timed out")
	}
	switch c.r.State {
	case p6Impl:
		switch {
		case (s.key == p.ImplKey || s.key == "") && s.typ == MsgImplComplete,
			s.kind == sigTask && s.key == p.ImplKey && s.status == StatusCompleted:
			in := p.inc()
			p.ValKey = fmt.Sprintf("validate-%d-%d", p.Cur+1, in.Attempts)
			c.task(p.ValKey, TaskSpec{Subject: fmt.Sprintf("VALIDATE-%s-%d", in.ID, in.Attempts), Description: "Check the increment gate: syntax_clean, no_regression, increment_tests_pass",
				Role: p.In.Validator, Gate: p.In.Gate, Expect: MsgIncrementReady})
			c.to(p6Validate, "increment implemented: validate its gate")
		case s.kind == sigTask && s.key == p.ImplKey && (s.status == StatusFailed || s.status == StatusCancelled):
			return p.gateFailed(c, cfg, []string{"implementation"}, "implementation "+string(s.status)+": "+s.errText)
		}
	case p6Validate:
		in := p.inc()
		switch {
		case s.typ == MsgIncrementReady && (s.key == p.ValKey || (s.key == "" && s.payload.(*IncrementReady).Increment == in.ID)):
			r := s.payload.(*IncrementReady)
			c.r.Tasks[p.ValKey] = withStatus(c.r.Tasks[p.ValKey], StatusCompleted)
			if r.Passed() {
				return p.gatePassed(c)
			}
			p.Suggestion = r.Suggestion
			failed := r.Failed()
			if len(failed) == 0 {
				failed = []string{"unspecified"}
			}
			return p.gateFailed(c, cfg, failed, "gate failed: "+strings.Join(failed, ", "))
		case s.kind == sigTask && s.key == p.ValKey && s.status == StatusCompleted:
			return p.gatePassed(c)
		case s.kind == sigTask && s.key == p.ValKey && (s.status == StatusFailed || s.status == StatusCancelled):
			return p.gateFailed(c, cfg, []string{"validation"}, "validation task "+string(s.status)+": "+s.errText)
		}
	case p6Review:
		if s.kind != sigChild {
			return nil
		}
		if s.child.Status == OutcomeSuccess || s.child.Status == OutcomeDegraded {
			if p.Fixing {
				p.Fixing = false
				p.implementOrValidate(c)
				return nil
			}
			p.pass(c, "gate passed and CP-2 review approved")
			return nil
		}
		p.Fixing = true // do not nest CP-2 again for this failure
		return p.gateFailed(c, cfg, []string{"review"}, "CP-2 inside the increment: "+string(s.child.Status))
	case p6Final:
		if res, ok := testOutcome(s, "final"); ok {
			if res.pass {
				st, why := OutcomeSuccess, "every increment passed and the final validation passed"
				if n := p.count("BLOCKED"); n > 0 {
					st, why = OutcomeDegraded, fmt.Sprintf("final validation passed with %d blocked increment(s)", n)
				}
				c.finish(st, why, p.progress())
				return nil
			}
			c.r.Errors++
			p.bisectNext(c, "final validation failed: revert increments one by one to locate the failure")
		}
	case p6Bisect:
		if res, ok := testOutcome(s, p.BisectKey); ok {
			last := p.Bisect[len(p.Bisect)-1]
			if res.pass {
				p.Culprit = p.Incs[last].ID
				c.finish(OutcomeDegraded, "bisect: the suite passes once "+p.Culprit+" is reverted; it is the failing increment", p.progress())
				return nil
			}
			p.bisectNext(c, p.Incs[last].ID+" reverted and the suite still fails")
		}
	}
	return nil
}

// implementOrValidate re-validates after a nested CP-2 fixed the tests.
func (p *incremental) implementOrValidate(c *ctx) {
	in := p.inc()
	p.ValKey = fmt.Sprintf("validate-%d-%d-r", p.Cur+1, in.Attempts)
	c.task(p.ValKey, TaskSpec{Subject: fmt.Sprintf("VALIDATE-%s-%d-recheck", in.ID, in.Attempts), Description: "Re-check the increment gate after the review-fix cycle",
		Role: p.In.Validator, Gate: p.In.Gate, Expect: MsgIncrementReady})
	c.to(p6Validate, "CP-2 fixed the increment tests: re-validate")
}

type testRes struct{ pass bool }

// testOutcome reads a test report or task end for the given key.
func testOutcome(s signal, key string) (testRes, bool) {
	if s.key != key && !(s.key == "" && s.typ == MsgTestResult) {
		return testRes{}, false
	}
	switch {
	case s.typ == MsgTestResult:
		r := s.payload.(*TestResult)
		return testRes{pass: r.Rate() >= 1-1e-12 && !r.Regression}, true
	case s.kind == sigTask && s.status == StatusCompleted:
		return testRes{pass: true}, true
	case s.kind == sigTask && (s.status == StatusFailed || s.status == StatusCancelled):
		return testRes{pass: false}, true
	}
	return testRes{}, false
}

func (p *incremental) gatePassed(c *ctx) error {
	c.cancelTimer("increment")
	in := p.inc()
	c.send(RoleAddress(RoleCoordinator), MsgIncrementReady, in.ID+" gate PASS", &IncrementReady{Increment: in.ID, Status: "PASS", Gate: &IncrementGate{true, true, true}})
	if p.In.ReviewEach {
		if err := c.startChild("review-"+in.ID, CP2, ReviewFixInput{Artifact: in.ID, Producer: p.In.Executor}, "review-fix inside the increment"); err != nil {
			return err
		}
		c.to(p6Review, in.ID+" gate passed: CP-2 review inside the increment")
		return nil
	}
	p.pass(c, in.ID+" gate passed")
	return nil
}

func (p *incremental) pass(c *ctx, reason string) {
	p.inc().Status = "PASS"
	p.RollbackKey = ""
	p.advance(c, reason)
}

func (p *incremental) gateFailed(c *ctx, cfg IncrementalConfig, failed []string, reason string) error {
	c.cancelTimer("increment")
	in := p.inc()
	p.Failed = failed
	if in.Attempts > cfg.MaxRetries {
		in.Status = "BLOCKED"
		p.RollbackKey = fmt.Sprintf("rollback-%d", p.Cur+1)
		c.task(p.RollbackKey, TaskSpec{Subject: "ROLLBACK-" + in.ID, Description: "Roll back the code of " + in.ID + " (failed " + fmt.Sprint(in.Attempts) + " times)", Role: p.In.Executor})
		blocked := p.count("BLOCKED")
		if float64(blocked) > cfg.MaxBlockedRatio*float64(len(p.Incs)) {
			c.finish(OutcomeEscalated, fmt.Sprintf("%s; %d of %d increments blocked (more than %.0f%%): stop delivery, the user evaluates replanning", reason, blocked, len(p.Incs), cfg.MaxBlockedRatio*100), p.progress())
			return nil
		}
		p.advance(c, fmt.Sprintf("%s; %s failed %d times: roll back, mark blocked, continue", reason, in.ID, in.Attempts))
		return nil
	}
	c.send(RoleAddress(p.In.Executor), MsgFixRequired, in.ID+" gate failed: "+strings.Join(failed, ", "), &FixRequired{Increment: in.ID, FailedGates: gateNames(failed), Suggestion: p.Suggestion})
	if len(failed) == 1 && failed[0] == "increment_tests_pass" && !p.Fixing {
		// The seed: increment tests failing → CP-2 Review-Fix Cycle.
		in.Attempts++ // the nested cycle is this increment's next attempt
		c.r.Iteration++
		c.r.Retries++
		p.Fixing = true
		if err := c.startChild(fmt.Sprintf("fix-%s-%d", in.ID, in.Attempts), CP2, ReviewFixInput{Artifact: in.ID + " (increment tests fail)", Producer: p.In.Executor}, "increment tests fail"); err != nil {
			return err
		}
		c.to(p6Review, reason+": CP-2 fixes the increment tests")
		return nil
	}
	p.Fixing = false
	p.implement(c, reason+": executor fixes")
	return nil
}

func gateNames(failed []string) []string {
	var out []string
	for _, f := range failed {
		if f == "syntax_clean" || f == "no_regression" || f == "increment_tests_pass" {
			out = append(out, f)
		}
	}
	return out
}

func (p *incremental) advance(c *ctx, reason string) {
	p.Fixing = false
	p.Suggestion = ""
	if p.Cur+1 < len(p.Incs) {
		p.Cur++
		p.implement(c, reason+"; next "+p.inc().ID)
		return
	}
	if p.count("PASS") == 0 {
		c.finish(OutcomeFailed, reason+"; every increment blocked", p.progress())
		return
	}
	var deps []string
	if p.RollbackKey != "" {
		deps = []string{p.RollbackKey}
	}
	c.task("final", TaskSpec{Subject: "TEST-final", Description: "Full test suite after all increments", Role: p.In.Validator, BlockedBy: deps, Expect: MsgTestResult})
	c.to(p6Final, reason+"; all increments done: full validation")
}

func (p *incremental) bisectNext(c *ctx, reason string) {
	for i := len(p.Incs) - 1; i >= 0; i-- {
		if p.Incs[i].Status == "PASS" && !slices.Contains(p.Bisect, i) {
			p.Bisect = append(p.Bisect, i)
			p.BisectKey = fmt.Sprintf("bisect-%d", i+1)
			c.task(p.BisectKey, TaskSpec{Subject: "BISECT-" + p.Incs[i].ID, Description: "Revert " + p.Incs[i].ID + " (keeping earlier reverts) and run the full suite", Role: p.In.Executor, Expect: MsgTestResult})
			c.to(p6Bisect, reason+"; revert "+p.Incs[i].ID)
			return
		}
	}
	c.finish(OutcomeFailed, reason+"; reverting every increment did not locate the failure", p.progress())
}

func (p *incremental) count(status string) int {
	n := 0
	for _, in := range p.Incs {
		if in.Status == status {
			n++
		}
	}
	return n
}

func (p *incremental) progress() IncrementProgress {
	pr := IncrementProgress{TotalIncrements: len(p.Incs), Current: p.Cur + 1}
	for _, in := range p.Incs {
		switch in.Status {
		case "PASS":
			pr.Completed++
		case "BLOCKED":
			pr.Blocked++
		}
		if in.Attempts > 0 {
			pr.GateHistory = append(pr.GateHistory, GateHistory{ID: in.ID, Attempts: in.Attempts, Status: in.Status})
		}
	}
	pr.ProgressPercent = pr.Completed * 100 / len(p.Incs)
	return pr
}
