package team

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// SwarmInput starts a CP-7 Swarming run.
type SwarmInput struct {
	Issue          string          `json:"issue"`
	AffectedTasks  []string        `json:"affected_tasks,omitempty"`
	DiagnosisSoFar json.RawMessage `json:"diagnosis_so_far,omitempty"`
	// Participants are the members whose diagnoses are awaited (the
	// broadcast goes to all); a round ends early once each has answered.
	Participants []string `json:"participants,omitempty"`
	// Pause lists the ids of the non-critical in-progress tasks to pause
	// for the swarm (the service picks them: every in-progress task of the
	// team except the affected ones); they resume when the swarm ends.
	Pause []string `json:"pause,omitempty"`
	// Fixer is the member who applies fixes; default the author of the
	// chosen diagnosis.
	Fixer    string `json:"fixer,omitempty"`
	Verifier Role   `json:"verifier,omitempty"` // default tester
}

// Candidate is one diagnosis ranked for a fix.
type Candidate struct {
	From string `json:"from"`
	SwarmDiagnosis
	Specificity int `json:"specificity"`
}

// Specificity scores how concrete a fix suggestion is: one point per word,
// three more per token that names a file, symbol, line or command (contains
// '/', '.', '_', '(', ':', '=' or a digit). The seed picks the diagnosis with
// the highest confidence and the most specific fix.
func Specificity(s string) int {
	n := 0
	for _, w := range strings.FieldsFunc(s, unicode.IsSpace) {
		n++
		if strings.ContainsAny(w, "/._(:=0123456789") {
			n += 3
		}
	}
	return n
}

// RankDiagnoses orders diagnoses by confidence, then specificity, then
// author, excluding fixes already tried.
func RankDiagnoses(ds map[string]SwarmDiagnosis, tried []string) []Candidate {
	var out []Candidate
	for from, d := range ds {
		if slices.Contains(tried, d.FixSuggestion) {
			continue
		}
		out = append(out, Candidate{From: from, SwarmDiagnosis: d, Specificity: Specificity(d.FixSuggestion)})
	}
	slices.SortFunc(out, func(a, b Candidate) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Specificity, a.Specificity); c != 0 {
			return c
		}
		return cmp.Compare(a.From, b.From)
	})
	return out
}

// CP-7 states.
const (
	p7Diagnose = "DIAGNOSE"
	p7Fix      = "FIX"
	p7Verify   = "VERIFY"
	p7Escalate = "ESCALATE"
)

type swarm struct {
	In           SwarmInput                `json:"in"`
	Round        int                       `json:"round"`
	Diagnoses    map[string]SwarmDiagnosis `json:"diagnoses,omitempty"`
	Candidates   []Candidate               `json:"candidates,omitempty"`
	Tried        []string                  `json:"tried,omitempty"`
	Unresponsive []string                  `json:"unresponsive,omitempty"`
	N            int                       `json:"n"` // fixes attempted
	FixKey       string                    `json:"fix_key,omitempty"`
	VerifyKey    string                    `json:"verify_key,omitempty"`
	RollbackKey  string                    `json:"rollback_key,omitempty"`
	Chosen       *Candidate                `json:"chosen,omitempty"`
	Resumed      bool                      `json:"resumed,omitempty"`
}

func (p *swarm) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-7"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if strings.TrimSpace(p.In.Issue) == "" {
		return invalid(op, "issue", "required")
	}
	for _, m := range p.In.Participants {
		if !ValidName(m) {
			return invalid(op, "participants", "%q is not a valid member name", m)
		}
	}
	p.In.Verifier = orRole(p.In.Verifier, RoleTester)
	c.r.MaxIterations = c.r.Config.Swarm.MaxRounds
	for _, id := range p.In.Pause {
		c.emit(Command{Kind: CmdPauseTask, TaskID: id, Reason: "paused for swarm: " + clip(p.In.Issue, 100)})
	}
	p.openRound(c, fmt.Sprintf("swarm on a blocking issue; %d task(s) paused", len(p.In.Pause)))
	return nil
}

