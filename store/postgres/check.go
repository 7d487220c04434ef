package postgres

import (
	"context"
	"fmt"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

var _ store.Checker = (*Store)(nil)

// Check implements store.Checker: PostgreSQL checks its own pages, so the
// integrity check is that the server answers; and the migrations.
func (s *Store) Check(ctx context.Context) (store.Health, error) {
	h := store.Health{Backend: "postgres", Integrity: "ok"}
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return h, fmt.Errorf("check postgres: %w", err)
	}
	return h, sqlstore.CheckMigrations(ctx, s.db, migrations, &h)
}
