package learning

import (
	"strings"
	"time"
)

// Outcome is a finished task as reported by an agent (the seed's
// swarm_record_outcome fields) together with the score it received.
type Outcome struct {
	ID             string      `json:"id"`
	Project        string      `json:"project"`
	TaskID         string      `json:"bead_id"`
	DurationMs     int64       `json:"duration_ms"`
	ErrorCount     int         `json:"error_count"`
	RetryCount     int         `json:"retry_count"`
	Success        bool        `json:"success"`
	FilesTouched   []string    `json:"files_touched"`
	Strategy       string      `json:"strategy,omitempty"`
	FailureMode    FailureMode `json:"failure_mode,omitempty"`
	FailureDetails string      `json:"failure_details,omitempty"`
	Timestamp      time.Time   `json:"timestamp"`
	// Patterns are the ids of the decomposition patterns the task used.
	Patterns []string `json:"patterns"`
	// Criteria are the evaluation criteria judged by this outcome.
	Criteria []string `json:"criteria"`
	// ErrorCountSource says where ErrorCount came from: "input" or
	// "accumulator" (the task's recorded errors).
	ErrorCountSource string `json:"error_count_source"`
	// Exploration summarises the exploration session of the task, when
	// one was tracked.
	Exploration *ExplorationSummary `json:"exploration,omitempty"`
	Score       Score               `json:"score"`
	RecordedAt  time.Time           `json:"recorded_at"`
	// Task is what the task was (its description: the plan text or the
	// session's first prompt) and Tags what kind of task it was: plan
	// guidance ranks strategies for a new task from similar past ones.
	Task string   `json:"task,omitempty"`
	Tags []string `json:"tags"`
	// CriterionScores holds the score of the criteria judged from evidence
	// that bears on them (type errors for type_safe, failing tests for
	// no_bugs…, see JudgeCriteria); the others take the outcome's score.
	CriterionScores map[string]Score `json:"criterion_scores,omitempty"`
	// Inferred marks an outcome kaizen recorded by itself when a tracked
	// session ended (or went idle), its success inferred from the
	// session's signals; Inference says from which. An explicit outcome
	// for the same task replaces it.
	Inferred  bool   `json:"inferred,omitempty"`
	Inference string `json:"inference,omitempty"`
}

// Signals returns the outcome's scoring signals.
func (o Outcome) Signals() Signals {
	return Signals{DurationMs: o.DurationMs, ErrorCount: o.ErrorCount, RetryCount: o.RetryCount, Success: o.Success}
}

// FeedbackEvents are the outcome's criterion judgements: one event per
// criterion, all carrying the outcome's scored type and raw score at the
// outcome's time. They are a projection of the outcome, not stored on their
// own; ids are derived from the outcome id and the criterion.
func FeedbackEvents(o Outcome) []FeedbackEvent {
	out := make([]FeedbackEvent, len(o.Criteria))
	context := FeedbackContext(o)
	for i, c := range o.Criteria {
		sc := o.Score
		if own, ok := o.CriterionScores[c]; ok {
			sc = own
		}
		out[i] = FeedbackEvent{ID: FeedbackID(o.ID, c), Project: o.Project, Criterion: c, Type: sc.Type,
			RawValue: sc.Raw, TaskID: o.TaskID, OutcomeID: o.ID, Timestamp: o.Timestamp, Context: context}
	}
	return out
}

// FeedbackID is the id of an outcome's feedback event for a criterion.
func FeedbackID(outcomeID, criterion string) string {
	return "fb-" + strings.TrimPrefix(outcomeID, "out-") + "/" + criterion
}

// FeedbackContext records the strategy and failure mode of an outcome
// beside each of its feedback events.
func FeedbackContext(o Outcome) string {
	var parts []string
	if o.Strategy != "" {
		parts = append(parts, "[strategy: "+o.Strategy+"]")
	}
	if o.FailureMode != "" {
		parts = append(parts, "[failure: "+string(o.FailureMode)+"]")
	}
	return strings.Join(parts, " ")
}
