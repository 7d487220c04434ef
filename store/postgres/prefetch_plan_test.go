package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// The writer plans its prefetch reads once per connection, generically
// (GenericPlans), and keeps the plan until the table is analysed: a plan
// made while outcomes is empty must still look each task up through the
// index with both keys, not read the project's outcomes and filter them
// by task (sqlstore/prefetch_plans.go). The read by task = ANY($2) it
// replaces failed this: its generic plan on a new table had the task
// only in a Filter.
func TestPrevOutcomeReadPlansIndexLookupsOnANewTable(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	q := numbered(sqlstore.PrevOutcomesByTask)
	for _, st := range []string{
		"SET plan_cache_mode = force_generic_plan",
		"PREPARE prev_outcomes(text[], text) AS " + q,
		"EXECUTE prev_outcomes(ARRAY['t1'], 'p')", // the generic plan is made here, on an empty table
		`INSERT INTO outcomes (project, id, task_id, duration_ms, error_count, retry_count, success, files_touched,
			strategy, failure_mode, failure_details, ts, patterns, criteria, error_count_source, raw_score, score_type, score, recorded_at,
			exploration, task, tags, criterion_scores, inference)
			SELECT 'p', 'o' || i, 't' || i, 0, 0, 0, true, '[]', '', '', '', i, '[]', '[]', '', 0, '', '{}', i, '', '', '[]', '{}', ''
			FROM generate_series(1, 2000) AS i`,
	} {
		if _, err := conn.ExecContext(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	plan := explainLines(t, ctx, conn, "EXECUTE prev_outcomes(ARRAY['t5', 't7', 'zz'], 'p')")
	text := strings.Join(plan, "\n")
	lookup, filter := false, false
	for _, line := range plan {
		if strings.Contains(line, "Index Cond") && strings.Contains(line, "project") && strings.Contains(line, "task_id") {
			lookup = true
		}
		filter = filter || strings.Contains(line, "Filter") || strings.Contains(line, "Rows Removed")
	}
	if filter {
		t.Errorf("the generic plan filters rows:\n%s", text)
	}
	if !lookup {
		t.Errorf("the generic plan does not look the tasks up by project and task in an index:\n%s", text)
	}
}
