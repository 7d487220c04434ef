package explore

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
)

// Counters are the tracker's counters. The *InPhase counters, PhaseRounds,
// RoundsSinceNewInfo, RoundsSinceSubmit and ConsecutiveIdleRounds restart at
// every phase change.
type Counters struct {
	Iteration             int `json:"iteration"`
	PhaseRounds           int `json:"phase_rounds"`
	SearchRoundsInPhase   int `json:"search_rounds_in_phase"`
	ReadRoundsInPhase     int `json:"read_rounds_in_phase"`
	ToolRoundsInPhase     int `json:"tool_rounds_in_phase"`
	RoundsSinceNewInfo    int `json:"rounds_since_new_info"`
	RoundsSinceSubmit     int `json:"rounds_since_submit"`
	ConsecutiveIdleRounds int `json:"consecutive_idle_rounds"`
	TotalToolCalls        int `json:"total_tool_calls"`
	ObservedCalls         int `json:"observed_calls"` // calls with status ok
	SubmitCount           int `json:"submit_count"`
	FindingCount          int `json:"finding_count"`
	VerifiedFindingCount  int `json:"verified_finding_count"`
	DepthSlottedFindings  int `json:"depth_slotted_finding_count"`
	EvidenceCount         int `json:"evidence_count"`
	RoundsEnded           int `json:"rounds_ended"`
	NewInfoRounds         int `json:"new_info_rounds"`
	Thoughts              int `json:"thoughts"`
}

func (c *Counters) resetPhase() {
	c.PhaseRounds, c.SearchRoundsInPhase, c.ReadRoundsInPhase, c.ToolRoundsInPhase = 0, 0, 0, 0
	c.RoundsSinceNewInfo, c.RoundsSinceSubmit, c.ConsecutiveIdleRounds = 0, 0, 0
}

func (c *Counters) valid() bool {
	for _, v := range []int{c.Iteration, c.PhaseRounds, c.SearchRoundsInPhase, c.ReadRoundsInPhase,
		c.ToolRoundsInPhase, c.RoundsSinceNewInfo, c.RoundsSinceSubmit, c.ConsecutiveIdleRounds,
		c.TotalToolCalls, c.ObservedCalls, c.SubmitCount, c.FindingCount, c.VerifiedFindingCount,
		c.DepthSlottedFindings, c.EvidenceCount, c.RoundsEnded, c.NewInfoRounds, c.Thoughts} {
		if v < 0 {
			return false
		}
	}
	return true
}

// KeySet is a set of normalised keys (files, patterns, queries). It encodes
// to JSON as a sorted array.
type KeySet map[string]struct{}

// MarshalJSON encodes the set as a sorted array.
func (s KeySet) MarshalJSON() ([]byte, error) {
	keys := slices.Sorted(maps.Keys(s))
	if keys == nil {
		keys = []string{}
	}
	return json.Marshal(keys)
}

// UnmarshalJSON decodes a JSON array.
func (s *KeySet) UnmarshalJSON(b []byte) error {
	var keys []string
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	m := make(KeySet, len(keys))
	for _, k := range keys {
		m[k] = struct{}{}
	}
	*s = m
	return nil
}

func (s KeySet) add(k string) bool {
	if _, ok := s[k]; ok {
		return false
	}
	s[k] = struct{}{}
	return true
}

// Metrics is a snapshot of a session for callers, viewers and the outcome link.
type Metrics struct {
	Counters
	Strategy       string            `json:"strategy"`
	Pipeline       string            `json:"pipeline"`
	Phase          string            `json:"phase"`
	UniqueFiles    int               `json:"unique_files"`
	UniquePatterns int               `json:"unique_patterns"`
	UniqueQueries  int               `json:"unique_queries"`
	NewInfoRate    float64           `json:"new_info_rate"` // new_info_rounds / rounds_ended
	GracefulExit   bool              `json:"graceful_exit"`
	Exit           ExitReason        `json:"exit,omitempty"`
	Transitions    int               `json:"transitions"`
	Nudges         map[NudgeKind]int `json:"nudges,omitempty"`
	Plan           PlanProgress      `json:"plan"`
}

// metricNames are the metric names conditions and texts may use.
var metricNames = []string{
	"iteration", "phase_rounds", "search_rounds_in_phase", "read_rounds_in_phase",
	"tool_rounds_in_phase", "rounds_since_new_info", "rounds_since_submit",
	"consecutive_idle_rounds", "total_tool_calls", "submit_count", "finding_count",
	"verified_finding_count", "depth_slotted_finding_count", "evidence_count",
	"effective_findings", "finding_target", "unique_files", "unique_patterns",
	"unique_queries", "rounds_left", "rounds_ended", "new_info_rounds",
	"plan_steps", "plan_covered_steps", "plan_deviation", "replans",
}

