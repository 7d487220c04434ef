package postgres

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/store"
)

// A search_path that names no existing schema is a configuration error
// (store.ErrMisconfigured) that names the path and the fix, and Open
// creates nothing: with the schema created, the same DSN opens.
func TestOpenWithoutASchema(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t) // a fresh schema, dropped at cleanup
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	q := u.Query()
	q.Set("search_path", schema+"_missing")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	s, err := Open(ctx, u.String())
	if err == nil {
		s.Close()
		t.Fatal("opened a database whose search_path names no schema")
	}
	if !errors.Is(err, store.ErrMisconfigured) || !strings.Contains(err.Error(), schema+"_missing") || !strings.Contains(err.Error(), "CREATE SCHEMA") {
		t.Fatalf("error %v: want store.ErrMisconfigured naming the path and the fix", err)
	}
	// The schema that exists opens, and holds the tables.
	s, err = Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'outcomes'`, schema).Scan(&n); err != nil || n != 1 {
		t.Fatalf("outcomes table in %s: %d, %v", schema, n, err)
	}
}
