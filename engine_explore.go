package kaizen

import "context"

// Engine actions of the exploration tracker (seed 002): each delegates to its service.

// SetExploreSettings enables, disables or reconfigures exploration
// tracking for a project. The strategy and budget are validated.
func (e *Engine) SetExploreSettings(ctx context.Context, in ExploreSettings) (*ExploreSettings, error) {
	return e.explore.SetExploreSettings(ctx, in)
}

// GetExploreSettings returns a project's exploration settings (disabled by
// default).
func (e *Engine) GetExploreSettings(ctx context.Context, project string) (*ExploreSettings, error) {
	return e.explore.GetExploreSettings(ctx, project)
}

// ExploreStart starts an exploration session (an existing one is returned
// unchanged: starting is idempotent).
func (e *Engine) ExploreStart(ctx context.Context, in ExploreStartInput) (*ExploreInfo, error) {
	return e.explore.ExploreStart(ctx, in)
}

// ExploreEvent applies events to a session in one transaction, persists it,
// and keeps the session's task (same id, when tracked) up to date with the
// exploration summary, which its outcome will carry.
func (e *Engine) ExploreEvent(ctx context.Context, in ExploreEventInput) (*ExploreEventResult, error) {
	return e.explore.ExploreEvent(ctx, in)
}

// ExploreState returns a session with its timeline.
func (e *Engine) ExploreState(ctx context.Context, project, id string) (*ExploreInfo, error) {
	return e.explore.ExploreState(ctx, project, id)
}

// ListExploreSessions lists exploration sessions.
func (e *Engine) ListExploreSessions(ctx context.Context, q ExploreQuery) (*ExploreList, error) {
	return e.explore.ListExploreSessions(ctx, q)
}
