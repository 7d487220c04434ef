package sqlite

import (
	"context"
	"database/sql"

	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// The writer carries its aggregate cache (patterns, maturity records,
// content lookups) from one committed group to the next (issue 17): a
// project's groups observe the same patterns, and each group read them
// from SQL again. The cache is exact after COMMIT; it stays exact while no
// other connection writes. Every group reads PRAGMA data_version on the
// writer's pinned connection (the value changes when another connection,
// such as another process on the same file, committed in between) and
// adopts the carried cache only when it did not change. A group that
// fails or rolls back carries nothing (sqlstore/cache_carry.go).

// maxCarriedRows bounds the carried cache: a group that touched more rows
// starts the next one empty.
const maxCarriedRows = 4096

// adoptCarried reads the connection's data version inside the group's
// transaction and starts the group's cache from the carried one when the
// database did not change since it was carried. ok is false when the
// version could not be read (the group then carries nothing).
//
// staged reports that the adopted cache holds the aggregates staged behind
// the journal (behind.go): without it a journal must be replayed.
func (s *Store) adoptCarried(ctx context.Context, tx *sql.Tx, wrapped *sqlstore.Tx) (version int64, ok, staged bool) {
	c := s.carried
	s.carried = nil // taken: a group that fails must not leave it behind
	if err := tx.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return 0, false, false
	}
	if c != nil && version == s.dataVersion {
		wrapped.Adopt(c)
		s.adopted.Add(1)
		staged = c.Staged()
	}
	return version, true, staged
}

// carry keeps a committed group's cache for the next group.
func (s *Store) carry(wrapped *sqlstore.Tx, version int64) {
	s.carried, s.dataVersion = wrapped.Carry(maxCarriedRows), version
}
