package explore

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of them, so
// callers can branch with errors.Is and render the typed error for the user.
var (
	// ErrInvalidStrategy is wrapped by every *StrategyError.
	ErrInvalidStrategy = errors.New("invalid strategy")
	// ErrUnknownPhase: a transition, rule or state names a phase the strategy does not define.
	ErrUnknownPhase = errors.New("unknown phase")
	// ErrMissingTerminal: a strategy needs at least one working phase and a terminal (last) phase.
	ErrMissingTerminal = errors.New("missing terminal phase")
	// ErrDuplicatePhase: two phases share a name.
	ErrDuplicatePhase = errors.New("duplicate phase")
	// ErrDuplicateTransition: the same from→to transition is defined twice.
	ErrDuplicateTransition = errors.New("duplicate transition")
	// ErrBackwardTransition: a transition targets the same or an earlier phase.
	ErrBackwardTransition = errors.New("transition does not move forward")
	// ErrTerminalTransition: a transition leaves the terminal phase.
	ErrTerminalTransition = errors.New("transition out of the terminal phase")
	// ErrUnreachablePhase: a working phase no transition leads to.
	ErrUnreachablePhase = errors.New("phase is unreachable")
	// ErrDeadEndPhase: a working phase with no transition out.
	ErrDeadEndPhase = errors.New("phase has no transition out")
	// ErrBadCondition: a condition does not parse (see *ConditionError).
	ErrBadCondition = errors.New("bad condition")
	// ErrUnknownName: a condition or text placeholder names no metric or budget value.
	ErrUnknownName = errors.New("unknown metric or budget name")
	// ErrBadToolChoice: a tool-choice mode other than auto, required or none.
	ErrBadToolChoice = errors.New("bad tool choice")
	// ErrBadToolKind: a tool kind this package does not know.
	ErrBadToolKind = errors.New("bad tool kind")
	// ErrBadNudgeKind: a nudge kind or text key this package does not know.
	ErrBadNudgeKind = errors.New("bad nudge kind")
	// ErrBadValue: a number out of range (negative count, fraction outside 0..1…).
	ErrBadValue = errors.New("value out of range")
	// ErrInvalidTOML: TOML that does not parse or does not fit the schema.
	ErrInvalidTOML = errors.New("invalid TOML")
	// ErrUnknownKey: a TOML key the schema does not define (usually a typo).
	ErrUnknownKey = errors.New("unknown key")
	// ErrInvalidBudget is wrapped by every *BudgetError.
	ErrInvalidBudget = errors.New("invalid budget")
	// ErrInvalidToolCall: a tool call without a name or with an unknown status.
	ErrInvalidToolCall = errors.New("invalid tool call")
	// ErrInvalidEvent is wrapped by every *EventError.
	ErrInvalidEvent = errors.New("invalid event")
	// ErrUnknownEventType: a replay event whose type is not one of the schema's.
	ErrUnknownEventType = errors.New("unknown event type")
	// ErrInvalidState: a snapshot that cannot be restored.
	ErrInvalidState = errors.New("invalid tracker state")
	// ErrUnknownStrategy: no built-in strategy has that name.
	ErrUnknownStrategy = errors.New("unknown strategy")
)

// StrategyError reports why a strategy is invalid. Field is a path into the
// strategy such as "transition[1].on_metrics" or "phase[EXPLORE].choice[0]".
type StrategyError struct {
	Strategy string
	Field    string
	Err      error
}

func (e *StrategyError) Error() string {
	name := e.Strategy
	if name == "" {
		name = "(unnamed)"
	}
	if e.Field == "" {
		return fmt.Sprintf("strategy %s: %v", name, e.Err)
	}
	return fmt.Sprintf("strategy %s: %s: %v", name, e.Field, e.Err)
}

// Unwrap returns the cause and ErrInvalidStrategy.
func (e *StrategyError) Unwrap() []error { return []error{e.Err, ErrInvalidStrategy} }

// ConditionError reports a condition that does not parse, with the byte offset
// of the problem.
type ConditionError struct {
	Input string
	Pos   int
	Msg   string
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("condition %q at offset %d: %s", e.Input, e.Pos, e.Msg)
}

// Unwrap returns ErrBadCondition.
func (e *ConditionError) Unwrap() error { return ErrBadCondition }

// BudgetError reports an invalid budget field.
type BudgetError struct {
	Field string
	Value any
	Msg   string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget %s = %v: %s", e.Field, e.Value, e.Msg)
}

// Unwrap returns ErrInvalidBudget and ErrBadValue.
func (e *BudgetError) Unwrap() []error { return []error{ErrInvalidBudget, ErrBadValue} }

// EventError reports a replay event that does not parse, naming its line
// (1-based) in the JSON-lines input.
type EventError struct {
	Line int
	Err  error
}

func (e *EventError) Error() string { return fmt.Sprintf("event line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause and ErrInvalidEvent.
func (e *EventError) Unwrap() []error { return []error{e.Err, ErrInvalidEvent} }

// StateError reports a snapshot that cannot be restored.
type StateError struct {
	Field string
	Err   error
}

func (e *StateError) Error() string { return fmt.Sprintf("tracker state %s: %v", e.Field, e.Err) }

// Unwrap returns the cause and ErrInvalidState.
func (e *StateError) Unwrap() []error { return []error{e.Err, ErrInvalidState} }
