package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// EachPatternID implements store.PatternIDReader: the ids in the order of
// PatternsWithMaturity, read from the (project, created_at, id) index
// alone.
func (t *Tx) EachPatternID(ctx context.Context, project string, fn func(id []byte) error) error {
	if err := t.flushFirst(ctx); err != nil {
		return err
	}
	return t.withScanCache(ctx, func() error { return t.eachPatternID(ctx, project, fn) })
}

func (t *Tx) eachPatternID(ctx context.Context, project string, fn func(id []byte) error) error {
	rows, err := t.rows(ctx, `SELECT id FROM patterns WHERE project = ? ORDER BY created_at, id`, project)
	if err != nil {
		return fmt.Errorf("list pattern ids: %w", err)
	}
	defer rows.Close()
	var id sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("scan pattern ids: %w", err)
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list pattern ids: %w", err)
	}
	return rows.Close()
}
