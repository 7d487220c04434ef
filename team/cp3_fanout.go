package team

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Aggregation strategies of CP-3.
const (
	AggregateUnion        = "union"        // every finding (security review: miss nothing)
	AggregateIntersection = "intersection" // findings several workers share (noise reduction)
	AggregateWeighted     = "weighted"     // findings by the reporters' expertise weight
)

// FanOutWorker is one CP-3 worker: its angle and who does it.
type FanOutWorker struct {
	Angle  string  `json:"angle"`
	Member string  `json:"member,omitempty"` // owner; empty: any member of Role
	Role   Role    `json:"role,omitempty"`   // default worker
	Weight float64 `json:"weight,omitempty"` // weighted aggregation; default 1
}

// FanOutInput starts a CP-3 Parallel Fan-out/Fan-in run.
type FanOutInput struct {
	Requirement string         `json:"requirement"`
	Workers     []FanOutWorker `json:"workers"`
	Aggregation string         `json:"aggregation,omitempty"` // default union
	// Voters for the CP-4 run that settles conflicts; default the workers'
	// members.
	Voters []string `json:"voters,omitempty"`
}

// AggregatedFinding is one finding after aggregation.
type AggregatedFinding struct {
	AnalysisFinding
	Reporters []string `json:"reporters"`
	Score     float64  `json:"score"` // share of weight (weighted) or of results
}

// Conflict is a question on which workers took different positions.
type Conflict struct {
	Question  string            `json:"question"`
	Positions map[string]string `json:"positions"` // angle → position
}

// Aggregate is CP-3's fan-in result.
type Aggregate struct {
	Strategy  string              `json:"strategy"`
	Received  []string            `json:"received"` // angles with results
	Missing   []string            `json:"missing,omitempty"`
	Errored   []string            `json:"errored,omitempty"`
	Findings  []AggregatedFinding `json:"findings"`
	Conflicts []Conflict          `json:"conflicts,omitempty"`
	Consensus bool                `json:"consensus"`
	TimedOut  bool                `json:"timed_out,omitempty"`
}

// CP-3 states.
const (
	p3FanOut    = "FAN_OUT"
	p3Consensus = "CONSENSUS"
)

type fanOut struct {
	In       FanOutInput             `json:"in"`
	Results  map[int]*AnalysisResult `json:"results,omitempty"`
	Errored  map[int]string          `json:"errored,omitempty"`
	Agg      *Aggregate              `json:"agg,omitempty"`
	TimedOut bool                    `json:"timed_out,omitempty"`
}

func (p *fanOut) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-3"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if strings.TrimSpace(p.In.Requirement) == "" {
		return invalid(op, "requirement", "required")
	}
	if len(p.In.Workers) == 0 || len(p.In.Workers) > MaxMembers {
		return invalid(op, "workers", "1..%d workers required", MaxMembers)
	}
	switch p.In.Aggregation {
	case "":
		p.In.Aggregation = AggregateUnion
	case AggregateUnion, AggregateIntersection, AggregateWeighted:
	default:
		return invalid(op, "aggregation", "%q is not union, intersection or weighted", p.In.Aggregation)
	}
	for i := range p.In.Workers {
		w := &p.In.Workers[i]
		if w.Angle == "" {
			return invalid(op, fmt.Sprintf("workers[%d].angle", i), "required")
		}
		if math.IsNaN(w.Weight) || w.Weight < 0 {
			return invalid(op, fmt.Sprintf("workers[%d].weight", i), "must be ≥ 0")
		}
		if w.Weight == 0 {
			w.Weight = 1
		}
		w.Role = orRole(w.Role, RoleWorker)
		spec := TaskSpec{Subject: fmt.Sprintf("ANALYZE-%d: %s analysis", i+1, w.Angle),
			Description: fmt.Sprintf("Analyze from %s perspective: %s", w.Angle, p.In.Requirement), Expect: MsgAnalysisResult}
		if w.Member != "" {
			spec.Owner = w.Member
		} else {
			spec.Role = w.Role
		}
		c.task(workerKey(i), spec)
	}
	c.r.MaxIterations = 1
	c.r.Iteration = 1
	c.setTimer("deadline", c.r.Config.FanOut.Timeout)
	c.to(p3FanOut, fmt.Sprintf("fan out to %d workers", len(p.In.Workers)))
	return nil
}

func workerKey(i int) string { return fmt.Sprintf("analyze-%d", i+1) }

