package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/store/sqlite"
)

// The experience queries on hot paths seek an index: full-text search goes
// through the FTS5 index and its statistics' primary key (never a scan of
// the documents), and listings use their (project, …) indexes.
func TestExperienceQueryPlans(t *testing.T) {
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
		query string
		want  []string // every one must appear in the plan
		scan  string   // a SCAN allowed in the plan ("" for none)
	}{
		{`SELECT ref_id FROM search_postings WHERE project = 'p' AND kind = 'memory' AND term = 'a'`,
			[]string{"PRIMARY KEY (project=? AND kind=? AND term=?)"}, ""},
		{`SELECT ref_id FROM search_postings WHERE project = 'p' AND kind = 'memory' AND term = 'a' ORDER BY ref_id DESC LIMIT 5`,
			[]string{"PRIMARY KEY (project=? AND kind=? AND term=?)"}, "TEMP B-TREE"},
		{`SELECT ref_id, body FROM search_docs WHERE id IN (1, 2, 3)`, []string{"INTEGER PRIMARY KEY (rowid=?)"}, ""},
		{`SELECT term, docs FROM search_terms WHERE project = 'p' AND kind = 'memory' AND term IN ('a', 'b')`,
			[]string{"PRIMARY KEY (project=? AND kind=? AND term=?)"}, ""},
		{`SELECT body FROM search_docs WHERE project = 'p' AND kind = 'memory' AND ref_id = 'r'`,
			[]string{"search_docs_ref (project=? AND kind=? AND ref_id=?)"}, ""},
		{`SELECT ref_id FROM embeddings WHERE project = 'p' AND kind = 'heuristic' AND embedder = 'e' ORDER BY ref_id`,
			[]string{"embeddings_embedder (project=? AND kind=? AND embedder=?)"}, ""},
		{`SELECT d.ref_id FROM search_docs d LEFT JOIN embeddings e ON e.project = d.project AND e.kind = d.kind AND e.ref_id = d.ref_id
			WHERE d.project = 'p' AND d.kind = 'heuristic' AND (e.ref_id IS NULL OR e.embedder <> 'x' OR e.dim <> 3) ORDER BY d.ref_id LIMIT 10`,
			[]string{"search_docs_ref (project=? AND kind=?)", "PRIMARY KEY (project=? AND kind=? AND ref_id=?)"}, ""},
		{`SELECT id FROM heuristics WHERE project = 'p' ORDER BY updated_at DESC, id DESC LIMIT 10`,
			[]string{"heuristics_updated (project=?)"}, ""},
		{`SELECT id FROM heuristics WHERE project = 'p' AND status IN ('active') ORDER BY updated_at DESC, id DESC LIMIT 10`,
			[]string{"heuristics_status (project=? AND status=?)"}, ""},
		{`SELECT id FROM recalls WHERE project = 'p' AND id IN (SELECT recall_id FROM recall_items WHERE project = 'p' AND ref_id = 'h')
			ORDER BY created_at DESC, id DESC`,
			[]string{"PRIMARY KEY (project=? AND ref_id=?)"}, ""},
		{`SELECT id FROM experience_turns WHERE project = 'p' AND task_id = 't' ORDER BY ts, id`,
			[]string{"experience_turns_task (project=? AND task_id=?)"}, ""},
		{`SELECT id FROM skills WHERE project = 'p' AND name = 'n'`, []string{"skills_name (project=? AND name=?)"}, ""},
		{`SELECT task_id FROM heuristic_support WHERE project = 'p' AND heuristic_id = 'h' ORDER BY created_at, task_id`,
			[]string{"heuristic_support_created (project=? AND heuristic_id=?)"}, ""},
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
		got := strings.Join(plan, "; ")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s\n  plan: %s\n  want %s", c.query, got, w)
			}
		}
		got = strings.ReplaceAll(got, "SCAN (subquery-1)", "READ (subquery-1)") // a coroutine's rows, not a table
		if rest := strings.ReplaceAll(got, c.scan, ""); c.scan == "" && strings.Contains(got, "SCAN") || strings.Contains(rest, "SCAN ") {
			t.Errorf("%s\n  plan: %s\n  scans a table", c.query, got)
		}
	}
}
