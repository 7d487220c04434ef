package sqlstore

import (
	"context"
	"database/sql"

	"github.com/kaizenhq/kaizen/store"
)

const exploreCols = `project, id, strategy, state, done, exit_reason, created_at, updated_at`

func scanExplore(s scanner) (store.ExploreSession, error) {
	var x store.ExploreSession
	var state string
	var created, updated sql.NullInt64
	err := s.Scan(&x.Project, &x.ID, &x.Strategy, &state, &x.Done, &x.Exit, &created, &updated)
	x.State, x.CreatedAt, x.UpdatedAt = []byte(state), fromMicros(created), fromMicros(updated)
	return x, err
}

// InsertExploreSession implements store.ExploreStorage.
func (t *Tx) InsertExploreSession(ctx context.Context, x store.ExploreSession) (bool, error) {
	return t.insert(ctx, "exploration session", `INSERT INTO explore_sessions (`+exploreCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		x.Project, x.ID, x.Strategy, string(x.State), x.Done, x.Exit, micros(x.CreatedAt), micros(x.UpdatedAt))
}

// GetExploreSession implements store.ExploreStorage.
func (t *Tx) GetExploreSession(ctx context.Context, project, id string) (store.ExploreSession, error) {
	return one(ctx, t, "exploration session "+id, scanExplore,
		`SELECT `+exploreCols+` FROM explore_sessions WHERE project = ? AND id = ?`, project, id)
}

// LockExploreSession implements store.ExploreStorage.
func (t *Tx) LockExploreSession(ctx context.Context, project, id string) (store.ExploreSession, error) {
	return one(ctx, t, "exploration session "+id, scanExplore,
		`SELECT `+exploreCols+` FROM explore_sessions WHERE project = ? AND id = ?`+t.d.ForUpdate, project, id)
}

// UpdateExploreSession implements store.ExploreStorage.
func (t *Tx) UpdateExploreSession(ctx context.Context, x store.ExploreSession) error {
	return t.change(ctx, "update exploration session "+x.ID, `UPDATE explore_sessions SET strategy = ?, state = ?,
		done = ?, exit_reason = ?, created_at = ?, updated_at = ? WHERE project = ? AND id = ?`,
		x.Strategy, string(x.State), x.Done, x.Exit, micros(x.CreatedAt), micros(x.UpdatedAt), x.Project, x.ID)
}

func exploreWhere(project string, f store.ExploreFilter) (string, []any) {
	q, args := ` FROM explore_sessions WHERE project = ?`, []any{project}
	if f.ActiveOnly {
		q += ` AND done = FALSE`
	}
	return q, args
}

// ListExploreSessions implements store.ExploreStorage.
func (t *Tx) ListExploreSessions(ctx context.Context, project string, f store.ExploreFilter) ([]store.ExploreSession, error) {
	where, args := exploreWhere(project, f)
	q, args := page(`SELECT `+exploreCols+where+` ORDER BY updated_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "exploration sessions", scanExplore, q, args...)
}

// CountExploreSessions implements store.ExploreStorage.
func (t *Tx) CountExploreSessions(ctx context.Context, project string, f store.ExploreFilter) (int64, error) {
	where, args := exploreWhere(project, f)
	return t.count(ctx, "exploration sessions", `SELECT COUNT(*)`+where, args...)
}