func (p *fanOut) worker(s signal) int {
	for i, w := range p.In.Workers {
		if s.key == workerKey(i) || (s.key == "" && s.from != "" && w.Member == s.from) {
			return i
		}
	}
	return -1
}

func (p *fanOut) handle(c *ctx, s signal) error {
	switch c.r.State {
	case p3FanOut:
		if s.kind == sigTimer && s.key == "deadline" {
			p.TimedOut = true
			c.r.Errors++
			return p.fanIn(c, "timeout: aggregate the results that arrived")
		}
		i := p.worker(s)
		if i < 0 || p.Results[i] != nil || p.Errored[i] != "" {
			return nil
		}
		switch {
		case s.kind == sigReport && (s.typ == MsgAnalysisResult || isAngleResult(s.typ)):
			res, ok := s.payload.(*AnalysisResult)
			if !ok {
				res = &AnalysisResult{}
				if raw, isRaw := s.payload.(json.RawMessage); isRaw && len(raw) > 0 {
					_ = json.Unmarshal(raw, res) // lenient for "{angle}_result" user types
				}
			}
			p.setResult(i, res)
		case s.kind == sigTask && s.status == StatusCompleted:
			p.setResult(i, &AnalysisResult{Summary: "completed without a structured result"})
		case s.kind == sigTask && (s.status == StatusFailed || s.status == StatusCancelled):
			if p.Errored == nil {
				p.Errored = map[int]string{}
			}
			p.Errored[i] = string(s.status) + " " + s.errText
			c.note(fmt.Sprintf("worker %s %s: skipped, aggregate N-1", p.In.Workers[i].Angle, s.status))
		default:
			return nil
		}
		alive := len(p.In.Workers) - len(p.Errored)
		if alive == 0 {
			c.finish(OutcomeFailed, "every worker failed", nil)
			return nil
		}
		need := max(1, int(math.Ceil(float64(alive)*c.r.Config.FanOut.QuorumRatio-1e-9)))
		if len(p.Results) >= need {
			return p.fanIn(c, fmt.Sprintf("quorum: %d of %d live workers reported (need %d)", len(p.Results), alive, need))
		}
	case p3Consensus:
		if s.kind == sigChild {
			st := OutcomeDegraded
			if s.child.Status == OutcomeSuccess && len(p.Agg.Missing) == 0 && len(p.Agg.Errored) == 0 {
				st = OutcomeSuccess
			}
			if s.child.Status == OutcomeFailed {
				st = OutcomeFailed
			}
			c.finish(st, "conflicts settled by CP-4: "+string(s.child.Status)+" ("+s.child.Summary+")", p.Agg)
		}
	}
	return nil
}

// isAngleResult: the seed's "{angle}_result" message types (user-defined).
func isAngleResult(t MessageType) bool {
	return strings.HasSuffix(string(t), "_result") && t != MsgTestResult && t != MsgReviewResult
}

func (p *fanOut) setResult(i int, r *AnalysisResult) {
	if p.Results == nil {
		p.Results = map[int]*AnalysisResult{}
	}
	p.Results[i] = r
}

func (p *fanOut) fanIn(c *ctx, reason string) error {
	c.cancelTimer("deadline")
	agg := AggregateResults(p.In.Workers, p.Results, p.Errored, p.In.Aggregation, c.r.Config.FanOut)
	agg.TimedOut = p.TimedOut
	p.Agg = &agg
	for _, m := range agg.Missing {
		c.note("missing angle: " + m)
	}
	if len(agg.Received) == 0 {
		c.finish(OutcomeFailed, reason+"; no worker delivered", agg)
		return nil
	}
	if len(agg.Conflicts) > 0 {
		voters := p.In.Voters
		if len(voters) == 0 {
			for _, w := range p.In.Workers {
				if w.Member != "" && !slices.Contains(voters, w.Member) {
					voters = append(voters, w.Member)
				}
			}
		}
		if len(voters) == 0 {
			c.finish(OutcomeDegraded, reason+fmt.Sprintf("; %d conflict(s) and no voters to settle them", len(agg.Conflicts)), agg)
			return nil
		}
		if err := c.startChild("consensus", CP4, ConsensusInput{Proposal: conflictProposal(c.r.ID, agg.Conflicts), Voters: voters}, "conflicting results"); err != nil {
			return err
		}
		c.to(p3Consensus, reason+fmt.Sprintf("; %d conflict(s): CP-4 consensus", len(agg.Conflicts)))
		return nil
	}
	st := OutcomeSuccess
	if len(agg.Missing) > 0 || len(agg.Errored) > 0 {
		st = OutcomeDegraded
	}
	c.finish(st, reason+fmt.Sprintf("; %d finding(s), %d missing angle(s)", len(agg.Findings), len(agg.Missing)), agg)
	return nil
}

