package learningsvc

import (
	"context"

	"github.com/kaizenhq/kaizen/store"
)

// A cached or saved state is caught up with the patterns changed since it
// (advance, afterReset) by reading their full records: a few microseconds
// a pattern more than a row of a full load, and their memory at once. When
// a large share of a project's patterns changed since — a snapshot file
// left by a process long ago while others recorded outcomes, a daemon idle
// through a long run of another writer — catching up would cost more time
// and far more memory than loading every pattern (at 100,000 patterns all
// changed: every full record at once, several hundred MiB), so the state
// is dropped and the patterns loaded in full (loadBase), which also saves a
// new snapshot. The changed patterns are counted on the (project, version)
// index first.

// staleMin and staleDivisor: a state is caught up unless more than
// max(staleMin, patterns/staleDivisor) of its patterns changed since. At
// 100,000 patterns (a limit of 1,562, about where advance makes a new base
// anyway) catching up 1,500 changed patterns peaked at 126–139 MiB, 12,000
// at 203–210 MiB, and a full load at about 105 MiB.
const (
	staleMin     = 256
	staleDivisor = 64
)

// tooStale reports whether from, a state of the project's patterns, has so
// many patterns changed since it that a full load is cheaper.
func tooStale(ctx context.Context, tx store.Tx, project string, from *cachedProject) (bool, error) {
	n := len(from.base.rows) + len(from.added)
	limit := max(staleMin, n/staleDivisor)
	changed, err := tx.CountPatterns(ctx, project, store.PatternFilter{ChangedAfter: from.version})
	if err != nil {
		return false, err
	}
	return changed > int64(limit), nil
}
