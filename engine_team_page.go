package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/team"
)

// The team listings in the page shape of every listing ({project, items,
// total, limit, offset}), as REST, MCP and the CLI's --json answer them.
type (
	TeamList      = app.Page[TeamInfo]
	TeamTaskList  = app.Page[team.Task]
	TeamMessages  = app.Page[team.Message]
	TeamEventList = app.Page[TeamEvent]
	RunList       = app.Page[RunSummary]
)

// ListTeamsPage is ListTeams as a page.
func (e *Engine) ListTeamsPage(ctx context.Context, project string, all bool) (*TeamList, error) {
	return e.team.TeamsPage(ctx, project, all)
}

// ListTeamTasksPage is ListTeamTasks as a page.
func (e *Engine) ListTeamTasksPage(ctx context.Context, q TeamTaskQuery) (*TeamTaskList, error) {
	return e.team.TasksPage(ctx, q)
}

// TailMessagesPage is TailMessages as a page (total: messages after the cursor).
func (e *Engine) TailMessagesPage(ctx context.Context, in TailInput) (*TeamMessages, error) {
	return e.team.TailPage(ctx, in)
}

// TeamEventsPage is TeamEvents as a page (total: events after the cursor).
func (e *Engine) TeamEventsPage(ctx context.Context, project, teamName, subject string, after int64, limit int) (*TeamEventList, error) {
	return e.team.EventsPage(ctx, project, teamName, subject, after, limit)
}

// ListRunsPage is ListRuns as a page.
func (e *Engine) ListRunsPage(ctx context.Context, q RunQuery) (*RunList, error) {
	return e.team.RunsPage(ctx, q)
}
