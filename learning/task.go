package learning

import "time"

// Task is a unit of agent work tracked while it runs (an agent session or
// a subtask; the seed's bead), so that its outcome can be recorded without
// re-entering duration, errors and retries. Errors themselves live in the
// error accumulator under the task's id.
type Task struct {
	ID          string `json:"bead_id"`
	Project     string `json:"project"`
	Description string `json:"description,omitempty"`
	// Source names the client that reported the task (claude, codex…).
	Source         string    `json:"source,omitempty"`
	StartedAt      time.Time `json:"started_at"`
	LastActivityAt time.Time `json:"last_activity_at"`
	// EndedAt is set when an outcome is recorded for the task.
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	Prompts      int64      `json:"prompts"`
	ToolCalls    int64      `json:"tool_calls"`
	ToolFailures int64      `json:"tool_failures"`
	// RetryCount counts prompts that followed a turn in which a tool
	// failed: the agent had to be asked again after a failed attempt.
	RetryCount int64 `json:"retry_count"`
	// FailedThisTurn records a tool failure since the last prompt.
	FailedThisTurn bool `json:"failed_this_turn"`
	// Exploration summarises the task's exploration session, if tracked.
	Exploration *ExplorationSummary `json:"exploration,omitempty"`
	// Signals are what the task's events told about how it went: the
	// strategies its prompts and plan named, the files it edited, the
	// latest decisive signal (see InferOutcome).
	Signals   TaskSignals `json:"signals"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// TaskEventKind is something that happened in a tracked task.
type TaskEventKind string

// Task event kinds.
const (
	TaskStart       TaskEventKind = "start"
	TaskPrompt      TaskEventKind = "prompt"
	TaskToolCall    TaskEventKind = "tool"
	TaskToolFailure TaskEventKind = "tool_failure"
	TaskStop        TaskEventKind = "stop"
	// TaskActivity is something that happened without a tool call or a
	// prompt (a file edit reported on its own, a context compaction): it
	// keeps the task active and may carry signals.
	TaskActivity TaskEventKind = "activity"
	// TaskEnd: the session ended; its outcome can be inferred.
	TaskEnd TaskEventKind = "end"
)

// TaskEventKinds lists the kinds.
var TaskEventKinds = []TaskEventKind{TaskStart, TaskPrompt, TaskToolCall, TaskToolFailure, TaskStop, TaskActivity, TaskEnd}

// Valid reports whether k is a known kind.
func (k TaskEventKind) Valid() bool {
	for _, v := range TaskEventKinds {
		if k == v {
			return true
		}
	}
	return false
}

// Apply folds an event at time at into the task. A prompt after a turn in
// which a tool failed counts as a retry; the first prompt's text becomes the
// description when there is none.
func (t *Task) Apply(kind TaskEventKind, text string, at time.Time) {
	if t.StartedAt.IsZero() || at.Before(t.StartedAt) {
		t.StartedAt = at
	}
	if at.After(t.LastActivityAt) {
		t.LastActivityAt = at
	}
	switch kind {
	case TaskPrompt:
		if t.Prompts > 0 && t.FailedThisTurn {
			t.RetryCount++
		}
		t.Prompts++
		t.FailedThisTurn = false
		if t.Description == "" {
			t.Description = text
		}
	case TaskStart:
		if t.Description == "" {
			t.Description = text
		}
	case TaskToolCall:
		t.ToolCalls++
	case TaskToolFailure:
		t.ToolCalls++
		t.ToolFailures++
		t.FailedThisTurn = true
	}
}

// DurationMs is the task's duration so far: from its start to its last
// activity.
func (t Task) DurationMs() int64 {
	if t.LastActivityAt.Before(t.StartedAt) {
		return 0
	}
	return t.LastActivityAt.Sub(t.StartedAt).Milliseconds()
}

// ExplorationSummary is what an exploration session did (see package
// explore), attached to the task it explored for and carried by the task's
// outcome, so that exploration behaviour can be correlated with results.
type ExplorationSummary struct {
	SessionID   string  `json:"session_id"`
	Strategy    string  `json:"strategy"`
	Phase       string  `json:"phase"`
	Rounds      int     `json:"rounds"`
	ToolCalls   int     `json:"tool_calls"`
	NewInfoRate float64 `json:"new_info_rate"`
	Transitions int     `json:"transitions"`
	Nudges      int     `json:"nudges"`
	// Exit says why the session ended; empty while it runs.
	Exit string `json:"exit,omitempty"`
}
