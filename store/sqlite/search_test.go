package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
	"github.com/kaizenhq/kaizen/store/sqlstore"
	"github.com/kaizenhq/kaizen/store/storetest"
)

func TestFullTextStatistics(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "k.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := rawDB(t, path)
	storetest.SQLFullTextStatistics(t, s, db, sqlstore.SQLite)
}

// The migration that introduced the statistics fills them from the
// documents of a database written before it.
func TestFullTextStatisticsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.FullTextWorkload(t, s)
	s.Close()
	db := rawDB(t, path)
	for _, q := range []string{`DELETE FROM search_terms`, `DELETE FROM search_stats`,
		`DELETE FROM goose_db_version WHERE version_id = 6`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if s, err = sqlite.Open(ctx, path, sqlite.Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.SQLFullTextMigrated(t, s, db, sqlstore.SQLite)
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A search reads a bounded number of postings: a term in more documents
// than the budget is read from its newest documents, and the rarer terms
// of a query still rank the documents holding them first.
func TestFullTextPostingBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "k.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const budget = sqlstore.PostingBudget
	const docs = budget + 300 // more than the budget of postings
	err = s.Update(ctx, func(tx store.Tx) error {
		for i := range docs {
			text := fmt.Sprintf("common filler%d", i%97)
			if i%1000 == 7 {
				text += " needle"
			}
			if err := tx.PutSearchDoc(ctx, "p", experience.ItemMemory, fmt.Sprintf("m-%05d", i), text); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	search := func(limit int, tokens ...string) []store.TextHit {
		t.Helper()
		var hits []store.TextHit
		err := s.View(ctx, func(tx store.Tx) error {
			hits, err = tx.SearchText(ctx, "p", experience.ItemMemory, tokens, limit)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	hits := search(5, "common", "needle")
	if len(hits) != 5 {
		t.Fatalf("hits %v", hits)
	}
	for _, h := range hits {
		if n, _ := strconv.Atoi(strings.TrimPrefix(h.RefID, "m-")); n%1000 != 7 {
			t.Errorf("%s ranks among the first without the rare term: %v", h.RefID, hits)
		}
	}
	// "common" alone: only its newest budget documents are read, so the 300
	// oldest are never returned.
	all := search(0, "common")
	if len(all) != budget {
		t.Fatalf("search common: %d hits, want the %d newest", len(all), budget)
	}
	for _, h := range all {
		if n, _ := strconv.Atoi(strings.TrimPrefix(h.RefID, "m-")); n < docs-budget {
			t.Fatalf("%s is older than the newest %d documents of the term", h.RefID, budget)
		}
	}
}
