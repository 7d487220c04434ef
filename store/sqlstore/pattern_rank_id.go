package sqlstore

import (
	"context"

	"github.com/kaizenhq/kaizen/store"
)

// EachPatternRankByID implements store.PatternRankIDReader on SQLite: the
// patterns and their maturity rows are read by two cursors, each walking
// its table in key order (project, id), merged by id. The join in the
// order of PatternsWithMaturity (EachPatternRank) walks the creation-order
// index and seeks the patterns table and the maturity table for every
// pattern: two B-tree searches a row, about half of a full load's CPU at
// 100,000 patterns (issue 17). Both tables are WITHOUT ROWID and keyed by
// (project, id) under SQLite's binary collation, so both cursors return
// ids in byte order. PostgreSQL declines (its join needs no seeks and its
// id order follows the database's collation).
func (t *Tx) EachPatternRankByID(ctx context.Context, project string, fn func(*store.PatternRank) error) (bool, error) {
	if t.d.Name != SQLite.Name {
		return false, nil
	}
	if err := t.flushFirst(ctx); err != nil {
		return false, err
	}
	if t.ranks != nil { // a connection of the store's own (RankScanner)
		v, err := t.PatternVersion(ctx, project)
		if err != nil {
			return false, err
		}
		if ok, err := t.ranks.ScanPatternRanksByID(ctx, project, v.Version, fn); ok || err != nil {
			return true, err
		}
	}
	return true, t.withScanCache(ctx, func() error { return t.eachPatternRankByID(ctx, project, fn) })
}
