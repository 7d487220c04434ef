package teamsvc

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// The team listings in the one page shape of every listing (app.Page):
// the project, the items, the total number of matching records, and the
// page's bounds. Messages and events page by cursor (after), so their
// offset is 0 and their total counts the records after the cursor.

// countEvery counts a listing by reading it page by page in one
// transaction.
func countEvery[T any](list func(limit, offset int) ([]T, error)) (int64, error) {
	const chunk = 1000
	var n int64
	for offset := 0; ; offset += chunk {
		page, err := list(chunk, offset)
		if err != nil {
			return 0, err
		}
		n += int64(len(page))
		if len(page) < chunk {
			return n, nil
		}
	}
}

// TeamsPage is List as a page (every team: the listing is not bounded).
func (s *Service) TeamsPage(ctx context.Context, project string, all bool) (*app.Page[TeamInfo], error) {
	p, err := s.env.ResolveProject("list teams", project)
	if err != nil {
		return nil, err
	}
	ts, err := s.ListTeams(ctx, p, all)
	if err != nil {
		return nil, err
	}
	return app.NewPage(p, ts, int64(len(ts)), len(ts), 0), nil
}

// TasksPage is ListTasks as a page.
func (s *Service) TasksPage(ctx context.Context, q TaskQuery) (*app.Page[team.Task], error) {
	const op = "list team tasks"
	p, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	q.Project = p
	ts, err := s.ListTasks(ctx, q)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = team.MaxGraphTasks
	}
	var total int64
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		total, err = countEvery(func(l, o int) ([]team.Task, error) {
			return tx.ListTeamTasks(ctx, p, q.Team, store.TeamTaskFilter{Statuses: q.Statuses, RunID: q.RunID, Limit: l, Offset: o})
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return app.NewPage(p, ts, total, limit, q.Offset), nil
}

// TailPage is Tail as a page: total is the number of messages after the
// cursor (seqs are contiguous, so the team's last seq minus the cursor).
func (s *Service) TailPage(ctx context.Context, in TailInput) (*app.Page[team.Message], error) {
	const op = "tail messages"
	p, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	in.Project = p
	ms, err := s.Tail(ctx, in)
	if err != nil {
		return nil, err
	}
	limit, _ := app.PageLimit(op, in.Limit, 0)
	var total int64
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		rec, err := tx.GetTeam(ctx, p, in.Team)
		if err != nil {
			return err
		}
		total = max(0, rec.LastSeq-in.After)
		return nil
	})
	if err != nil {
		return nil, app.Wrap(op, err)
	}
	return app.NewPage(p, ms, max(total, int64(len(ms))), limit, 0), nil
}

// EventsPage is Events as a page: total counts the events after the cursor.
func (s *Service) EventsPage(ctx context.Context, project, name, subject string, after int64, limit int) (*app.Page[store.TeamEvent], error) {
	const op = "team events"
	p, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	evs, err := s.Events(ctx, p, name, subject, after, limit)
	if err != nil {
		return nil, err
	}
	limit, _ = app.PageLimit(op, limit, 0)
	var total int64
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		cursor := after
		for {
			page, err := tx.ListTeamEvents(ctx, p, name, subject, cursor, 1000)
			if err != nil {
				return err
			}
			total += int64(len(page))
			if len(page) < 1000 {
				return nil
			}
			cursor = page[len(page)-1].ID
		}
	})
	if err != nil {
		return nil, err
	}
	return app.NewPage(p, evs, max(total, int64(len(evs))), limit, 0), nil
}

// RunsPage is ListRuns as a page.
func (s *Service) RunsPage(ctx context.Context, q RunQuery) (*app.Page[RunSummary], error) {
	const op = "list pattern runs"
	p, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	q.Project = p
	rs, err := s.ListRuns(ctx, q)
	if err != nil {
		return nil, err
	}
	limit, _ := app.PageLimit(op, q.Limit, 0)
	var total int64
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		total, err = countEvery(func(l, o int) ([]store.TeamRun, error) {
			return tx.ListTeamRuns(ctx, p, store.TeamRunFilter{Team: q.Team, Pattern: q.Pattern, ActiveOnly: q.ActiveOnly, Limit: l, Offset: o})
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return app.NewPage(p, rs, max(total, int64(len(rs))), limit, 0), nil
}
