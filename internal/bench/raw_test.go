package bench_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/bench"
	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// rawCounts runs the raw scenario briefly and checks that every row it
// reports is in the table: its rate counts committed rows only.
func rawCounts(t *testing.T, db *sql.DB, numbered bool) {
	ctx := context.Background()
	if err := bench.RawSetup(ctx, db); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, rows := range []int{1, 4} {
		res, err := bench.Raw(ctx, db, numbered, 3, rows, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if res.RowsPerTx != rows || res.Callers != 3 || res.Rows%int64(rows) != 0 || res.Latency.N != int(res.Rows)/rows {
			t.Fatalf("rows per tx %d: %+v", rows, res)
		}
		total += res.Rows
	}
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM kaizen_bench_raw").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != total {
		t.Fatalf("table holds %d rows, the scenario reported %d", n, total)
	}
	if err := bench.RawDrop(ctx, db); err != nil {
		t.Fatal(err)
	}
}

func TestRawSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", sqlite.DSN(filepath.Join(t.TempDir(), "raw.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var sync int
	if err := db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("raw SQLite must use the store's durability, synchronous=FULL (2): got %d, %v", sync, err)
	}
	rawCounts(t, db, false)
}

func TestRawPostgres(t *testing.T) {
	db, err := sql.Open("pgx", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rawCounts(t, db, true)
}
