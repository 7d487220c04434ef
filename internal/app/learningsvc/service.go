// Package learningsvc is the learning system's service (seed 000): the
// transactions and orchestration over the store behind recording outcomes,
// pattern observations and manual maturity changes, plan guidance, the
// error accumulator, tracked tasks and the rebuild of aggregates. The
// algorithms are package learning's; this package reads, decides with
// them and writes, one transaction per action.
package learningsvc

import (
	"context"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Service runs the learning system's actions.
type Service struct {
	env      *app.Env
	lc       learning.Config
	cache    *patternCache
	contexts *contextCache
	hooks    Hooks
}

// Hooks connect the learning system to the other subsystems without
// importing them; each may be nil.
type Hooks struct {
	// Sections adds guidance sections from other subsystems (recalled
	// heuristics and skills) to plan guidance.
	Sections func(ctx context.Context, in PlanInput) []learning.GuidanceSection
	// OutcomeTx runs in the transaction that records an outcome, after
	// the outcome is stored (the experience system enqueues the task's
	// extraction there, so the job commits with the outcome); replaced is
	// the id of the task's outcome that o replaces, or "".
	OutcomeTx func(ctx context.Context, tx store.Tx, o learning.Outcome, replaced string, now time.Time) error
	// OutcomeRecorded is called after an outcome committed (it wakes the
	// job runner of this process).
	OutcomeRecorded func(project, taskID string)
}

// New returns the learning service.
func New(env *app.Env, lc learning.Config, hooks Hooks) *Service {
	return &Service{env: env, lc: lc, cache: newPatternCache(64), contexts: newContextCache(lc.Context.History), hooks: hooks}
}
