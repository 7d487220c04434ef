package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

var _ store.Checker = (*Store)(nil)

// Check implements store.Checker: SQLite's quick_check and the migrations.
func (s *Store) Check(ctx context.Context) (store.Health, error) {
	h := store.Health{Backend: "sqlite"}
	rows, err := s.reader.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return h, fmt.Errorf("check sqlite: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return h, fmt.Errorf("check sqlite: %w", err)
		}
		problems = append(problems, line)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("check sqlite: %w", err)
	}
	h.Integrity = strings.Join(problems, "; ")
	if len(problems) == 0 {
		h.Integrity = "no answer"
	}
	return h, sqlstore.CheckMigrations(ctx, s.reader, migrations, &h)
}