// budgetNames are the budget names conditions and texts may use.
var budgetNames = []string{
	"max_iterations", "search_budget", "read_budget", "search_budget_grace", "max_submits",
	"soft_submit_limit", "idle_rounds_to_exit", "terminal_grace_rounds", "hard_exit_rounds",
}

// MetricNames lists the metric names available to conditions and texts.
func MetricNames() []string { return slices.Clone(metricNames) }

// BudgetNames lists the budget names available to conditions and texts.
func BudgetNames() []string { return slices.Clone(budgetNames) }

var knownNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range metricNames {
		m[n] = true
	}
	for _, n := range budgetNames {
		m[n] = true
	}
	return m
}()

func knownName(n string) bool { return knownNames[n] }

func (t *Tracker) value(name string) float64 {
	v, _ := t.lookup(name)
	return v
}

// lookup resolves a metric or budget name.
func (t *Tracker) lookup(name string) (float64, bool) {
	c, b := &t.s.Counters, &t.s.Budget
	var v int
	switch name {
	case "iteration":
		v = c.Iteration
	case "phase_rounds":
		v = c.PhaseRounds
	case "search_rounds_in_phase":
		v = c.SearchRoundsInPhase
	case "read_rounds_in_phase":
		v = c.ReadRoundsInPhase
	case "tool_rounds_in_phase":
		v = c.ToolRoundsInPhase
	case "rounds_since_new_info":
		v = c.RoundsSinceNewInfo
	case "rounds_since_submit":
		v = c.RoundsSinceSubmit
	case "consecutive_idle_rounds":
		v = c.ConsecutiveIdleRounds
	case "total_tool_calls":
		v = c.TotalToolCalls
	case "submit_count":
		v = c.SubmitCount
	case "finding_count":
		v = c.FindingCount
	case "verified_finding_count":
		v = c.VerifiedFindingCount
	case "depth_slotted_finding_count":
		v = c.DepthSlottedFindings
	case "evidence_count":
		v = c.EvidenceCount
	case "effective_findings":
		return t.effectiveFindings(), true
	case "finding_target":
		return float64(t.findingTarget()), true
	case "unique_files":
		v = len(t.s.Files)
	case "unique_patterns":
		v = len(t.s.Patterns)
	case "unique_queries":
		v = len(t.s.Queries)
	case "rounds_left":
		v = max(b.MaxIterations-c.Iteration, 0)
	case "rounds_ended":
		v = c.RoundsEnded
	case "new_info_rounds":
		v = c.NewInfoRounds
	case "plan_steps":
		v = len(t.s.Plan.Steps)
	case "plan_covered_steps":
		v = t.s.Plan.covered()
	case "plan_deviation":
		return math.Round(t.s.Plan.deviation()*100) / 100, true
	case "replans":
		v = t.s.Plan.Replans
	case "max_iterations":
		v = b.MaxIterations
	case "search_budget":
		v = b.SearchBudget
	case "read_budget":
		v = b.ReadBudget
	case "search_budget_grace":
		v = b.SearchBudgetGrace
	case "max_submits":
		v = b.MaxSubmits
	case "soft_submit_limit":
		v = b.SoftSubmitLimit
	case "idle_rounds_to_exit":
		v = b.IdleRoundsToExit
	case "terminal_grace_rounds":
		v = b.TerminalGraceRounds
	case "hard_exit_rounds":
		v = b.HardExitRounds
	default:
		return 0, false
	}
	return float64(v), true
}

// effectiveFindings is the evidence-gated finding count: verified findings,
// with each depth-slotted one worth 1.5: base + 0.5·min(depth, base).
func (t *Tracker) effectiveFindings() float64 {
	c := &t.s.Counters
	base := min(c.VerifiedFindingCount, c.FindingCount)
	return float64(base) + 0.5*float64(min(c.DepthSlottedFindings, base))
}

// findingTarget is max(3, ceil(evidence/2)), clamped to max(3, 2·unique_files).
func (t *Tracker) findingTarget() int {
	target := max(3, (t.s.Counters.EvidenceCount+1)/2)
	return min(target, max(3, 2*len(t.s.Files)))
}
