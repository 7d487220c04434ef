package kaizen_test

import (
	"path/filepath"
	"testing"

	kaizen "github.com/kaizenhq/kaizen"
)

// TestSameTaskInOneGroupSQLite is TestSameTaskInOneGroupPostgres on
// SQLite, whose writer prefetches a group's per-task reads too
// (sqlstore.Dialect.PrefetchTasks), with an inferred first recording of
// every other task that the explicit ones replace: each task recorded
// several times at once keeps one outcome, counted once in its patterns,
// and exactly one of its explicit recordings is not Unchanged.
func TestSameTaskInOneGroupSQLite(t *testing.T) {
	t.Parallel()
	cfg := kaizen.DefaultConfig()
	cfg.Project, cfg.Home = "same-group", t.TempDir()
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	recordSameTasksAtOnce(t, cfg, true)
}
