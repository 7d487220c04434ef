package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/store/sqlite"
)

// The queries on hot paths must use an index seek, never walk every row of
// a project: SQLite has no statistics by default, so a plan can silently
// degrade to a scan that only shows at scale.
func TestHotQueryPlans(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "k.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct {
		query, wantIndex string
		noSort           bool // the index gives the order: no temporary b-tree
	}{
		{query: `SELECT id FROM patterns INDEXED BY patterns_content_hash WHERE project = 'p' AND content_hash = 'x' AND content_key = 'y'`,
			wantIndex: "patterns_content_hash (project=? AND content_hash=?)"},
		{query: `SELECT id FROM patterns WHERE project = 'p' AND id = 'x'`, wantIndex: "PRIMARY KEY (project=? AND id=?)"},
		{query: `SELECT helpful_sum FROM maturity WHERE project = 'p' AND pattern_id = 'x'`, wantIndex: "PRIMARY KEY (project=? AND pattern_id=?)"},
		{query: `SELECT name FROM criteria WHERE project = 'p' AND name = 'x'`, wantIndex: "PRIMARY KEY (project=? AND name=?)"},
		{query: `SELECT id FROM errors WHERE project = 'p' AND task_id = 't' AND resolved = FALSE ORDER BY ts, id`, wantIndex: "errors_task (project=? AND task_id=?)"},
		{query: `SELECT id FROM maturity_feedback WHERE project = 'p' AND pattern_id = 'x' ORDER BY ts, id`, wantIndex: "maturity_feedback_pattern (project=? AND pattern_id=?)"},
		{query: `SELECT id FROM outcomes WHERE project = 'p' AND task_id = 't'`, wantIndex: "outcomes_task (project=? AND task_id=?)"},
		// a task's outcome, newest first (sqlstore's ListOutcomes by task):
		// without the hint the ORDER BY's index walks the whole project;
		// since migration 21 the index holds the order (no sorter per lookup)
		{query: `SELECT id FROM outcomes INDEXED BY outcomes_task WHERE project = 'p' AND task_id = 't' ORDER BY recorded_at DESC, id DESC LIMIT 1`,
			wantIndex: "outcomes_task (project=? AND task_id=?)", noSort: true},
		// the writer's prefetch of a group's per-task reads (sqlstore's
		// prefetchProject): one seek per task of the IN list
		{query: `SELECT id FROM outcomes INDEXED BY outcomes_task WHERE project = 'p' AND task_id IN ('a', 'b') ORDER BY task_id DESC, recorded_at DESC, id DESC`,
			wantIndex: "outcomes_task (project=? AND task_id=?)", noSort: true},
		{query: `SELECT id FROM tasks WHERE project = 'p' AND id IN ('a', 'b') ORDER BY id`, wantIndex: "PRIMARY KEY (project=? AND id=?)", noSort: true},
		{query: `SELECT id FROM errors WHERE project = 'p' AND task_id IN ('a', 'b') ORDER BY task_id, ts, id`,
			wantIndex: "errors_task (project=? AND task_id=?)", noSort: true},
	}
	for _, c := range cases {
		rows, err := db.Query("EXPLAIN QUERY PLAN " + c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "; "); !strings.Contains(got, c.wantIndex) || strings.Contains(got, "SCAN") ||
			(c.noSort && strings.Contains(got, "TEMP B-TREE")) {
			t.Errorf("%s\n  plan: %s\n  want a seek on %s", c.query, got, c.wantIndex)
		}
	}
}