func (p *swarm) openRound(c *ctx, reason string) {
	p.Round++
	c.r.Iteration = p.Round
	p.Diagnoses = nil
	p.Candidates = nil
	assignment := "All agents: diagnose from your expertise angle"
	if p.Round > 1 {
		assignment = "Focused diagnosis: the fixes tried did not solve it; propose a different root cause or fix"
	}
	c.send(AddressAll, MsgSwarmJoin, fmt.Sprintf("swarm round %d: %s", p.Round, clip(p.In.Issue, 120)),
		&SwarmJoin{Issue: p.In.Issue, AffectedTasks: p.In.AffectedTasks, DiagnosisSoFar: p.In.DiagnosisSoFar, Assignment: assignment, Round: p.Round, Exclude: p.Tried})
	c.setTimer("diagnose", c.r.Config.Swarm.Timeout)
	c.to(p7Diagnose, reason)
}

func (p *swarm) active() []string {
	var out []string
	for _, m := range p.In.Participants {
		if !slices.Contains(p.Unresponsive, m) {
			out = append(out, m)
		}
	}
	return out
}

func (p *swarm) handle(c *ctx, s signal) error {
	switch c.r.State {
	case p7Diagnose:
		switch {
		case s.kind == sigReport && s.typ == MsgSwarmDiagnosis:
			if _, dup := p.Diagnoses[s.from]; dup || s.from == "" {
				return nil
			}
			if p.Diagnoses == nil {
				p.Diagnoses = map[string]SwarmDiagnosis{}
			}
			p.Diagnoses[s.from] = *s.payload.(*SwarmDiagnosis)
			act := p.active()
			for _, m := range act {
				if _, ok := p.Diagnoses[m]; !ok {
					return nil
				}
			}
			if len(act) == 0 {
				return nil // no roster: wait for the timeout
			}
			c.cancelTimer("diagnose")
			return p.choose(c, "every participant diagnosed")
		case s.kind == sigTimer && s.key == "diagnose":
			for _, m := range p.active() {
				if _, ok := p.Diagnoses[m]; !ok {
					p.Unresponsive = append(p.Unresponsive, m)
					c.note("no diagnosis from " + m + ": skipped")
				}
			}
			c.r.Errors++
			return p.choose(c, fmt.Sprintf("timeout: best of %d diagnosis(es)", len(p.Diagnoses)))
		}
	case p7Fix:
		switch {
		case s.kind == sigTask && s.key == p.FixKey && s.status == StatusCompleted,
			s.kind == sigReport && s.key == p.FixKey:
			p.N++
			p.VerifyKey = fmt.Sprintf("verify-%d", p.N)
			c.task(p.VerifyKey, TaskSpec{Subject: fmt.Sprintf("SWARM-VERIFY-%d", p.N), Description: "Re-run the scenario that triggered the block: " + p.In.Issue, Role: p.In.Verifier, Expect: MsgTestResult})
			c.to(p7Verify, "fix applied: re-run the blocking scenario")
		case s.kind == sigTask && s.key == p.FixKey && (s.status == StatusFailed || s.status == StatusCancelled):
			return p.nextCandidate(c, "fix task "+string(s.status))
		}
	case p7Verify:
		if s.key != p.VerifyKey && !(s.key == "" && s.typ == MsgTestResult) {
			return nil
		}
		var r *TestResult
		switch {
		case s.typ == MsgTestResult:
			r = s.payload.(*TestResult)
		case s.kind == sigTask && s.status == StatusCompleted:
			one := 1.0
			r = &TestResult{PassRate: &one}
		case s.kind == sigTask && (s.status == StatusFailed || s.status == StatusCancelled):
			zero := 0.0
			r = &TestResult{PassRate: &zero}
		default:
			return nil
		}
		c.r.Tasks[p.VerifyKey] = withStatus(c.r.Tasks[p.VerifyKey], StatusCompleted)
		switch {
		case r.Rate() >= 1-1e-12 && !r.Regression:
			p.end(c, OutcomeSuccess, fmt.Sprintf("blocker solved in round %d by %s's diagnosis: %s", p.Round, p.Chosen.From, p.Chosen.RootCause))
		case r.Regression:
			p.RollbackKey = fmt.Sprintf("rollback-%d", p.N)
			c.task(p.RollbackKey, TaskSpec{Subject: fmt.Sprintf("SWARM-ROLLBACK-%d", p.N), Description: "Roll back the fix: it introduced a regression", Owner: p.fixer()})
			return p.nextCandidate(c, "the fix regressed: roll back, try the next-best diagnosis")
		default:
			return p.nextRound(c, "the fix did not solve the blocker")
		}
	case p7Escalate:
		if s.kind == sigChild {
			st := OutcomeEscalated
			if s.child.Status != OutcomeSuccess {
				st = s.child.Status
			}
			p.end(c, st, "swarm did not solve it; CP-5 L3: "+s.child.Summary)
		}
	}
	return nil
}

