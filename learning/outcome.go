package learning

import "time"

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
	ErrorCountSource string    `json:"error_count_source"`
	Score            Score     `json:"score"`
	RecordedAt       time.Time `json:"recorded_at"`
}

// Signals returns the outcome's scoring signals.
func (o Outcome) Signals() Signals {
	return Signals{DurationMs: o.DurationMs, ErrorCount: o.ErrorCount, RetryCount: o.RetryCount, Success: o.Success}
}