func conflictProposal(runID string, cs []Conflict) Proposal {
	first := cs[0]
	var opts []ProposalOption
	seen := map[string]bool{}
	for _, angle := range slices.Sorted(maps.Keys(first.Positions)) {
		pos := first.Positions[angle]
		if !seen[pos] {
			seen[pos] = true
			opts = append(opts, ProposalOption{ID: fmt.Sprintf("%c", 'A'+len(opts)), Description: pos, Pros: []string{"held by " + angle}})
		}
	}
	var qs []string
	for _, c := range cs {
		qs = append(qs, c.Question)
	}
	return Proposal{ID: "PROPOSAL-" + runID, Title: "Settle: " + strings.Join(qs, ", "), Options: opts, Context: "CP-3 workers disagree"}
}

// AggregateResults is CP-3's fan-in: the findings of the received results by
// strategy, the missing and errored angles, and the conflicts (questions
// whose claimed positions differ). Deterministic: findings sorted by score,
// severity, then key.
func AggregateResults(workers []FanOutWorker, results map[int]*AnalysisResult, errored map[int]string, strategy string, cfg FanOutConfig) Aggregate {
	agg := Aggregate{Strategy: strategy}
	type acc struct {
		f         AnalysisFinding
		reporters []string
		weight    float64
	}
	found := map[string]*acc{}
	var order []string
	totalWeight := 0.0
	positions := map[string]map[string]string{}
	for i, w := range workers {
		r, ok := results[i]
		switch {
		case ok:
			agg.Received = append(agg.Received, w.Angle)
		case errored[i] != "":
			agg.Errored = append(agg.Errored, w.Angle)
			continue
		default:
			agg.Missing = append(agg.Missing, w.Angle)
			continue
		}
		weight := w.Weight
		if weight == 0 {
			weight = 1
		}
		totalWeight += weight
		seen := map[string]bool{}
		for _, f := range r.Findings {
			k := f.Key()
			if seen[k] {
				continue
			}
			seen[k] = true
			a := found[k]
			if a == nil {
				a = &acc{f: f}
				found[k] = a
				order = append(order, k)
			} else if sevRank(f.Severity) < sevRank(a.f.Severity) {
				a.f.Severity = f.Severity
			}
			a.reporters = append(a.reporters, w.Angle)
			a.weight += weight
		}
		for q, pos := range r.Claims {
			if positions[q] == nil {
				positions[q] = map[string]string{}
			}
			positions[q][w.Angle] = pos
		}
	}
	n := len(agg.Received)
	minShared := min(cfg.IntersectionMin, n)
	for _, k := range order {
		a := found[k]
		af := AggregatedFinding{AnalysisFinding: a.f, Reporters: a.reporters}
		switch strategy {
		case AggregateIntersection:
			af.Score = float64(len(a.reporters)) / float64(n)
			if len(a.reporters) < minShared {
				continue
			}
		case AggregateWeighted:
			af.Score = a.weight / totalWeight
			if af.Score < cfg.WeightedThreshold-1e-12 {
				continue
			}
		default:
			af.Score = float64(len(a.reporters)) / float64(n)
		}
		agg.Findings = append(agg.Findings, af)
	}
	slices.SortStableFunc(agg.Findings, func(a, b AggregatedFinding) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(sevRank(a.Severity), sevRank(b.Severity)); c != 0 {
			return c
		}
		return cmp.Compare(a.Key(), b.Key())
	})
	for _, q := range slices.Sorted(maps.Keys(positions)) {
		ps := positions[q]
		distinct := map[string]bool{}
		for _, v := range ps {
			distinct[v] = true
		}
		if len(distinct) > 1 {
			agg.Conflicts = append(agg.Conflicts, Conflict{Question: q, Positions: ps})
		}
	}
	agg.Consensus = len(agg.Conflicts) == 0
	return agg
}

// sevRank orders severities with unknown ones last.
func sevRank(s Severity) int {
	if r := s.Rank(); r >= 0 {
		return r
	}
	return len(Severities)
}
