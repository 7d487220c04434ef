package team

import (
	"fmt"
	"slices"
	"time"
)

// Coordinator FSM states (the seed's PLAN → EXECUTE → VALIDATE → DONE, with
// a blocked branch from the three working states).
const (
	CoordPlan     = "PLAN"
	CoordExecute  = "EXECUTE"
	CoordValidate = "VALIDATE"
	CoordDone     = "DONE"
	CoordBlocked  = "BLOCKED"
)

// CoordinatorEventKind is what moves the coordinator.
type CoordinatorEventKind string

// Coordinator events.
const (
	CoordPlanApproved     CoordinatorEventKind = "plan_approved"
	CoordExecutionDone    CoordinatorEventKind = "execution_complete"
	CoordValidationPassed CoordinatorEventKind = "validation_passed"
	CoordValidationFailed CoordinatorEventKind = "validation_failed"
	CoordBlockedEvent     CoordinatorEventKind = "blocked"
	CoordUnblocked        CoordinatorEventKind = "unblocked"
	CoordNewRequirement   CoordinatorEventKind = "new_requirement"
)

// BlockInfo describes a blocker, for choosing between CP-5 and CP-7.
type BlockInfo struct {
	Issue string `json:"issue"`
	// Critical: a critical-path task is blocked beyond the threshold.
	Critical bool `json:"critical"`
	// SelfRepairFailed and SpecialistFailed: L0 and L1 were tried.
	SelfRepairFailed bool `json:"self_repair_failed"`
	SpecialistFailed bool `json:"specialist_failed"`
	// Downstream counts the tasks waiting on the blocked one.
	Downstream int `json:"downstream"`
	// SwarmActive: a CP-7 run is already active for the team.
	SwarmActive bool `json:"swarm_active"`
}

// ChooseUnblock applies the seed's entry conditions: CP-7 Swarming when a
// critical task is blocked, self-repair and L1 escalation both failed and
// several (≥ 2) downstream tasks are affected — unless a swarm is already
// active (CP-7 is not re-entrant); otherwise CP-5 Escalation.
func ChooseUnblock(b BlockInfo) PatternID {
	if b.Critical && b.SelfRepairFailed && b.SpecialistFailed && b.Downstream >= 2 && !b.SwarmActive {
		return CP7
	}
	return CP5
}

// CoordinatorEvent is one input of the coordinator FSM.
type CoordinatorEvent struct {
	Kind  CoordinatorEventKind `json:"kind"`
	Cause string               `json:"cause"`
	Block *BlockInfo           `json:"block,omitempty"`
}

// CoordinatorTransition records one state change with its cause and the
// patterns to start on entering the new state.
type CoordinatorTransition struct {
	At    time.Time            `json:"at"`
	From  string               `json:"from"`
	To    string               `json:"to"`
	Event CoordinatorEventKind `json:"event"`
	Cause string               `json:"cause"`
	Start []PatternID          `json:"start,omitempty"`
}

// Coordinator is the coordinator FSM's state: where it is, where a blocker
// interrupted it, the selected patterns and every transition.
type Coordinator struct {
	State       string                  `json:"state"`
	Resume      string                  `json:"resume,omitempty"` // state to return to when unblocked
	Patterns    []PatternID             `json:"patterns"`
	Transitions []CoordinatorTransition `json:"transitions"`
}

// statePatterns: the optional pattern of each state (the seed's FSM).
var statePatterns = map[string]PatternID{CoordPlan: CP4, CoordExecute: CP6, CoordValidate: CP2, CoordDone: CP10}

// NewCoordinator starts the FSM at PLAN for a new requirement with the
// selected patterns (see SelectPatterns).
func NewCoordinator(patterns []PatternID, cause string, now time.Time) Coordinator {
	c := Coordinator{Patterns: slices.Clone(patterns)}
	t := CoordinatorTransition{At: now, From: "", To: CoordPlan, Event: CoordNewRequirement, Cause: cause, Start: c.starts(CoordPlan)}
	c.State = CoordPlan
	c.Transitions = []CoordinatorTransition{t}
	return c
}

func (c Coordinator) starts(state string) []PatternID {
	var out []PatternID
	if state == CoordPlan && slices.Contains(c.Patterns, CP1) {
		out = append(out, CP1) // the base pipeline spans the whole requirement
	}
	if p, ok := statePatterns[state]; ok && slices.Contains(c.Patterns, p) {
		out = append(out, p)
	}
	return out
}

