package sqlite

import (
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// hints are the write hints of the requests of a batch still wanted.
func hints(batch []*request) []store.WriteHint {
	var out []store.WriteHint
	for _, r := range batch {
		if h, ok := store.WriteHintOf(r.Ctx); ok && r.Ctx.Err() == nil {
			out = append(out, h)
		}
	}
	return out
}

// groupDialect is the writer's dialect for a group run without
// savepoints: SQLite with the group's new outcome rows and the jobs they
// enqueue held in memory and written at Flush as multi-row INSERTs
// (sqlstore.Dialect.DeferOutcomes), one statement for the group instead of
// one per outcome. isolatedDialect is the one of a rerun with a savepoint
// per request, which writes those rows at once (a savepoint rollback must
// not take rows of earlier requests with it; Mark turns deferral off as
// well). Both run their statements without the requests' contexts
// (sqlstore.Dialect.Uninterrupted): the writer's transaction is never
// interrupted mid-group, as the runBatch comment promises, and the driver
// no longer starts a goroutine per statement to watch a context.
// groupDialect also prefetches the group's per-task reads (the requests'
// store.WriteHint) in three statements instead of three per outcome
// (sqlstore.Dialect.PrefetchTasks).
//
// behindDialect is groupDialect with the aggregates of outcomes applied
// behind their commit (Options.AggregatesBehind, behind.go).
var groupDialect, isolatedDialect, behindDialect = func() (sqlstore.Dialect, sqlstore.Dialect, sqlstore.Dialect) {
	i := sqlstore.SQLite
	i.Uninterrupted = true
	d := i
	d.DeferOutcomes = true
	d.PrefetchTasks = true // prefetch.go, runBatch
	b := d
	b.AggregatesBehind = true
	return d, i, b
}()
