package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// A search's lookup of a common term's documents that contain a rarer
// term (sqlstore.PostingsWithin) seeks each such document in the common
// term's postings, on a table never analysed: it must not read the common
// term's postings (thousands, each visiting the heap before the first
// VACUUM) and filter them.
func TestPostingsWithinPlanSeeksOnANewTable(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `INSERT INTO search_postings (project, kind, term, ref_id)
		SELECT 'p', 'memory', 'common', 'm' || lpad(i::text, 6, '0') FROM generate_series(1, 5000) AS i
		UNION ALL SELECT 'p', 'memory', 'rare', 'm' || lpad((i * 997)::text, 6, '0') FROM generate_series(1, 5) AS i`); err != nil {
		t.Fatal(err)
	}
	q := sqlstore.PostingsWithin(sqlstore.Postgres)
	args := []any{"p", "memory", "rare"}
	for range 31 {
		args = append(args, "")
	}
	args = append(args, "p", "memory", "common")
	q = numbered(q)
	var got string
	if err := conn.QueryRowContext(ctx, q, args...).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Split(got, "\x1f")); n != 5 {
		t.Fatalf("%d documents with both terms (%q), want 5", n, got)
	}
	plan := explainLines(t, ctx, conn, q, args...)
	text := strings.Join(plan, "\n")
	seek := false
	for _, line := range plan {
		if strings.Contains(line, "Index Cond") && strings.Contains(line, "term = 'common'") && strings.Contains(line, "ref_id = ") {
			seek = true
		}
		if strings.Contains(line, "Rows Removed") || strings.Contains(line, "Seq Scan") || strings.Contains(line, "Hash") {
			t.Errorf("the plan reads postings it does not keep:\n%s", text)
			break
		}
	}
	if !seek {
		t.Errorf("the plan does not seek the documents in the common term's postings:\n%s", text)
	}
}
