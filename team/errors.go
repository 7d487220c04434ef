package team

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error this package returns wraps one of them, so a
// caller branches with errors.Is and renders the typed error for the user.
var (
	// ErrInvalid is wrapped by every *ValidationError: bad input.
	ErrInvalid = errors.New("invalid input")
	// ErrCycle: the blocked_by edges of a task graph form a cycle (see *CycleError).
	ErrCycle = errors.New("dependency cycle")
	// ErrUnknownTask: a task id or run-local task key that does not exist.
	ErrUnknownTask = errors.New("unknown task")
	// ErrTransition: a task status change the transition table does not allow.
	ErrTransition = errors.New("illegal task transition")
	// ErrNotEligible: a member may not claim a task (role, owner or capabilities).
	ErrNotEligible = errors.New("member not eligible for task")
	// ErrNotReady: the task is not in the ready set (status, dependencies, pause).
	ErrNotReady = errors.New("task not ready")
	// ErrStaleEpoch: a report or heartbeat carries a lease epoch that is not
	// the task's current one (see *FenceError).
	ErrStaleEpoch = errors.New("stale lease epoch")
	// ErrLeaseExpired: a heartbeat or report after the lease ran out.
	ErrLeaseExpired = errors.New("lease expired")
	// ErrNotHolder: a heartbeat or report from a member that does not hold the lease.
	ErrNotHolder = errors.New("not the lease holder")
	// ErrUnknownType: a message type no registry entry knows where one is required.
	ErrUnknownType = errors.New("unknown message type")
	// ErrPayload is wrapped by every *PayloadError: a message payload that
	// does not fit its type's schema.
	ErrPayload = errors.New("invalid message payload")
	// ErrDelivery: a delivery state change that goes backwards or skips.
	ErrDelivery = errors.New("illegal delivery transition")
	// ErrUnknownPattern: a pattern id other than CP-1 … CP-10.
	ErrUnknownPattern = errors.New("unknown collaboration pattern")
	// ErrRunFinished: an event for a run that has already ended.
	ErrRunFinished = errors.New("pattern run already finished")
	// ErrTimerNotDue: a timer event delivered before its scheduled time.
	ErrTimerNotDue = errors.New("timer not due")
	// ErrBadEvent: an event whose kind and fields do not match.
	ErrBadEvent = errors.New("malformed event")
	// ErrBadRun: a persisted run that cannot be resumed (corrupt state).
	ErrBadRun = errors.New("corrupt pattern run")
	// ErrSwarmActive: a second CP-7 swarm while one is running (CP-7 is not re-entrant).
	ErrSwarmActive = errors.New("a swarm (CP-7) is already active")
	// ErrComposition: a pattern may not start another in that way (nesting,
	// escalation, degradation rules) or CP-10 before the team's tasks ended.
	ErrComposition = errors.New("composition rule violated")
	// ErrCoordinator: a coordinator event that the current state does not accept.
	ErrCoordinator = errors.New("illegal coordinator transition")
	// ErrLimit: a spending limit (concurrent command workers, runs per hour,
	// tokens, cost) would be exceeded (see *LimitError).
	ErrLimit = errors.New("spending limit exceeded")
)

// ValidationError names the operation, the field and the problem of a bad input.
type ValidationError struct {
	Op     string // e.g. "validate task", "start CP-4"
	Field  string // e.g. "subject", "blocked_by[2]"
	Reason string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Reason)
	}
	return fmt.Sprintf("%s: %s: %s", e.Op, e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

func invalid(op, field, format string, args ...any) error {
	return &ValidationError{Op: op, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// CycleError reports a dependency cycle by the task ids along it; the first
// id is repeated at the end ("a → b → c → a").
type CycleError struct {
	Cycle []string
}

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Cycle, " → ")
}

// Unwrap makes errors.Is(err, ErrCycle) true.
func (e *CycleError) Unwrap() error { return ErrCycle }

// TransitionError reports a refused task status change.
type TransitionError struct {
	Task     string
	From, To TaskStatus
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("task %q: %s → %s is not allowed", e.Task, e.From, e.To)
}

// Unwrap makes errors.Is(err, ErrTransition) true.
func (e *TransitionError) Unwrap() error { return ErrTransition }

// FenceError reports a report or heartbeat whose lease epoch is stale: the
// task was re-leased since, so the sender's work must be discarded.
type FenceError struct {
	Task    string
	Got     int64
	Current int64
}

func (e *FenceError) Error() string {
	return fmt.Sprintf("task %q: lease epoch %d is stale (current %d): the task was re-leased; drop this work", e.Task, e.Got, e.Current)
}

// Unwrap makes errors.Is(err, ErrStaleEpoch) true.
func (e *FenceError) Unwrap() error { return ErrStaleEpoch }

// EligibilityError says why a member may not claim a task.
type EligibilityError struct {
	Task, Member string
	Reason       string
}

func (e *EligibilityError) Error() string {
	return fmt.Sprintf("member %q may not claim task %q: %s", e.Member, e.Task, e.Reason)
}

// Unwrap makes errors.Is(err, ErrNotEligible) true.
func (e *EligibilityError) Unwrap() error { return ErrNotEligible }

// PayloadError reports a message payload that does not fit its type.
type PayloadError struct {
	Type   MessageType
	Field  string
	Reason string
}

func (e *PayloadError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("message %s: %s", e.Type, e.Reason)
	}
	return fmt.Sprintf("message %s: %s: %s", e.Type, e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrPayload) true.
func (e *PayloadError) Unwrap() error { return ErrPayload }

// LimitError reports which spending limit a request would exceed.
type LimitError struct {
	Limit string // "concurrent_command_workers", "runs_per_hour", "tokens", "cost"
	Used  float64
	Want  float64
	Max   float64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s limit: %g used + %g requested > %g allowed; raise the limit in the team config or wait", e.Limit, e.Used, e.Want, e.Max)
}

// Unwrap makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Unwrap() error { return ErrLimit }
