package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// A read of every pattern of a project (EachPatternRank, EachPatternID)
// runs with the reader connection's page cache shrunk to scanCacheKiB, and
// the connection has its large cache back after it: the scan does not
// keep every page of the table in memory, later reads keep their cache.
func TestScanShrinksThePageCache(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "kaizen.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(ctx, func(tx store.Tx) error {
		for i := range 3 {
			p := learning.Pattern{ID: fmt.Sprintf("p-%d", i), Project: "x", Kind: learning.KindPattern,
				Content: fmt.Sprintf("pattern %d", i), Tags: []string{}, ExampleTasks: []string{}}
			if _, err := tx.InsertPattern(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.reader.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	cacheSize := func() int {
		t.Helper()
		var n int
		if err := tx.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := cacheSize(); n != -readerCacheKiB {
		t.Fatalf("reader cache_size %d before a scan, want %d", n, -readerCacheKiB)
	}
	st := sqlstore.NewTx(tx, readDialect, nil)
	scans := map[string]func(check func()) error{
		"EachPatternRank": func(check func()) error {
			return st.EachPatternRank(ctx, "x", func(*store.PatternRank) error { check(); return nil })
		},
		"EachPatternID": func(check func()) error {
			return st.EachPatternID(ctx, "x", func([]byte) error { check(); return nil })
		},
	}
	for name, scan := range scans {
		rows := 0
		err := scan(func() {
			rows++
			if n := cacheSize(); n != -scanCacheKiB {
				t.Fatalf("%s: cache_size %d during the scan, want %d", name, n, -scanCacheKiB)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if rows != 3 {
			t.Fatalf("%s: %d rows, want 3", name, rows)
		}
		if n := cacheSize(); n != -readerCacheKiB {
			t.Fatalf("%s: cache_size %d after the scan, want %d", name, n, -readerCacheKiB)
		}
	}
}
