package sqlstore

import (
	"context"

	"github.com/kaizenhq/kaizen/store"
)

// RankScanner is implemented by stores that can read a project's pattern
// ranks in id order (store.PatternRankIDReader) faster than the two
// cursors of a transaction, on a connection of their own (the SQLite
// backend: store/sqlite/rankscan.go). That connection reads in a
// transaction of its own, which may see another state of the database
// than the caller's transaction: every transaction that changes a
// project's patterns or maturity rows raises the project's pattern version
// in the same commit (bumpVersions), so the two see the same patterns and
// maturity rows of the project exactly when they see the same version.
type RankScanner interface {
	// ScanPatternRanksByID calls fn for every pattern of the project as
	// EachPatternRankByID does, when its transaction sees the project's
	// pattern version version. ok is false, and fn never called, when it
	// does not (a writer committed in between), when the connection is in
	// use, or when the scan could not start: the caller then reads on its
	// own connection. An error after fn was called is returned with ok.
	ScanPatternRanksByID(ctx context.Context, project string, version int64, fn func(*store.PatternRank) error) (ok bool, err error)
}

// SetRankScanner lets a read transaction load pattern ranks through rs
// (see RankScanner); EachPatternRankByID falls back to its own cursors
// whenever rs declines.
func (t *Tx) SetRankScanner(rs RankScanner) { t.ranks = rs }
