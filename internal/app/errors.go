package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen/store"
)

// ErrorKind classifies an engine error so every surface can render it the
// same way (CLI exit code, HTTP status, MCP isError).
type ErrorKind string

// Error kinds.
const (
	// KindInvalid: the input is wrong; retrying it unchanged fails again.
	KindInvalid ErrorKind = "invalid_input"
	// KindNotFound: a referenced record does not exist.
	KindNotFound ErrorKind = "not_found"
	// KindConflict: the request contradicts the current state.
	KindConflict ErrorKind = "conflict"
	// KindInternal: storage or another internal failure.
	KindInternal ErrorKind = "internal"
)

// Error is the engine's error type: what was being done, what went wrong,
// which input field is concerned, and a hint about how to fix it.
type Error struct {
	Op      string    `json:"op"`
	Kind    ErrorKind `json:"code"`
	Field   string    `json:"field,omitempty"`
	Message string    `json:"message"`
	Hint    string    `json:"hint,omitempty"`
	// Next names the action that helps, when there is one (list_patterns,
	// list_outcomes, reset_pattern…: the MCP tool names); each surface
	// renders it as its own command.
	Next string `json:"next,omitempty"`
	Err  error  `json:"-"`
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Err != nil && e.Message == "" {
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of an engine error, KindNotFound for a wrapped
// store.ErrNotFound, and KindInternal for anything else.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, store.ErrNotFound) {
		return KindNotFound
	}
	return KindInternal
}

// Invalid builds a validation error.
func Invalid(op, field, format string, a ...any) *Error {
	return &Error{Op: op, Kind: KindInvalid, Field: field, Message: fmt.Sprintf(format, a...)}
}

// Wrap gives a storage error its operation and kind.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Op: op, Kind: KindNotFound, Message: err.Error(), Err: err}
	}
	return &Error{Op: op, Kind: KindInternal, Message: err.Error(), Err: err}
}
