package store

import (
	"context"

	"github.com/kaizenhq/kaizen/experience"
)

// ForgetStorage removes the records a user asks kaizen to forget: the
// user owns the data, and a removed record leaves the store, its listings
// and later exports. Each method removes only the rows it names; keeping
// what depended on them consistent (aggregates, search documents, vectors,
// references from other records) is the engine's job, in the same
// transaction. Every method is scoped to its project and returns
// ErrNotFound (wrapped) when the record does not exist there.
type ForgetStorage interface {
	// DeleteOutcome removes an outcome, and with it its criterion
	// feedback events (FeedbackStorage reads them from the outcome).
	DeleteOutcome(ctx context.Context, project, id string) error
	// DeleteMaturityFeedback removes one maturity feedback record (a
	// pattern observation).
	DeleteMaturityFeedback(ctx context.Context, project, id string) error
	// DeleteTurn removes a captured turn (its search document and vector
	// are removed with DeleteSearchDoc).
	DeleteTurn(ctx context.Context, project, id string) error
	// DeleteSignal removes one feedback signal.
	DeleteSignal(ctx context.Context, project, id string) error
	// DeleteHeuristic removes a heuristic with its evidence, supporting
	// tasks and verdicts (its search document and vector are removed with
	// DeleteSearchDoc, its place in recalls with ForgetRecallItem).
	DeleteHeuristic(ctx context.Context, project, id string) error
	// SetExperienceLessons replaces the transferable heuristics (lessons)
	// of a task's stored experience, keeping the rest of it.
	SetExperienceLessons(ctx context.Context, project, taskID string, lessons []experience.TransferableHeuristic) error
	// DeleteSkill removes a skill with its versions.
	DeleteSkill(ctx context.Context, project, id string) error
	// ForgetRecallItem removes an item (a heuristic, skill or turn id)
	// from every stored recall that considered it: from the recall's
	// items and from the RecallFilter.RefID lookup. It returns the number
	// of recalls changed (zero, and no error, when none considered it).
	ForgetRecallItem(ctx context.Context, project, refID string) (int64, error)
}
