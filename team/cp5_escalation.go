package team

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// EscalationLevel names the seed's four levels.
var EscalationLevels = [4]string{"Self-repair", "Specialist diagnosis", "Coordinator intervention", "User escalation"}

// EscalationInput starts a CP-5 Escalation Chain run.
type EscalationInput struct {
	Issue string `json:"issue"`
	// Agent handles L0 (a member name or role address; a bare role name is
	// taken as a role; default role executor).
	Agent      string `json:"agent,omitempty"`
	Specialist string `json:"specialist,omitempty"` // L1, default role:specialist
	// Options offered to the user at L3; Conservative is the most
	// conservative one, taken as a WORKAROUND when the user is silent
	// (default: the first option, else "minimal change that unblocks").
	Options        []string         `json:"options,omitempty"`
	Conservative   string           `json:"conservative,omitempty"`
	StartLevel     int              `json:"start_level,omitempty"`
	DiagnosisChain []DiagnosisEntry `json:"diagnosis_chain,omitempty"`
}

// CP-5 states: one per level, and REPLAN after an architectural root cause.
const (
	p5Replan = "REPLAN"
)

var p5States = [4]string{"L0", "L1", "L2", "L3"}

type escalation struct {
	In       EscalationInput  `json:"in"`
	Level    int              `json:"level"`
	Attempts int              `json:"attempts"` // at the current level
	Chain    []DiagnosisEntry `json:"chain,omitempty"`
	TaskKey  string           `json:"task_key,omitempty"`
	Solution string           `json:"solution,omitempty"`
}

func (p *escalation) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-5"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if strings.TrimSpace(p.In.Issue) == "" {
		return invalid(op, "issue", "required")
	}
	if p.In.StartLevel < 0 || p.In.StartLevel > 3 {
		return invalid(op, "start_level", "%d is outside 0..3", p.In.StartLevel)
	}
	if p.In.Agent == "" {
		p.In.Agent = RoleAddress(RoleExecutor)
	}
	if p.In.Specialist == "" {
		p.In.Specialist = RoleAddress(RoleSpecialist)
	}
	for _, a := range []string{p.In.Agent, p.In.Specialist} {
		if err := ValidateAddress(a); err != nil {
			return err
		}
	}
	if p.In.Conservative == "" {
		if len(p.In.Options) > 0 {
			p.In.Conservative = p.In.Options[0]
		} else {
			p.In.Conservative = "minimal change that unblocks"
		}
	}
	p.Chain = append(p.Chain, p.In.DiagnosisChain...)
	att := c.r.Config.Escalation.MaxAttempts
	for l := p.In.StartLevel; l < 4; l++ {
		c.r.MaxIterations += att[l]
	}
	p.Level = p.In.StartLevel
	p.attempt(c, fmt.Sprintf("issue enters at L%d (%s)", p.Level, EscalationLevels[p.Level]))
	return nil
}

// handler returns the task owner/role of a level.
func (p *escalation) handler(level int) (string, Role) {
	switch level {
	case 0:
		return memberOrRole(p.In.Agent)
	case 1:
		return memberOrRole(p.In.Specialist)
	}
	return "", RoleCoordinator
}

func memberOrRole(addr string) (string, Role) {
	if r := roleOf(addr); r != "" {
		return "", r
	}
	if Role(addr).Predefined() {
		return "", Role(addr)
	}
	return addr, ""
}

func (p *escalation) attempt(c *ctx, reason string) {
	p.Attempts++
	c.r.Iteration++
	if p.Level == 3 {
		q := "Escalated issue: " + p.In.Issue + "\nDiagnosis chain:\n" + chainText(p.Chain)
		c.ask("l3", q, p.In.Options)
		if d := c.r.Config.Escalation.UserTimeout; d > 0 {
			c.setTimer("user", d)
		}
		c.to(p5States[3], reason)
		return
	}
	owner, role := p.handler(p.Level)
	prefix := [3]string{"FIX-L0", "DIAG-L1", "COORD-L2"}[p.Level]
	p.TaskKey = fmt.Sprintf("l%d-%d", p.Level, p.Attempts)
	desc := fmt.Sprintf("%s (L%d, attempt %d): %s", EscalationLevels[p.Level], p.Level, p.Attempts, p.In.Issue)
	if len(p.Chain) > 0 {
		desc += "\nDiagnosis so far:\n" + chainText(p.Chain)
	}
	c.task(p.TaskKey, TaskSpec{Subject: fmt.Sprintf("%s-%d", prefix, p.Attempts), Description: desc, Owner: owner, Role: role, Expect: MsgEscalationReport})
	c.to(p5States[p.Level], reason)
}

