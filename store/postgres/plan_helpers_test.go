package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// numbered rewrites a query's ? placeholders as $1, $2, … (what the
// store's driver does before sending it).
func numbered(q string) string {
	for n := 1; strings.Contains(q, "?"); n++ {
		q = strings.Replace(q, "?", fmt.Sprintf("$%d", n), 1)
	}
	return q
}

// explainLines runs EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) of stmt on
// conn and returns the plan's lines.
func explainLines(t *testing.T, ctx context.Context, conn *sql.Conn, stmt string, args ...any) []string {
	t.Helper()
	rows, err := conn.QueryContext(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
