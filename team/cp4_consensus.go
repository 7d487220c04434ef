package team

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ConsensusInput starts a CP-4 Consensus Gate run.
type ConsensusInput struct {
	Proposal Proposal `json:"proposal"`
	Voters   []string `json:"voters"` // member names
	// Proposer revises a rejected proposal between rounds (a role or member
	// address); empty: the next round re-votes with the objections attached.
	Proposer string `json:"proposer,omitempty"`
	// DefaultDecision is the coordinator's decision when every voter
	// abstains (default "REJECT": keep the status quo).
	DefaultDecision string `json:"default_decision,omitempty"`
}

// Tally is the count of one CP-4 round.
type Tally struct {
	Round         int      `json:"round"`
	Votes         int      `json:"votes"`
	Voters        int      `json:"voters"`
	Approvals     int      `json:"approvals"`
	Rejections    int      `json:"rejections"`
	Abstentions   int      `json:"abstentions"`
	Blocks        int      `json:"blocks"`
	ApprovalRatio float64  `json:"approval_ratio"`
	Passed        bool     `json:"passed"`
	Conditions    []string `json:"conditions,omitempty"`
	Rationales    []string `json:"rationales,omitempty"`
}

// TallyVotes applies the seed's tally: approval ratio = approvals / votes
// received (abstentions count in the denominator); the proposal passes when
// the ratio is at least ratio and no vote is a BLOCK-level rejection.
// Conditions are deduplicated in order. votes maps voter → vote.
func TallyVotes(votes map[string]Vote, voters []string, ratio float64) Tally {
	t := Tally{Voters: len(voters)}
	for _, name := range voters {
		v, ok := votes[name]
		if !ok {
			continue
		}
		t.Votes++
		switch v.Vote {
		case VoteApprove:
			t.Approvals++
		case VoteReject:
			t.Rejections++
			if v.Block {
				t.Blocks++
			}
		case VoteAbstain:
			t.Abstentions++
		}
		for _, cnd := range v.Conditions {
			if !slices.Contains(t.Conditions, cnd) {
				t.Conditions = append(t.Conditions, cnd)
			}
		}
		t.Rationales = append(t.Rationales, fmt.Sprintf("%s %s: %s", name, v.Vote, v.Rationale))
	}
	if t.Votes > 0 {
		t.ApprovalRatio = float64(t.Approvals) / float64(t.Votes)
	}
	t.Passed = t.Votes > 0 && t.ApprovalRatio >= ratio && t.Blocks == 0
	return t
}

// CP-4 states.
const (
	p4Voting    = "VOTING"
	p4Revise    = "REVISE"
	p4AwaitUser = "AWAIT_USER"
)

type consensus struct {
	In       ConsensusInput  `json:"in"`
	Round    int             `json:"round"`
	Votes    map[string]Vote `json:"votes,omitempty"`
	Extended int             `json:"extended"`
	Tallies  []Tally         `json:"tallies,omitempty"`
	ReviseN  int             `json:"revise_n,omitempty"`
}

func (p *consensus) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-4"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if err := p.In.Proposal.validate(MsgProposal); err != nil {
		return invalid(op, "proposal", "%v", err)
	}
	if len(p.In.Voters) == 0 || len(p.In.Voters) > MaxMembers {
		return invalid(op, "voters", "1..%d voters required", MaxMembers)
	}
	seen := map[string]bool{}
	for _, v := range p.In.Voters {
		if !ValidName(v) || seen[v] {
			return invalid(op, "voters", "%q is not a valid, unique member name", v)
		}
		seen[v] = true
	}
	if p.In.Proposer != "" {
		if err := ValidateAddress(p.In.Proposer); err != nil {
			return err
		}
	}
	if p.In.DefaultDecision == "" {
		p.In.DefaultDecision = string(VoteReject)
	}
	c.r.MaxIterations = c.r.Config.Consensus.MaxRounds
	p.openRound(c, "proposal broadcast to voters")
	return nil
}

func (p *consensus) openRound(c *ctx, reason string) {
	p.Round++
	c.r.Iteration = p.Round
	p.Votes = nil
	p.Extended = 0
	prop := p.In.Proposal
	prop.Round = p.Round
	prop.Deadline = c.now.Add(c.r.Config.Consensus.Timeout)
	for _, v := range p.In.Voters {
		c.send(v, MsgProposal, fmt.Sprintf("Vote requested: %s (round %d)", prop.Title, p.Round), &prop)
	}
	c.setTimer("deadline", c.r.Config.Consensus.Timeout)
	c.to(p4Voting, reason)
}

