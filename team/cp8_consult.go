package team

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ConsultInput starts a CP-8 Consulting run.
type ConsultInput struct {
	Requester string         `json:"requester"` // the member asking; it keeps ownership of its task
	Request   ConsultRequest `json:"request"`
	// Members is the team roster the coordinator routes over.
	Members []Member `json:"members"`
	// NoConfirm finishes as soon as confident advice arrives, without
	// waiting for the requester's consult_outcome.
	NoConfirm bool `json:"no_confirm,omitempty"`
	// Voters for the CP-4 run when the advice conflicts with the design;
	// empty: the conflict is escalated.
	Voters []string `json:"voters,omitempty"`
}

// SelectConsultant routes a consultation: first a member with role
// consultant or specialist holding the topic as a capability; else a
// command worker (the seed's "CLI tool" fallback), preferring one with the
// topic; never the requester or an excluded member. ok is false when no
// member fits.
func SelectConsultant(members []Member, topic, requester string, exclude []string) (Member, bool) {
	topic = strings.ToLower(topic)
	has := func(m Member) bool {
		for _, c := range m.Capabilities {
			if strings.ToLower(c) == topic {
				return true
			}
		}
		return false
	}
	usable := func(m Member) bool { return m.Name != requester && !slices.Contains(exclude, m.Name) }
	for _, m := range members {
		if usable(m) && (m.Role == RoleConsultant || m.Role == RoleSpecialist) && has(m) {
			return m, true
		}
	}
	var fallback *Member
	for i, m := range members {
		if usable(m) && m.Worker.Kind == WorkerCommand {
			if has(m) {
				return m, true
			}
			if fallback == nil {
				fallback = &members[i]
			}
		}
	}
	if fallback != nil {
		return *fallback, true
	}
	return Member{}, false
}

// CP-8 states.
const (
	p8Advice    = "AWAIT_ADVICE"
	p8Apply     = "APPLY"
	p8Consensus = "CONSENSUS"
)

type consult struct {
	In        ConsultInput      `json:"in"`
	Asked     []string          `json:"asked"`
	Current   string            `json:"current"`
	TaskKey   string            `json:"task_key,omitempty"`
	FollowUps int               `json:"follow_ups"`
	Responses []ConsultResponse `json:"responses,omitempty"`
	Applied   *ConsultResponse  `json:"applied,omitempty"`
}

func (p *consult) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-8"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if !ValidName(p.In.Requester) {
		return invalid(op, "requester", "%q is not a valid member name", p.In.Requester)
	}
	if err := p.In.Request.validate(MsgConsultRequest); err != nil {
		return invalid(op, "request", "%v", err)
	}
	if p.In.Request.Urgency == "" {
		p.In.Request.Urgency = UrgencyNormal
	}
	c.r.MaxIterations = 1 + c.r.Config.Consult.MaxFollowUps
	c.r.Iteration = 1
	m, ok := SelectConsultant(p.In.Members, p.In.Request.Topic, p.In.Requester, nil)
	if !ok {
		p.unverified(c, "no specialist and no command worker for "+p.In.Request.Topic)
		return nil
	}
	p.ask(c, m, p.In.Request, "route to "+m.Name)
	return nil
}

func (p *consult) timeout(cfg ConsultConfig) time.Duration {
	switch p.In.Request.Urgency {
	case UrgencyBlocking:
		return cfg.TimeoutBlocking
	case UrgencyLow:
		return cfg.TimeoutLow
	}
	return cfg.TimeoutNormal
}

func (p *consult) ask(c *ctx, m Member, req ConsultRequest, reason string) {
	p.Asked = append(p.Asked, m.Name)
	p.Current = m.Name
	p.TaskKey = ""
	if m.Worker.Kind == WorkerCommand && m.Role != RoleConsultant && m.Role != RoleSpecialist {
		p.TaskKey = fmt.Sprintf("consult-%d", len(p.Asked))
		b, _ := json.Marshal(req)
		c.task(p.TaskKey, TaskSpec{Subject: "CONSULT-" + clip(req.Topic, 60), Description: "Expert consultation; answer as consult_response JSON: " + string(b), Owner: m.Name, Expect: MsgConsultResponse})
		reason += " (CLI tool fallback)"
	} else {
		c.send(m.Name, MsgConsultRequest, "consultation: "+clip(req.Topic, 80), &req)
	}
	c.cancelTimer("advice")
	if d := p.timeout(c.r.Config.Consult); d > 0 {
		c.setTimer("advice", d)
	}
	c.to(p8Advice, reason)
}

