package learning_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kaizenhq/kaizen/learning"
)

func seedErrors() []learning.ErrorEntry {
	at := time.Date(2024, 12, 12, 10, 30, 0, 0, time.UTC)
	resolvedAt := at.Add(time.Hour)
	return []learning.ErrorEntry{
		{ID: "e1", TaskID: "bd-123.1", Type: learning.ErrValidation, Message: "Type error in src/auth.ts",
			Context: "after adding OAuth types", ToolName: "typecheck", Timestamp: at},
		{ID: "e2", TaskID: "bd-123.1", Type: learning.ErrToolFailure, Message: "npm test crashed",
			StackTrace: strings.Repeat("x", 150), Timestamp: at.Add(2 * time.Minute)},
		{ID: "e3", TaskID: "bd-123.1", Type: learning.ErrValidation, Message: "Missing import in src/session.ts",
			ToolName: "typecheck", Timestamp: at.Add(5 * time.Minute)},
		{ID: "e4", TaskID: "bd-123.1", Type: learning.ErrTimeout, Message: "build timed out", Timestamp: at.Add(6 * time.Minute),
			Resolved: true, ResolvedAt: &resolvedAt},
	}
}

func TestErrorContextSeedShape(t *testing.T) {
	t.Parallel()
	want := `## Previous Errors

The following errors were encountered during execution:

### validation (2 errors)

- **Type error in src/auth.ts**
  - Context: after adding OAuth types
  - Tool: typecheck
  - Time: 2024-12-12T10:30:00Z
- **Missing import in src/session.ts**
  - Tool: typecheck
  - Time: 2024-12-12T10:35:00Z

### tool_failure (1 error)

- **npm test crashed**
  - Stack: ` + strings.Repeat("x", 100) + `...
  - Time: 2024-12-12T10:32:00Z

**Action Required**: resolve these errors before continuing. Consider:
- What caused each error?
- How can similar errors be prevented?
- Is there a pattern across the error types?
`
	if diff := cmp.Diff(want, learning.ErrorContext(seedErrors(), false)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	withResolved := learning.ErrorContext(seedErrors(), true)
	if !strings.Contains(withResolved, "### timeout (1 error)") || !strings.Contains(withResolved, "2024-12-12T10:36:00Z (resolved)") {
		t.Errorf("resolved errors included on request:\n%s", withResolved)
	}
	if learning.ErrorContext(nil, false) != "" || learning.ErrorContext(seedErrors()[3:], false) != "" {
		t.Error("no unresolved errors must give an empty context")
	}
}

func TestErrorContextCannotBreakMarkdown(t *testing.T) {
	t.Parallel()
	got := learning.ErrorContext([]learning.ErrorEntry{{Type: learning.ErrUnknown, Message: "line one\n## Injected heading\n- fake", Timestamp: epoch}}, false)
	if strings.Contains(got, "\n## Injected") {
		t.Errorf("a message must stay on one line:\n%s", got)
	}
}

func TestErrorStats(t *testing.T) {
	t.Parallel()
	got := learning.StatsOf(seedErrors())
	want := learning.ErrorStats{Total: 4, Unresolved: 3, ByType: map[learning.ErrorType]int{
		learning.ErrValidation: 2, learning.ErrToolFailure: 1, learning.ErrTimeout: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestClassifyFailure(t *testing.T) {
	t.Parallel()
	for details, want := range map[string]learning.FailureMode{
		"request timed out after 30s":           "timeout",
		"file reservation conflict on a.go":     "conflict",
		"schema validation failed":              "validation",
		"context window exceeded (token limit)": learning.FailureContextOverflow,
		"blocked on dependency bd-9":            learning.FailureDependencyBlocked,
		"user cancelled the run":                learning.FailureUserCancelled,
		"command failed to execute: exit 2":     "tool_failure",
		"something odd":                         "unknown",
		"构建超时":                                  "timeout",
	} {
		if got := learning.ClassifyFailure(details); got != want {
			t.Errorf("ClassifyFailure(%q) = %s, want %s", details, got, want)
		}
	}
}
