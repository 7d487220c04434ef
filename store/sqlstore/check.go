package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/store"
)

// CheckMigrations compares the migrations applied to db (goose's table)
// with those a build embeds (migrations/NNNNN_*.sql, and the Go migration
// BackfillMigration), filling h's Applied, Known, Pending and Unknown.
func CheckMigrations(ctx context.Context, db *sql.DB, embedded fs.FS, h *store.Health) error {
	known := []int64{BackfillMigration}
	err := fs.WalkDir(embedded, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql") {
			return err
		}
		base := path[strings.LastIndexByte(path, '/')+1:]
		if i := strings.IndexByte(base, '_'); i > 0 {
			if v, err := strconv.ParseInt(base[:i], 10, 64); err == nil {
				known = append(known, v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT version_id FROM goose_db_version WHERE is_applied AND version_id > 0`)
	if err != nil {
		return fmt.Errorf("read the applied migrations: %w", err)
	}
	defer rows.Close()
	var applied []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return err
		}
		applied = append(applied, v)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, v := range known {
		h.Known = max(h.Known, v)
		if !slices.Contains(applied, v) {
			h.Pending = append(h.Pending, v)
		}
	}
	for _, v := range applied {
		h.Applied = max(h.Applied, v)
		if !slices.Contains(known, v) && !slices.Contains(h.Unknown, v) {
			h.Unknown = append(h.Unknown, v)
		}
	}
	slices.Sort(h.Pending)
	slices.Sort(h.Unknown)
	return nil
}
