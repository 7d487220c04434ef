package team

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ReviewFixInput starts a CP-2 Review-Fix Cycle run.
type ReviewFixInput struct {
	// Artifact says what is reviewed ("the payment module", "PLAN-001").
	Artifact string `json:"artifact"`
	Producer Role   `json:"producer,omitempty"` // default executor
	Reviewer Role   `json:"reviewer,omitempty"` // default reviewer
	// Produce: the producer has not delivered yet; a first IMPL task is
	// created and the cycle waits for it (impl_complete). Otherwise the
	// artifact exists and the first review starts at once.
	Produce bool `json:"produce,omitempty"`
	// EscalateTo handles a design issue the producer cannot fix, or a fix
	// task that fails: CP-5 (default), CP-7, or CP-1 to replan.
	EscalateTo PatternID `json:"escalate_to,omitempty"`
}

// CP-2 states.
const (
	p2Produce  = "PRODUCE"
	p2Review   = "REVIEW"
	p2Fix      = "FIX"
	p2Escalate = "ESCALATE"
)

// RoundRecord is one CP-2 review round in the findings history.
type RoundRecord struct {
	Round    int      `json:"round"`
	Verdict  Verdict  `json:"verdict"`
	Total    int      `json:"total"`
	Critical int      `json:"critical"`
	Delta    Delta    `json:"delta"`
	Findings Findings `json:"findings"`
}

// Delta compares the findings of a round with the previous one.
type Delta struct {
	Fixed     int `json:"fixed"`
	New       int `json:"new"`
	Remaining int `json:"remaining"`
}

// String renders the seed's delta text: "+3 fixed, -1 new issue".
func (d Delta) String() string {
	s := fmt.Sprintf("+%d fixed, -%d new issue", d.Fixed, d.New)
	if d.New != 1 {
		s += "s"
	}
	return s
}

// FindingsDelta compares two rounds' findings by finding key.
func FindingsDelta(prev, cur Findings) Delta {
	keys := func(f Findings) map[string]bool {
		m := map[string]bool{}
		for _, s := range Severities {
			for _, x := range f.BySeverity(s) {
				m[x.Key()] = true
			}
		}
		return m
	}
	pk, ck := keys(prev), keys(cur)
	var d Delta
	for k := range pk {
		if !ck[k] {
			d.Fixed++
		}
	}
	for k := range ck {
		if !pk[k] {
			d.New++
		} else {
			d.Remaining++
		}
	}
	return d
}

type reviewFix struct {
	In           ReviewFixInput `json:"in"`
	Round        int            `json:"round"`
	ReviewKey    string         `json:"review_key,omitempty"`
	FixKey       string         `json:"fix_key,omitempty"`
	NoImprove    int            `json:"no_improve"`
	History      []RoundRecord  `json:"history,omitempty"`
	EscalateWhy  string         `json:"escalate_why,omitempty"`
	ProduceKey   string         `json:"produce_key,omitempty"`
	LastFindings *Findings      `json:"last_findings,omitempty"`
}

func (p *reviewFix) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-2"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if strings.TrimSpace(p.In.Artifact) == "" {
		return invalid(op, "artifact", "required")
	}
	switch p.In.EscalateTo {
	case "":
		p.In.EscalateTo = CP5
	case CP5, CP7, CP1:
	default:
		return invalid(op, "escalate_to", "%q is not CP-5, CP-7 or CP-1", p.In.EscalateTo)
	}
	p.In.Producer = orRole(p.In.Producer, RoleExecutor)
	p.In.Reviewer = orRole(p.In.Reviewer, RoleReviewer)
	c.r.MaxIterations = c.r.Config.ReviewFix.MaxRounds
	if p.In.Produce {
		p.ProduceKey = "produce"
		c.task(p.ProduceKey, TaskSpec{Subject: "IMPL-001", Description: "Produce: " + p.In.Artifact, Role: p.In.Producer, Expect: MsgImplComplete})
		c.to(p2Produce, "waiting for the producer's first delivery")
		return nil
	}
	p.review(c, "artifact delivered: first review")
	return nil
}

func (p *reviewFix) review(c *ctx, reason string) {
	p.Round++
	c.r.Iteration = p.Round
	p.ReviewKey = fmt.Sprintf("review-%d", p.Round)
	desc := "Review: " + p.In.Artifact
	if n := len(p.History); n > 0 {
		desc += fmt.Sprintf("\nRound %d; previous round: %s with %d finding(s)", p.Round, p.History[n-1].Verdict, p.History[n-1].Total)
	}
	c.task(p.ReviewKey, TaskSpec{Subject: "REVIEW-" + ord(p.Round), Description: desc, Role: p.In.Reviewer, Expect: MsgReviewResult})
	c.to(p2Review, reason)
}