// CoordinatorStep is the FSM's pure transition function. It returns the new
// state and the recorded transition, or an error wrapping ErrCoordinator
// when the event is not allowed in the current state.
func CoordinatorStep(c Coordinator, ev CoordinatorEvent, now time.Time) (Coordinator, CoordinatorTransition, error) {
	to := ""
	var start []PatternID
	resume := c.Resume
	switch {
	case ev.Kind == CoordPlanApproved && c.State == CoordPlan:
		to = CoordExecute
	case ev.Kind == CoordExecutionDone && c.State == CoordExecute:
		to = CoordValidate
	case ev.Kind == CoordValidationPassed && c.State == CoordValidate:
		to = CoordDone
	case ev.Kind == CoordValidationFailed && c.State == CoordValidate:
		to = CoordExecute
	case ev.Kind == CoordBlockedEvent && (c.State == CoordPlan || c.State == CoordExecute || c.State == CoordValidate):
		if ev.Block == nil {
			return c, CoordinatorTransition{}, fmt.Errorf("%w: a blocked event needs block info", ErrCoordinator)
		}
		to, resume = CoordBlocked, c.State
		start = []PatternID{ChooseUnblock(*ev.Block)}
	case ev.Kind == CoordUnblocked && c.State == CoordBlocked:
		to, resume = c.Resume, ""
	case ev.Kind == CoordNewRequirement && c.State == CoordDone:
		to = CoordPlan
	default:
		return c, CoordinatorTransition{}, fmt.Errorf("%w: %s in state %s", ErrCoordinator, ev.Kind, c.State)
	}
	if start == nil && ev.Kind != CoordUnblocked {
		start = c.starts(to)
	}
	t := CoordinatorTransition{At: now, From: c.State, To: to, Event: ev.Kind, Cause: ev.Cause, Start: start}
	c.Transitions = append(slices.Clone(c.Transitions), t)
	c.State, c.Resume = to, resume
	return c, t, nil
}

// Route is one row of the coordinator's message routing table.
type Route struct {
	Type     MessageType `json:"type"`
	Patterns []PatternID `json:"patterns"`
	Action   string      `json:"action"`
	// When narrows the row (review_result routes to CP-2 only on BLOCK).
	When string `json:"when,omitempty"`
}

// RoutingTable returns the seed's routing table plus the reference's
// test_result row, as data.
func RoutingTable() []Route {
	return []Route{
		{MsgPlanReady, []PatternID{CP1}, "approve the plan (plan_approved / plan_revision) → notify the executor", ""},
		{MsgImplComplete, []PatternID{CP1, CP6}, "unlock TEST/REVIEW or the next increment", ""},
		{MsgTestResult, []PatternID{CP1}, "≥ 95 % → complete TEST; < 95 % after 5 iterations → error, user", ""},
		{MsgReviewResult, []PatternID{CP2}, "create a fix task → start the Review-Fix Cycle", "verdict BLOCK"},
		{MsgVote, []PatternID{CP4}, "collect votes → decide at quorum", ""},
		{MsgEscalate, []PatternID{CP5}, "route to the next level's handler", ""},
		{MsgIncrementReady, []PatternID{CP6}, "check the increment gate → allow or reject", ""},
		{MsgSwarmJoin, []PatternID{CP7}, "pause other tasks → aggregate diagnoses", ""},
		{MsgConsultRequest, []PatternID{CP8}, "route to a specialist or the CLI tool", ""},
		{MsgSyncCheckpoint, []PatternID{CP9}, "check the two tracks' alignment", ""},
		{MsgRetroFinding, []PatternID{CP10}, "collect retrospectives → write the report", ""},
	}
}

// RouteFor finds the routing row of a message given its decoded payload
// (from Registry.Decode). ok is false when no row applies, e.g. a
// review_result that does not BLOCK.
func RouteFor(t MessageType, payload any) (Route, bool) {
	for _, r := range RoutingTable() {
		if r.Type != t {
			continue
		}
		if t == MsgReviewResult {
			rr, ok := payload.(*ReviewResult)
			if !ok || rr.Verdict != VerdictBlock {
				return Route{}, false
			}
		}
		return r, true
	}
	return Route{}, false
}
