package postgres

import (
	"context"
	"fmt"
)

// Durability describes when an Update is acknowledged, from the server's
// settings (synchronous_commit, fsync), for reports.
func (s *Store) Durability(ctx context.Context) (string, error) {
	var syncCommit, fsync string
	if err := s.db.QueryRowContext(ctx, "SELECT current_setting('synchronous_commit'), current_setting('fsync')").
		Scan(&syncCommit, &fsync); err != nil {
		return "", fmt.Errorf("postgres durability: %w", err)
	}
	return fmt.Sprintf("synchronous_commit=%s, fsync=%s: acknowledged after COMMIT returns", syncCommit, fsync), nil
}
