package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// Migration 12 fills the posting table from the documents written under
// FTS5 (its Down restores FTS5 from them), and a search then finds them,
// each project its own.
func TestPostingTableMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"a": "retry the payment request with an idempotency key", "b": "重试 支付 请求", "c": "the cache expires"}
	err = s.Update(ctx, func(tx store.Tx) error {
		for id, text := range docs {
			for _, p := range []string{"p1", "p2"} {
				if err := tx.PutSearchDoc(ctx, p, experience.ItemHeuristic, p+"-"+id, experience.SearchText(text)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, backfill, goose.WithAllowOutofOrder(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatalf("down to 11: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH 'body : "retry"'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("FTS5 after the Down: %d matches, %v", n, err)
	}

	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		project string
		tokens  []string
		want    []string
	}{
		{"p1", []string{"retry", "payment"}, []string{"p1-a"}},
		{"p2", []string{"重试"}, []string{"p2-b"}},
		{"p2", []string{"cache"}, []string{"p2-c"}},
	} {
		var got []string
		err := s.View(ctx, func(tx store.Tx) error {
			hits, err := tx.SearchText(ctx, c.project, experience.ItemHeuristic, c.tokens, 10)
			for _, h := range hits {
				got = append(got, h.RefID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %v: got %v, want %v", c.project, c.tokens, got, c.want)
		}
	}
}