func (p *consensus) handle(c *ctx, s signal) error {
	cfg := c.r.Config.Consensus
	switch c.r.State {
	case p4Voting:
		switch {
		case s.kind == sigReport && s.typ == MsgVote:
			v := s.payload.(*Vote)
			switch {
			case v.ProposalID != p.In.Proposal.ID:
				return nil
			case !slices.Contains(p.In.Voters, s.from):
				c.note("ignored vote from non-voter " + s.from)
				return nil
			case p.hasVote(s.from):
				return nil // the first vote of a voter in a round counts
			}
			if p.Votes == nil {
				p.Votes = map[string]Vote{}
			}
			p.Votes[s.from] = *v
			if len(p.Votes) == len(p.In.Voters) {
				c.cancelTimer("deadline")
				return p.tally(c, cfg, "every voter voted")
			}
		case s.kind == sigTimer && s.key == "deadline":
			if len(p.Votes)*2 < len(p.In.Voters) && p.Extended < cfg.Extensions {
				p.Extended++
				c.setTimer("deadline", cfg.Timeout)
				c.note(fmt.Sprintf("deadline: %d of %d votes (< N/2): extend one period", len(p.Votes), len(p.In.Voters)))
				return nil
			}
			c.r.Errors++
			return p.tally(c, cfg, fmt.Sprintf("deadline: count the %d vote(s) received", len(p.Votes)))
		}
	case p4Revise:
		key := fmt.Sprintf("revise-%d", p.ReviseN)
		switch {
		case s.kind == sigReport && s.typ == MsgProposal && (s.key == key || s.key == ""):
			np := s.payload.(*Proposal)
			np.ID = p.In.Proposal.ID
			p.In.Proposal = *np
			c.r.Tasks[key] = withStatus(c.r.Tasks[key], StatusCompleted)
			p.openRound(c, "revised proposal: vote again")
		case s.kind == sigTask && s.key == key && s.status == StatusCompleted:
			p.openRound(c, "proposal revised: vote again")
		case s.kind == sigTask && s.key == key && (s.status == StatusFailed || s.status == StatusCancelled):
			p.openRound(c, "revision failed: vote again on the same proposal")
		}
	case p4AwaitUser:
		if s.kind == sigUser {
			d := strings.ToUpper(strings.TrimSpace(s.reply.Choice))
			if d == "" {
				d = s.reply.Text
			}
			c.record(TeamDecision{Title: p.In.Proposal.Title, Decision: d, DecidedBy: "user", Rationale: s.reply.Text})
			c.finish(OutcomeEscalated, "no quorum after "+fmt.Sprint(p.Round)+" rounds; the user decided "+d, p.data(d))
		}
	}
	return nil
}

func (p *consensus) hasVote(from string) bool { _, ok := p.Votes[from]; return ok }

func (p *consensus) tally(c *ctx, cfg ConsensusConfig, reason string) error {
	t := TallyVotes(p.Votes, p.In.Voters, cfg.ApprovalRatio)
	t.Round = p.Round
	p.Tallies = append(p.Tallies, t)
	summary := fmt.Sprintf("%s: %d/%d approve (ratio %.3f, need %.2f), %d block", reason, t.Approvals, t.Votes, t.ApprovalRatio, cfg.ApprovalRatio, t.Blocks)
	switch {
	case t.Votes > 0 && t.Abstentions == t.Votes:
		c.record(TeamDecision{Title: p.In.Proposal.Title, Decision: p.In.DefaultDecision, DecidedBy: "coordinator", Rationale: "every voter abstained: the coordinator's default decision"})
		c.finish(OutcomeDegraded, "all ABSTAIN: the coordinator decided "+p.In.DefaultDecision, p.data(p.In.DefaultDecision))
	case t.Passed:
		c.record(TeamDecision{Title: p.In.Proposal.Title, Decision: string(VoteApprove), DecidedBy: "vote", Rationale: strings.Join(t.Rationales, "\n"), Constraints: t.Conditions})
		c.finish(OutcomeSuccess, summary, p.data(string(VoteApprove)))
	case p.Round < cfg.MaxRounds:
		c.r.Retries++
		if p.In.Proposer == "" {
			p.openRound(c, summary+"; not passed: vote again with the objections")
			return nil
		}
		p.ReviseN++
		key := fmt.Sprintf("revise-%d", p.ReviseN)
		c.task(key, TaskSpec{Subject: fmt.Sprintf("PROPOSAL-rev-%d", p.ReviseN), Description: "Revise the proposal to address:\n" + strings.Join(t.Rationales, "\n"),
			Owner: memberOf(p.In.Proposer), Role: roleOf(p.In.Proposer), Expect: MsgProposal})
		c.to(p4Revise, summary+"; not passed: the proposer revises")
	default:
		c.ask("decide", fmt.Sprintf("No quorum on %q after %d rounds. Approve or reject?", p.In.Proposal.Title, p.Round), []string{"APPROVE", "REJECT"})
		c.to(p4AwaitUser, summary+"; no quorum in the last round: the user decides")
	}
	return nil
}

func (p *consensus) data(decision string) map[string]any {
	return map[string]any{"proposal_id": p.In.Proposal.ID, "decision": decision, "tallies": p.Tallies}
}

// memberOf and roleOf split an address into a task owner or role.
func memberOf(addr string) string {
	if strings.HasPrefix(addr, RolePrefix) || addr == AddressAll {
		return ""
	}
	return addr
}

func roleOf(addr string) Role {
	if strings.HasPrefix(addr, RolePrefix) {
		return Role(strings.TrimPrefix(addr, RolePrefix))
	}
	return ""
}
