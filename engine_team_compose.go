package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
)

// ComposeInput starts a composition of collaboration patterns.
type ComposeInput = teamsvc.ComposeInput

// StartComposition starts a composition of collaboration patterns (one of
// seed 004's five named compositions or explicit steps): its first step
// runs now, each next one when the previous run finishes.
func (e *Engine) StartComposition(ctx context.Context, in ComposeInput) (*RunInfo, error) {
	return e.team.StartComposition(ctx, in)
}
