package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RawResult is the driver's own ceiling: callers inserting rows into one
// plain table through the same database/sql driver, at the same durability
// as the store, with RowsPerTx rows in each transaction.
type RawResult struct {
	RowsPerTx int     `json:"rows_per_tx"`
	Callers   int     `json:"callers"`
	Rows      int64   `json:"rows"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"rows_per_second"`
	// Latency is per transaction.
	Latency Latencies `json:"latency"`
	// Samples are the latencies (for merging rounds).
	Samples []time.Duration `json:"-"`
}

// MergeRaw adds the results of one more round.
func MergeRaw(a, b RawResult) RawResult {
	a.RowsPerTx, a.Callers = b.RowsPerTx, b.Callers
	a.Rows += b.Rows
	a.Seconds += b.Seconds
	a.Samples = append(a.Samples, b.Samples...)
	a.Latency = Summarise(a.Samples)
	if a.Seconds > 0 {
		a.PerSecond = float64(a.Rows) / a.Seconds
	}
	return a
}

// rawTable is the table of the raw scenario: a text key, a project, a
// payload about the size of an outcome row's JSON columns and a time.
const rawTable = "kaizen_bench_raw"

// RawSetup creates (or empties) the raw table in db.
func RawSetup(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+rawTable); err != nil {
		return fmt.Errorf("raw setup: %w", err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+rawTable+
		" (id TEXT PRIMARY KEY, project TEXT NOT NULL, payload TEXT NOT NULL, at BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("raw setup: %w", err)
	}
	return nil
}

// RawDrop removes the raw table.
func RawDrop(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+rawTable)
	return err
}

// Raw runs callers goroutines inserting rowsPerTx rows per transaction into
// the raw table of db for d. numbered selects $n placeholders (PostgreSQL).
// Every transaction is committed before the next one of its caller starts,
// so the rate is that of acknowledged durable rows.
func Raw(ctx context.Context, db *sql.DB, numbered bool, callers, rowsPerTx int, d time.Duration) (RawResult, error) {
	rowsPerTx = max(1, rowsPerTx)
	q := "INSERT INTO " + rawTable + " (id, project, payload, at) VALUES (?, ?, ?, ?)"
	if numbered {
		q = strings.NewReplacer("?, ?, ?, ?", "$1, $2, $3, $4").Replace(q)
	}
	payload := `{"criteria":["accuracy","efficiency","reliability","completeness"],"patterns":["split by feature","tests alongside implementation"],"files":[]}`
	var (
		rows     atomic.Int64
		mu       sync.Mutex
		all      []time.Duration
		wg       sync.WaitGroup
		firstErr atomic.Value
		run      = rand.Uint64() // distinct keys across runs on one table
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				t0 := time.Now()
				err := func() error {
					tx, err := db.BeginTx(ctx, nil)
					if err != nil {
						return err
					}
					defer tx.Rollback()
					for j := range rowsPerTx {
						if _, err := tx.ExecContext(ctx, q, fmt.Sprintf("%x-%d-%d-%d", run, c, i, j), "bench-raw",
							payload, t0.UnixMicro()); err != nil {
							return err
						}
					}
					return tx.Commit()
				}()
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				local = append(local, time.Since(t0))
				rows.Add(int64(rowsPerTx))
			}
			mu.Lock()
			all = append(all, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	res := RawResult{RowsPerTx: rowsPerTx, Callers: callers, Rows: rows.Load(), Seconds: secs,
		PerSecond: float64(rows.Load()) / secs, Latency: Summarise(all), Samples: all}
	if err, ok := firstErr.Load().(error); ok {
		return res, fmt.Errorf("raw insert: %w", err)
	}
	return res, nil
}
