package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kaizenhq/kaizen/store"
)

// checkSchema makes sure the connection has a schema to create kaizen's
// tables in. A search_path naming only schemas that do not exist (a typo,
// or `search_path=kaizen` before `CREATE SCHEMA kaizen`) leaves
// current_schema() NULL, and the migrations would fail deep in the
// migration library with "no schema has been selected to create in";
// this says what is wrong and how to fix it instead.
func checkSchema(ctx context.Context, db *sql.DB) error {
	var current sql.NullString
	var path string
	if err := db.QueryRowContext(ctx, `SELECT current_schema(), current_setting('search_path')`).Scan(&current, &path); err != nil {
		return fmt.Errorf("connect to postgres: read the current schema: %w", err)
	}
	if !current.Valid {
		return fmt.Errorf("%w: the search_path (%s) names no schema that exists in this database: create it first (CREATE SCHEMA …) or correct search_path in the connection string",
			store.ErrMisconfigured, path)
	}
	return nil
}
