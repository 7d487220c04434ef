package store

import "time"

// OutcomeResult is an outcome without its details: whether its task
// succeeded and when it finished and was recorded (OutcomeStorage's
// OutcomeResults).
type OutcomeResult struct {
	ID     string
	TaskID string
	// Success is the outcome's result; Inferred marks an outcome kaizen
	// recorded by itself (learning.Outcome.Inferred).
	Success  bool
	Inferred bool
	// Timestamp is when the task finished, RecordedAt when the outcome
	// was stored.
	Timestamp, RecordedAt time.Time
}
