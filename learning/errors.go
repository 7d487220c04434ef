package learning

import (
	"fmt"
	"strings"
	"time"
)

// ErrorType classifies an error recorded during task execution.
type ErrorType string

// Error types of the seed.
const (
	ErrValidation  ErrorType = "validation"
	ErrTimeout     ErrorType = "timeout"
	ErrConflict    ErrorType = "conflict"
	ErrToolFailure ErrorType = "tool_failure"
	ErrUnknown     ErrorType = "unknown"
)

// ErrorTypes lists the valid error types.
var ErrorTypes = []ErrorType{ErrValidation, ErrTimeout, ErrConflict, ErrToolFailure, ErrUnknown}

// Valid reports whether t is a known error type.
func (t ErrorType) Valid() bool {
	for _, v := range ErrorTypes {
		if t == v {
			return true
		}
	}
	return false
}

// FailureMode classifies why a task failed: the error types plus three
// outcome-only modes.
type FailureMode string

// Failure modes beyond the error types.
const (
	FailureContextOverflow   FailureMode = "context_overflow"
	FailureDependencyBlocked FailureMode = "dependency_blocked"
	FailureUserCancelled     FailureMode = "user_cancelled"
)

// FailureModes lists the valid failure modes.
var FailureModes = []FailureMode{
	FailureMode(ErrValidation), FailureMode(ErrTimeout), FailureMode(ErrConflict),
	FailureMode(ErrToolFailure), FailureContextOverflow, FailureDependencyBlocked,
	FailureUserCancelled, FailureMode(ErrUnknown),
}

// Valid reports whether m is a known failure mode.
func (m FailureMode) Valid() bool {
	for _, v := range FailureModes {
		if m == v {
			return true
		}
	}
	return false
}

// ClassifyFailure derives a failure mode from free-text failure details,
// first matching rule wins; unknown when nothing matches.
func ClassifyFailure(details string) FailureMode {
	d := strings.ToLower(details)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(d, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("timeout", "timed out", "deadline exceeded", "超时"):
		return FailureMode(ErrTimeout)
	case has("conflict", "reservation", "merge conflict", "冲突"):
		return FailureMode(ErrConflict)
	case has("validation", "schema", "type error", "invalid", "校验", "验证"):
		return FailureMode(ErrValidation)
	case has("context window", "context length", "token limit", "too many tokens", "context overflow", "上下文"):
		return FailureContextOverflow
	case has("blocked", "dependency", "depends on", "阻塞", "依赖"):
		return FailureDependencyBlocked
	case has("cancel", "aborted by user", "取消"):
		return FailureUserCancelled
	case has("tool", "command", "failed to execute", "exit status", "工具", "命令"):
		return FailureMode(ErrToolFailure)
	default:
		return FailureMode(ErrUnknown)
	}
}

// ErrorEntry is an error recorded against a task by the error accumulator.
type ErrorEntry struct {
	ID         string     `json:"id"`
	Project    string     `json:"project"`
	TaskID     string     `json:"bead_id"`
	Type       ErrorType  `json:"error_type"`
	Message    string     `json:"message"`
	StackTrace string     `json:"stack_trace,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	Context    string     `json:"context,omitempty"`
	Timestamp  time.Time  `json:"timestamp"`
	Resolved   bool       `json:"resolved"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

// ErrorStats are a task's error counts. ByType counts resolved errors too;
// Total is what an outcome uses as its error_count.
type ErrorStats struct {
	Total      int               `json:"total"`
	Unresolved int               `json:"unresolved"`
	ByType     map[ErrorType]int `json:"by_type"`
}

// StatsOf counts errors.
func StatsOf(entries []ErrorEntry) ErrorStats {
	s := ErrorStats{ByType: map[ErrorType]int{}}
	for _, e := range entries {
		s.Total++
		if !e.Resolved {
			s.Unresolved++
		}
		s.ByType[e.Type]++
	}
	return s
}

const stackExcerpt = 100

// ErrorContext formats a task's errors for a retry prompt: grouped by type
// in order of first occurrence, resolved errors left out unless asked for.
// It returns "" when there is nothing to report. Times are RFC 3339 UTC, so
// the text does not depend on the host's locale.
func ErrorContext(entries []ErrorEntry, includeResolved bool) string {
	var order []ErrorType
	groups := map[ErrorType][]ErrorEntry{}
	for _, e := range entries {
		if e.Resolved && !includeResolved {
			continue
		}
		if _, ok := groups[e.Type]; !ok {
			order = append(order, e.Type)
		}
		groups[e.Type] = append(groups[e.Type], e)
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Previous Errors\n\nThe following errors were encountered during execution:\n")
	for _, t := range order {
		es := groups[t]
		noun := "errors"
		if len(es) == 1 {
			noun = "error"
		}
		fmt.Fprintf(&b, "\n### %s (%d %s)\n\n", t, len(es), noun)
		for _, e := range es {
			fmt.Fprintf(&b, "- **%s**\n", oneLine(e.Message))
			if e.Context != "" {
				fmt.Fprintf(&b, "  - Context: %s\n", oneLine(e.Context))
			}
			if e.ToolName != "" {
				fmt.Fprintf(&b, "  - Tool: %s\n", oneLine(e.ToolName))
			}
			if e.StackTrace != "" {
				fmt.Fprintf(&b, "  - Stack: %s\n", excerpt(oneLine(e.StackTrace), stackExcerpt))
			}
			resolved := ""
			if e.Resolved {
				resolved = " (resolved)"
			}
			fmt.Fprintf(&b, "  - Time: %s%s\n", e.Timestamp.UTC().Format(time.RFC3339), resolved)
		}
	}
	b.WriteString("\n**Action Required**: resolve these errors before continuing. Consider:\n" +
		"- What caused each error?\n" +
		"- How can similar errors be prevented?\n" +
		"- Is there a pattern across the error types?\n")
	return b.String()
}

// oneLine collapses whitespace so an agent-supplied message cannot break
// the markdown structure.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// excerpt cuts s to n runes, marking the cut with "...".
func excerpt(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
