package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// MarkEvent implements store.LedgerStorage.
func (t *Tx) MarkEvent(ctx context.Context, project, key string, at time.Time, window time.Duration) (bool, error) {
	fresh, err := t.insert(ctx, "applied event", `INSERT INTO applied_events (project, key, at) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, project, key, at.UnixMicro())
	if err != nil || fresh {
		return fresh, err
	}
	var prev int64
	rows, err := t.rows(ctx, `SELECT at FROM applied_events WHERE project = ? AND key = ?`+t.d.ForUpdate, project, key)
	if err != nil {
		return false, fmt.Errorf("get applied event: %w", err)
	}
	found := rows.Next()
	if found {
		err = rows.Scan(&prev)
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return false, fmt.Errorf("get applied event: %w", err)
	}
	if !found {
		return false, fmt.Errorf("get applied event: %w", sql.ErrNoRows)
	}
	d := at.UnixMicro() - prev
	if d < 0 {
		d = -d
	}
	if time.Duration(d)*time.Microsecond < window {
		return false, nil
	}
	if _, err := t.exec(ctx, `UPDATE applied_events SET at = ? WHERE project = ? AND key = ?`, at.UnixMicro(), project, key); err != nil {
		return false, fmt.Errorf("update applied event: %w", err)
	}
	return true, nil
}

// LockKey implements store.LedgerStorage: a transaction-scoped advisory
// lock on PostgreSQL (keys whose hashes collide merely wait for each
// other); nothing on SQLite, whose writer transaction is exclusive.
func (t *Tx) LockKey(ctx context.Context, project, key string) error {
	if t.d.Name != Postgres.Name {
		return nil
	}
	if t.d.GroupKeyLocks {
		return t.lockKeyClass(ctx, project, key)
	}
	if _, err := t.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, fmt.Sprintf("%d:%s/%s", len(project), project, key)); err != nil {
		return fmt.Errorf("lock key %s: %w", key, err)
	}
	return nil
}

// PruneEvents implements store.LedgerStorage.
func (t *Tx) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM applied_events WHERE at < ?`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("prune applied events: %w", err)
	}
	return res.RowsAffected()
}
