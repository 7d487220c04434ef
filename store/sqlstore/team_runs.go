package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/kaizenhq/kaizen/store"
)

const teamRunCols = `project, id, team, pattern, parent_id, state, finished, run, created_at, updated_at`

func scanTeamRun(s scanner) (store.TeamRun, error) {
	var r store.TeamRun
	var run string
	var created, updated sql.NullInt64
	err := s.Scan(&r.Project, &r.ID, &r.Team, &r.Pattern, &r.ParentID, &r.State, &r.Finished, &run, &created, &updated)
	r.Run, r.CreatedAt, r.UpdatedAt = json.RawMessage(run), fromMicros(created), fromMicros(updated)
	return r, err
}

// InsertTeamRun implements store.TeamRunStorage.
func (t *Tx) InsertTeamRun(ctx context.Context, r store.TeamRun) (bool, error) {
	return t.insert(ctx, "team run", `INSERT INTO team_runs (`+teamRunCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		r.Project, r.ID, r.Team, r.Pattern, r.ParentID, r.State, r.Finished, string(r.Run), micros(r.CreatedAt), micros(r.UpdatedAt))
}

// GetTeamRun implements store.TeamRunStorage.
func (t *Tx) GetTeamRun(ctx context.Context, project, id string) (store.TeamRun, error) {
	return one(ctx, t, "team run "+id, scanTeamRun, `SELECT `+teamRunCols+` FROM team_runs WHERE project = ? AND id = ?`, project, id)
}

// LockTeamRun implements store.TeamRunStorage.
func (t *Tx) LockTeamRun(ctx context.Context, project, id string) (store.TeamRun, error) {
	return one(ctx, t, "team run "+id, scanTeamRun, `SELECT `+teamRunCols+` FROM team_runs WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

// UpdateTeamRun implements store.TeamRunStorage.
func (t *Tx) UpdateTeamRun(ctx context.Context, r store.TeamRun) error {
	return t.change(ctx, "update team run "+r.ID, `UPDATE team_runs SET state = ?, finished = ?, run = ?, updated_at = ?
		WHERE project = ? AND id = ?`, r.State, r.Finished, string(r.Run), micros(r.UpdatedAt), r.Project, r.ID)
}

// ListTeamRuns implements store.TeamRunStorage.
func (t *Tx) ListTeamRuns(ctx context.Context, project string, f store.TeamRunFilter) ([]store.TeamRun, error) {
	q, args := `SELECT `+teamRunCols+` FROM team_runs WHERE project = ?`, []any{project}
	if f.Team != "" {
		q += ` AND team = ?`
		args = append(args, f.Team)
	}
	if f.Pattern != "" {
		q += ` AND pattern = ?`
		args = append(args, f.Pattern)
	}
	if f.ParentID != "" {
		q += ` AND parent_id = ?`
		args = append(args, f.ParentID)
	}
	if f.ActiveOnly {
		q += ` AND finished = FALSE`
	}
	q, args = page(q+` ORDER BY created_at, id`, args, f.Limit, f.Offset)
	return many(ctx, t, "team runs", scanTeamRun, q, args...)
}

// AppendRunEvent implements store.TeamRunStorage.
func (t *Tx) AppendRunEvent(ctx context.Context, project, runID string, e store.RunEvent) (int64, error) {
	return one(ctx, t, "run event", func(s scanner) (int64, error) {
		var n int64
		return n, s.Scan(&n)
	}, `INSERT INTO team_run_events (project, run_id, n, at, event, commands, state)
		VALUES (?, ?, (SELECT COALESCE(MAX(n), 0) + 1 FROM team_run_events WHERE project = ? AND run_id = ?), ?, ?, ?, ?) RETURNING n`,
		project, runID, project, runID, micros(e.At), string(e.Event), string(e.Commands), e.State)
}

// ListRunEvents implements store.TeamRunStorage.
func (t *Tx) ListRunEvents(ctx context.Context, project, runID string) ([]store.RunEvent, error) {
	return many(ctx, t, "run events", func(s scanner) (store.RunEvent, error) {
		var e store.RunEvent
		var at sql.NullInt64
		var ev, cmds string
		err := s.Scan(&e.N, &at, &ev, &cmds, &e.State)
		e.At, e.Event = fromMicros(at), json.RawMessage(ev)
		if cmds != "" {
			e.Commands = json.RawMessage(cmds)
		}
		return e, err
	}, `SELECT n, at, event, commands, state FROM team_run_events WHERE project = ? AND run_id = ? ORDER BY n`, project, runID)
}
