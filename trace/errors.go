package trace

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them, so
// callers can branch with errors.Is and render a clear message.
var (
	// ErrInvalidTrace is wrapped by validation errors of an ExecutionTrace.
	ErrInvalidTrace = errors.New("invalid execution trace")
	// ErrInvalidAttempt is wrapped by validation errors of an Attempt.
	ErrInvalidAttempt = errors.New("invalid attempt")
	// ErrInvalidRecord is wrapped by validation errors of an ExecutionRecord.
	ErrInvalidRecord = errors.New("invalid execution record")
	// ErrInvalidPattern is wrapped by validation errors of a FailurePattern.
	ErrInvalidPattern = errors.New("invalid failure pattern")
	// ErrInvalidEvent is wrapped by validation errors of a session Event.
	ErrInvalidEvent = errors.New("invalid session event")
	// ErrInvalidState: a serialised state (grouper, assembler, session
	// warnings) that cannot be restored.
	ErrInvalidState = errors.New("invalid state")
	// ErrInvalidConfig: a configuration value out of range.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrInvalidExpectation: a self-verification expectation that cannot
	// be evaluated (bad regular expression, nothing to check).
	ErrInvalidExpectation = errors.New("invalid expectation")
	// ErrInvalidPeriod: a review period whose end is not after its start.
	ErrInvalidPeriod = errors.New("invalid period")
	// ErrEmptyCommand: a command with no program to run.
	ErrEmptyCommand = errors.New("empty command")
	// ErrTooLarge: a value above one of the documented size bounds.
	ErrTooLarge = errors.New("value too large")
)

// ValidationError names the object and field that failed validation.
// Object is a path such as "trace" or "trace.attempts[2]"; Err is one of the
// sentinels above (and possibly ErrTooLarge as well).
type ValidationError struct {
	Object string
	Field  string
	Msg    string
	Err    error
	// Size is set when the value is too large (its length or count).
	Size int
}

func (e *ValidationError) Error() string {
	where := e.Object
	if e.Field != "" {
		where += "." + e.Field
	}
	return fmt.Sprintf("%v: %s: %s", e.Err, where, e.Msg)
}

// Unwrap returns the sentinel, and ErrTooLarge when the value is too large.
func (e *ValidationError) Unwrap() []error {
	if e.Size > 0 {
		return []error{e.Err, ErrTooLarge}
	}
	return []error{e.Err}
}

func invalid(sentinel error, object, field, format string, args ...any) *ValidationError {
	return &ValidationError{Object: object, Field: field, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func tooLarge(sentinel error, object, field string, size, limit int) *ValidationError {
	return &ValidationError{Object: object, Field: field, Err: sentinel, Size: size,
		Msg: fmt.Sprintf("size %d exceeds the limit of %d", size, limit)}
}
