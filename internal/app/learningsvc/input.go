package learningsvc

import (
	"io"
	"strings"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
)

// OutcomeInput is what an agent reports when a task ends. Field names
// follow the seed (bead_id is the task id; task_id is accepted as an alias).
type OutcomeInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	// TaskIDAlias accepts "task_id" for callers that do not speak beads.
	TaskIDAlias string `json:"task_id,omitempty"`
	DurationMs  *int64 `json:"duration_ms,omitempty"`
	// ErrorCount, when omitted, is taken from the error accumulator: the
	// number of errors recorded for the task.
	ErrorCount     *int     `json:"error_count,omitempty"`
	RetryCount     *int     `json:"retry_count,omitempty"`
	Success        *bool    `json:"success,omitempty"`
	FilesTouched   []string `json:"files_touched,omitempty"`
	Strategy       string   `json:"strategy,omitempty"`
	FailureMode    string   `json:"failure_mode,omitempty"`
	FailureDetails string   `json:"failure_details,omitempty"`
	// Timestamp is when the task finished (RFC 3339); default now.
	Timestamp string `json:"timestamp,omitempty"`
	// Patterns are the decomposition patterns used, by id or content.
	Patterns []string `json:"patterns,omitempty"`
	// Criteria judged (default: type_safe, no_bugs, patterns, readable).
	Criteria []string `json:"criteria,omitempty"`
	// Description of the decomposition; strategies found in it count as
	// patterns used.
	Description string `json:"description,omitempty"`
	// Task says what the task was (its description; default: the tracked
	// task's first prompt) and Tags what kind of task (e.g. "migration"):
	// plan guidance ranks strategies for a new task from similar past ones.
	Task string   `json:"task,omitempty"`
	Tags []string `json:"tags,omitempty"`
	// Inferred marks an outcome that was not reported but inferred from
	// what was seen of the task (kaizen sets it when it closes a tracked
	// session by itself). An explicit outcome of the same task replaces an
	// inferred one; an inferred one never replaces an explicit one.
	Inferred bool `json:"inferred,omitempty"`
}

// maxTags bounds the tags of an outcome or a plan request.
const maxTags = 20

// validTags checks tags: at most maxTags names.
func validTags(op string, tags []string) error {
	if len(tags) > maxTags {
		return app.Invalid(op, "tags", "has more than %d entries", maxTags)
	}
	for _, t := range tags {
		if err := learning.ValidateName("tags", t); err != nil {
			return app.Invalid(op, "tags", "%v", err)
		}
	}
	return nil
}

// ParseOutcomeInput decodes one JSON object strictly: unknown fields,
// trailing data, wrong types and oversized input are errors naming the
// field. It does not validate values (RecordOutcome does).
func ParseOutcomeInput(r io.Reader) (OutcomeInput, error) {
	var in OutcomeInput
	return in, app.DecodeStrict(r, &in, "parse outcome")
}

// PatternContent validates pattern content or a pattern reference.
func PatternContent(op, field, s string) error {
	if err := app.ValidText(op, field, s, app.MaxPatternContent, true); err != nil {
		return err
	}
	if strings.ContainsAny(s, "\n\r") {
		return app.Invalid(op, field, "must be a single line")
	}
	return nil
}