func (p *reviewFix) handle(c *ctx, s signal) error {
	cfg := c.r.Config.ReviewFix
	switch c.r.State {
	case p2Produce:
		switch {
		case s.typ == MsgImplComplete || s.typ == MsgPlanReady || (s.kind == sigTask && s.key == p.ProduceKey && s.status == StatusCompleted):
			if s.key != "" && s.key != p.ProduceKey {
				return nil
			}
			p.review(c, "producer delivered")
		case s.kind == sigTask && s.key == p.ProduceKey && (s.status == StatusFailed || s.status == StatusCancelled):
			c.finish(OutcomeFailed, "the producer could not deliver: "+s.errText, p.data())
		}
	case p2Review:
		switch {
		case s.typ == MsgReviewResult && (s.key == p.ReviewKey || s.key == ""):
			return p.verdict(c, cfg, s.payload.(*ReviewResult))
		case s.kind == sigTask && s.key == p.ReviewKey && s.status == StatusCompleted:
			// CP-2's gate is the verdict: a review task completed without a
			// review_result waits for the message.
			c.note("review task completed without a verdict: waiting for review_result")
		case s.kind == sigTask && s.key == p.ReviewKey && (s.status == StatusFailed || s.status == StatusCancelled):
			c.finish(OutcomeFailed, "the reviewer could not review: "+s.errText, p.data())
		}
	case p2Fix:
		switch {
		case s.kind == sigTask && s.key == p.FixKey && s.status == StatusCompleted,
			s.typ == MsgImplComplete && (s.key == p.FixKey || s.key == ""):
			p.review(c, "producer revised: re-review")
		case s.kind == sigTask && s.key == p.FixKey && (s.status == StatusFailed || s.status == StatusCancelled):
			return p.escalate(c, "the producer could not fix: "+s.errText)
		}
	case p2Escalate:
		if s.kind == sigChild {
			switch s.child.Status {
			case OutcomeSuccess, OutcomeDegraded:
				if p.Round >= cfg.MaxRounds {
					c.finish(OutcomeEscalated, "escalation resolved the issue but no review round is left", p.data())
					return nil
				}
				p.review(c, "escalation resolved the issue: re-review")
			default:
				c.finish(OutcomeEscalated, "escalation did not resolve: "+p.EscalateWhy+" ("+string(p.In.EscalateTo)+": "+s.child.Summary+")", p.data())
			}
		}
	}
	return nil
}

func (p *reviewFix) verdict(c *ctx, cfg ReviewFixConfig, rr *ReviewResult) error {
	rec := RoundRecord{Round: p.Round, Verdict: rr.Verdict, Total: rr.Findings.Total(), Critical: len(rr.Findings.Critical), Findings: rr.Findings}
	if n := len(p.History); n > 0 {
		rec.Delta = FindingsDelta(p.History[n-1].Findings, rr.Findings)
		if rec.Total >= p.History[n-1].Total {
			p.NoImprove++
		} else {
			p.NoImprove = 0
		}
	} else {
		rec.Delta = Delta{New: rec.Total, Remaining: 0}
	}
	p.History = append(p.History, rec)
	c.r.Tasks[p.ReviewKey] = withStatus(c.r.Tasks[p.ReviewKey], StatusCompleted)
	if rr.Passes() {
		c.finish(OutcomeSuccess, fmt.Sprintf("%s after %d round(s)", rr.Verdict, p.Round), p.data())
		return nil
	}
	if rr.DesignIssue {
		return p.escalate(c, "design issue the producer cannot fix")
	}
	if p.NoImprove >= cfg.NoImprovementRounds {
		c.finish(OutcomeEscalated, fmt.Sprintf("findings did not decrease for %d consecutive rounds: stop and ask the user", p.NoImprove), p.data())
		return nil
	}
	if p.Round >= cfg.MaxRounds {
		c.finish(OutcomeEscalated, fmt.Sprintf("still %s after %d rounds: the user gets the findings history", rr.Verdict, p.Round), p.data())
		return nil
	}
	c.r.Retries++
	p.FixKey = fmt.Sprintf("fix-%d", p.Round)
	fb, _ := json.Marshal(rr.Findings)
	c.task(p.FixKey, TaskSpec{Subject: fmt.Sprintf("IMPL-fix-%d", p.Round), Description: "Fix issues (" + rec.Delta.String() + "): " + string(fb), Role: p.In.Producer, Expect: MsgImplComplete})
	c.send(RoleAddress(p.In.Producer), MsgFixRequired, fmt.Sprintf("fix required: round %d, %d finding(s)", p.Round, rec.Total), &FixRequired{Iteration: p.Round, Findings: &rr.Findings})
	c.to(p2Fix, fmt.Sprintf("%s with %d finding(s) (%d critical), %s", rr.Verdict, rec.Total, rec.Critical, rec.Delta))
	return nil
}

func (p *reviewFix) escalate(c *ctx, why string) error {
	p.EscalateWhy = why
	in := any(nil)
	switch p.In.EscalateTo {
	case CP5:
		in = EscalationInput{Issue: why + ": " + p.In.Artifact, StartLevel: 1, Agent: string(p.In.Producer)}
	case CP7:
		in = SwarmInput{Issue: why + ": " + p.In.Artifact}
	case CP1:
		in = PipelineInput{Requirement: "Replan: " + p.In.Artifact + " (" + why + ")"}
	}
	if err := c.startChild("escalation", p.In.EscalateTo, in, why); err != nil {
		return err
	}
	c.to(p2Escalate, why+": escalate to "+string(p.In.EscalateTo))
	return nil
}

func (p *reviewFix) data() map[string]any {
	return map[string]any{"rounds": p.Round, "history": p.History}
}

func withStatus(t RunTask, s TaskStatus) RunTask {
	if !t.Status.Terminal() {
		t.Status = s
	}
	return t
}