func (p *swarm) fixer() string {
	if p.In.Fixer != "" {
		return p.In.Fixer
	}
	if p.Chosen != nil {
		return p.Chosen.From
	}
	return ""
}

func (p *swarm) choose(c *ctx, reason string) error {
	p.Candidates = RankDiagnoses(p.Diagnoses, p.Tried)
	if len(p.Candidates) == 0 {
		return p.nextRound(c, reason+"; no usable diagnosis")
	}
	return p.fix(c, reason)
}

func (p *swarm) fix(c *ctx, reason string) error {
	best := p.Candidates[0]
	p.Candidates = p.Candidates[1:]
	p.Chosen = &best
	p.Tried = append(p.Tried, best.FixSuggestion)
	p.FixKey = fmt.Sprintf("fix-%d", len(p.Tried))
	var deps []string
	if p.RollbackKey != "" {
		deps = []string{p.RollbackKey}
	}
	c.task(p.FixKey, TaskSpec{Subject: "SWARM-FIX: " + clip(p.In.Issue, 150), Description: fmt.Sprintf("Fix based on swarm diagnosis (%s, confidence %.2f):\nroot cause: %s\nfix: %s", best.Perspective, best.Confidence, best.RootCause, best.FixSuggestion),
		Owner: p.fixer(), BlockedBy: deps})
	c.to(p7Fix, fmt.Sprintf("%s; chose %s (confidence %.2f, specificity %d)", reason, best.From, best.Confidence, best.Specificity))
	return nil
}

func (p *swarm) nextCandidate(c *ctx, reason string) error {
	if len(p.Candidates) > 0 {
		return p.fix(c, reason)
	}
	return p.nextRound(c, reason+"; no further diagnosis this round")
}

func (p *swarm) nextRound(c *ctx, reason string) error {
	if p.Round < c.r.Config.Swarm.MaxRounds {
		c.r.Retries++
		p.openRound(c, reason+": focused diagnosis round")
		return nil
	}
	chain := []DiagnosisEntry{}
	for _, cand := range RankDiagnoses(p.Diagnoses, nil) {
		chain = append(chain, DiagnosisEntry{Level: 2, Agent: cand.From, Attempts: p.Round, Diagnosis: cand.RootCause, Recommendation: cand.FixSuggestion})
	}
	if err := c.startChild("user", CP5, EscalationInput{Issue: p.In.Issue, StartLevel: 3, DiagnosisChain: chain, Agent: cmp.Or(p.fixer(), RoleAddress(RoleExecutor))}, "swarm rounds used up"); err != nil {
		return err
	}
	c.to(p7Escalate, fmt.Sprintf("%s; %d swarm rounds without a fix: escalate to the user (CP-5 L3)", reason, p.Round))
	return nil
}

// resume un-pauses the tasks paused for the swarm.
func (p *swarm) resume(c *ctx) {
	if p.Resumed {
		return
	}
	p.Resumed = true
	for _, id := range p.In.Pause {
		c.emit(Command{Kind: CmdResumeTask, TaskID: id, Reason: "swarm ended"})
	}
}

func (p *swarm) end(c *ctx, st OutcomeStatus, summary string) {
	p.resume(c)
	c.finish(st, summary, map[string]any{"rounds": p.Round, "tried": p.Tried, "chosen": p.Chosen, "unresponsive": p.Unresponsive})
}

func (p *swarm) cancel(c *ctx) { p.resume(c) }