func chainText(chain []DiagnosisEntry) string {
	var b strings.Builder
	for _, d := range chain {
		fmt.Fprintf(&b, "- L%d %s (%d attempt(s)): %s", d.Level, d.Agent, d.Attempts, d.Diagnosis)
		if d.Recommendation != "" {
			b.WriteString("; recommends " + d.Recommendation)
		}
		if len(d.Tried) > 0 {
			b.WriteString("; tried " + strings.Join(d.Tried, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// appendDiagnosis merges an attempt's report into the current level's entry.
func (p *escalation) appendDiagnosis(agent string, r *EscalationReport) {
	n := len(p.Chain)
	if n == 0 || p.Chain[n-1].Level != p.Level {
		p.Chain = append(p.Chain, DiagnosisEntry{Level: p.Level, Agent: agent})
		n++
	}
	e := &p.Chain[n-1]
	e.Attempts = p.Attempts
	if r.Diagnosis != "" {
		e.Diagnosis = r.Diagnosis
	}
	if r.Recommendation != "" {
		e.Recommendation = r.Recommendation
	}
	e.Tried = append(e.Tried, r.Tried...)
}

func (p *escalation) handle(c *ctx, s signal) error {
	att := c.r.Config.Escalation.MaxAttempts
	if c.r.State == p5Replan {
		if s.kind == sigChild {
			c.finish(s.child.Status, "replanned through CP-1: "+s.child.Summary, p.data())
		}
		return nil
	}
	if p.Level == 3 {
		switch {
		case s.kind == sigUser:
			choice := strings.ToLower(strings.TrimSpace(s.reply.Choice))
			p.Chain = append(p.Chain, DiagnosisEntry{Level: 3, Agent: "user", Attempts: 1, Diagnosis: s.reply.Text, Recommendation: s.reply.Choice})
			if choice == "abort" || choice == "unresolved" {
				c.finish(OutcomeFailed, "the user could not resolve the issue", p.data())
				return nil
			}
			c.cancelTimer("user")
			p.Solution = cmp.Or(strings.TrimSpace(s.reply.Choice+" "+s.reply.Text), "user decided")
			c.send(p.In.Agent, MsgResolution, "user guidance: "+clip(p.Solution, 150), &Resolution{Issue: p.In.Issue, Level: 3, Solution: p.Solution})
			c.finish(OutcomeSuccess, "resolved at L3 by the user: "+p.Solution, p.data())
		case s.kind == sigTimer && s.key == "user":
			c.r.Errors++
			p.Solution = "WORKAROUND: " + p.In.Conservative
			c.send(p.In.Agent, MsgResolution, "no user answer: continue with the most conservative option (WORKAROUND)", &Resolution{Issue: p.In.Issue, Level: 3, Solution: p.In.Conservative, Workaround: true})
			c.finish(OutcomeDegraded, "the user did not answer: "+p.Solution, p.data())
		}
		return nil
	}
	if s.key != p.TaskKey || s.key == "" {
		return nil
	}
	var rep *EscalationReport
	switch {
	case s.kind == sigReport && s.typ == MsgEscalationReport:
		rep = s.payload.(*EscalationReport)
	case s.kind == sigTask && s.status == StatusCompleted:
		rep = &EscalationReport{Resolved: true, Diagnosis: "task completed"}
	case s.kind == sigTask && (s.status == StatusFailed || s.status == StatusCancelled):
		rep = &EscalationReport{Diagnosis: string(s.status) + ": " + s.errText}
	default:
		return nil
	}
	c.r.Tasks[p.TaskKey] = withStatus(c.r.Tasks[p.TaskKey], StatusCompleted)
	agent, role := p.handler(p.Level)
	if agent == "" {
		agent = string(role)
	}
	if s.from != "" {
		agent = s.from
	}
	p.appendDiagnosis(agent, rep)
	switch {
	case rep.Resolved:
		p.Solution = cmp.Or(rep.Solution, rep.Recommendation, rep.Diagnosis)
		if p.Level == 1 {
			c.learn(CmdRecordPattern, Learning{Content: "When: " + p.In.Issue + " — apply: " + p.Solution, Context: "solved at L1 (specialist); L0 can handle it next time", Evidence: []string{c.r.ID}, Success: true})
		}
		c.finish(OutcomeSuccess, fmt.Sprintf("resolved at L%d: %s", p.Level, p.Solution), p.data())
	case rep.Architectural:
		if err := c.startChild("replan", CP1, PipelineInput{Requirement: "Replan after architectural root cause: " + p.In.Issue + " — " + rep.Diagnosis}, "architectural root cause"); err != nil {
			return err
		}
		c.to(p5Replan, "diagnosis shows an architectural root cause: back to CP-1")
	case p.Attempts < att[p.Level]:
		c.r.Retries++
		p.attempt(c, fmt.Sprintf("not resolved (attempt %d of %d at L%d): retry", p.Attempts, att[p.Level], p.Level))
	default:
		from := p.Level
		c.send(p.next(), MsgEscalate, fmt.Sprintf("escalate L%d → L%d: %s", from, from+1, clip(p.In.Issue, 120)),
			&Escalate{Issue: p.In.Issue, FromLevel: from, ToLevel: from + 1, AttemptsAtCurrent: p.Attempts, DiagnosisChain: p.Chain})
		p.Level++
		p.Attempts = 0
		p.attempt(c, fmt.Sprintf("L%d used its %d attempt(s): escalate to L%d (%s)", from, att[from], p.Level, EscalationLevels[p.Level]))
	}
	return nil
}

// next is the address of the next level's handler (L3 is the user, reached
// through the coordinator).
func (p *escalation) next() string {
	switch p.Level + 1 {
	case 1:
		return p.In.Specialist
	}
	return RoleAddress(RoleCoordinator)
}

func (p *escalation) data() map[string]any {
	return map[string]any{"level": p.Level, "diagnosis_chain": p.Chain, "solution": p.Solution}
}
