package store

import (
	"context"
	"time"
)

// OutcomeContext is what the context index of plan guidance keeps of an
// outcome (learning.ContextEvent), with the time it was recorded.
type OutcomeContext struct {
	ID, TaskID, Task string
	Tags, Patterns   []string
	Success          bool
	Timestamp        time.Time
	RecordedAt       time.Time
}

// OutcomeContextReader is implemented by the transactions of stores that
// can list the context of outcomes without reading whole outcomes (no
// criteria, scores, files or exploration decoded): plan guidance loads
// its history of recent outcomes with it.
type OutcomeContextReader interface {
	// OutcomeContexts lists the project's outcomes as ListOutcomes does
	// (newest first: recorded_at, then id, descending), only those
	// recorded at or after since when it is not zero, at most limit.
	OutcomeContexts(ctx context.Context, project string, since time.Time, limit int) ([]OutcomeContext, error)
}
