// Package learningsvc is the learning system's service (seed 000): the
// transactions and orchestration over the store behind recording outcomes,
// pattern observations and manual maturity changes, plan guidance, the
// error accumulator, tracked tasks and the rebuild of aggregates. The
// algorithms are package learning's; this package reads, decides with
// them and writes, one transaction per action.
package learningsvc

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
)

// Service runs the learning system's actions.
type Service struct {
	env   *app.Env
	lc    learning.Config
	cache *patternCache
	hooks Hooks
}

// Hooks connect the learning system to the other subsystems without
// importing them; each may be nil.
type Hooks struct {
	// Sections adds guidance sections from other subsystems (recalled
	// heuristics and skills) to plan guidance.
	Sections func(ctx context.Context, in PlanInput) []learning.GuidanceSection
	// OutcomeRecorded is called after an outcome committed (the
	// experience worker extracts the task's experience later).
	OutcomeRecorded func(project, taskID string)
}

// New returns the learning service.
func New(env *app.Env, lc learning.Config, hooks Hooks) *Service {
	return &Service{env: env, lc: lc, cache: newPatternCache(64), hooks: hooks}
}