func (p *consult) handle(c *ctx, s signal) error {
	cfg := c.r.Config.Consult
	switch c.r.State {
	case p8Advice:
		switch {
		case s.kind == sigReport && s.typ == MsgConsultResponse && (s.from == p.Current || (p.TaskKey != "" && s.key == p.TaskKey)):
			r := *s.payload.(*ConsultResponse)
			if p.TaskKey != "" {
				c.r.Tasks[p.TaskKey] = withStatus(c.r.Tasks[p.TaskKey], StatusCompleted)
			}
			p.Responses = append(p.Responses, r)
			if r.Confidence >= cfg.ApplyConfidence {
				c.cancelTimer("advice")
				return p.apply(c, r, fmt.Sprintf("confidence %.2f ≥ %.2f: apply", r.Confidence, cfg.ApplyConfidence))
			}
			if p.FollowUps < cfg.MaxFollowUps {
				p.FollowUps++
				c.r.Iteration++
				c.r.Retries++
				req := p.In.Request
				req.FollowUp = true
				if m, ok := SelectConsultant(p.In.Members, req.Topic, p.In.Requester, p.Asked); ok {
					p.ask(c, m, req, fmt.Sprintf("confidence %.2f < %.2f: second opinion from %s", r.Confidence, cfg.ApplyConfidence, m.Name))
					return nil
				}
				m := Member{Name: p.Current, Role: RoleConsultant}
				if p.TaskKey != "" {
					m.Worker.Kind = WorkerCommand
					m.Role = RoleWorker
				}
				p.Asked = slices.DeleteFunc(p.Asked, func(n string) bool { return n == p.Current })
				p.ask(c, m, req, fmt.Sprintf("confidence %.2f < %.2f: follow-up question", r.Confidence, cfg.ApplyConfidence))
				return nil
			}
			c.cancelTimer("advice")
			p.unverified(c, fmt.Sprintf("confidence still below %.2f after the follow-up", cfg.ApplyConfidence))
		case s.kind == sigTask && s.key == p.TaskKey && p.TaskKey != "" && (s.status == StatusFailed || s.status == StatusCancelled):
			c.cancelTimer("advice")
			p.unverified(c, "the CLI consultation "+string(s.status))
		case s.kind == sigTimer && s.key == "advice":
			c.r.Errors++
			p.unverified(c, "consultation timed out")
		}
	case p8Apply:
		switch {
		case s.kind == sigReport && s.typ == MsgConsultOutcome && s.from == p.In.Requester:
			o := s.payload.(*ConsultOutcome)
			c.cancelTimer("apply")
			switch {
			case o.Applied:
				c.finish(OutcomeSuccess, "advice applied: "+p.Applied.Recommendation, p.data(false))
			case o.ConflictsWithDesign:
				if len(p.In.Voters) == 0 {
					c.finish(OutcomeEscalated, "the advice conflicts with the design and no voters were named: the coordinator decides", p.data(false))
					return nil
				}
				prop := Proposal{ID: "PROPOSAL-" + c.r.ID, Title: "Advice on " + p.In.Request.Topic + " conflicts with the design",
					Options: []ProposalOption{{ID: "A", Description: "apply: " + p.Applied.Recommendation}, {ID: "B", Description: "keep the current design"}}, Context: o.Note}
				if err := c.startChild("consensus", CP4, ConsensusInput{Proposal: prop, Voters: p.In.Voters}, "advice conflicts with the design"); err != nil {
					return err
				}
				c.to(p8Consensus, "advice conflicts with the design: CP-4 consensus")
			default:
				c.finish(OutcomeDegraded, "the requester did not apply the advice: "+o.Note, p.data(false))
			}
		case s.kind == sigTimer && s.key == "apply":
			c.finish(OutcomeDegraded, "advice sent; its application was not confirmed in time", p.data(false))
		}
	case p8Consensus:
		if s.kind == sigChild {
			st := s.child.Status
			if st == OutcomeSuccess {
				st = OutcomeSuccess
			}
			c.finish(st, "design conflict settled by CP-4: "+s.child.Summary, p.data(false))
		}
	}
	return nil
}

func (p *consult) apply(c *ctx, r ConsultResponse, reason string) error {
	p.Applied = &r
	c.send(p.In.Requester, MsgConsultResponse, "advice: "+clip(r.Recommendation, 120), &r)
	if p.In.NoConfirm {
		c.finish(OutcomeSuccess, reason, p.data(false))
		return nil
	}
	if d := p.timeout(c.r.Config.Consult); d > 0 {
		c.setTimer("apply", d)
	}
	c.to(p8Apply, reason+"; waiting for the requester's consult_outcome")
	return nil
}

// unverified tells the requester to continue on its own judgement.
func (p *consult) unverified(c *ctx, why string) {
	best := ConsultResponse{Recommendation: "No verified advice: continue with your best judgement and mark the result unverified", Rationale: why}
	for _, r := range p.Responses {
		if r.Confidence >= best.Confidence {
			best = r
			best.Caveats = append(slices.Clone(r.Caveats), "unverified: "+why)
		}
	}
	c.send(p.In.Requester, MsgConsultResponse, "unverified: "+clip(why, 120), &best)
	c.finish(OutcomeDegraded, "unverified: "+why, p.data(true))
}

func (p *consult) data(unverified bool) map[string]any {
	return map[string]any{"asked": p.Asked, "responses": p.Responses, "applied": p.Applied, "unverified": unverified}
}
