package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// A TRUNCATE checkpoint that a reader keeps from completing gives up
// after checkpointBusyMs instead of the store's busy timeout, and the
// writer goes on committing meanwhile. It used to run on a connection of
// its own: holding the write lock, it waited for the reader for the whole
// busy timeout, and every write waited with it (here an hour: the test
// would hang, and its guard fail). Its only wait is that guard.
func TestCheckpointDoesNotStallWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kaizen.db")
	s, err := Open(ctx, path, Options{BusyTimeoutMs: 3_600_000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.UnixMicro(1_700_000_000_000_000).UTC()
	write := func(i int) error {
		return s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.InsertOutcome(ctx, learning.Outcome{Project: "p", ID: fmt.Sprintf("o%02d", i),
				TaskID: fmt.Sprintf("t%02d", i), Timestamp: at, RecordedAt: at})
			return err
		})
	}
	if err := write(0); err != nil {
		t.Fatal(err)
	}

	// A reader of another connection holds a snapshot that uses the log.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(1000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rtx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rtx.Rollback()
	var n int
	if err := rtx.QueryRowContext(ctx, "SELECT COUNT(*) FROM outcomes").Scan(&n); err != nil || n != 1 {
		t.Fatalf("reader: %d outcomes, %v", n, err)
	}

	type result struct {
		after int64
		err   error
	}
	done := make(chan result, 1)
	go func() {
		_, after, err := s.Checkpoint(ctx)
		done <- result{after, err}
	}()
	wrote := make(chan error, 1)
	go func() { wrote <- write(1) }()
	guard := time.After(2 * time.Minute) // a hang, not a speed limit
	for range 2 {
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("checkpoint with a reader: %v", r.err)
			}
			if r.after == 0 {
				t.Fatal("the log was truncated under an open reader")
			}
			done = nil
		case err := <-wrote:
			if err != nil {
				t.Fatalf("write during the checkpoint: %v", err)
			}
			wrote = nil
		case <-guard:
			t.Fatal("the checkpoint or the write beside it hangs: the checkpoint waits for the reader with the store's busy timeout")
		}
	}

	// The reader gone, the checkpoint truncates the log, and the writer's
	// busy timeout is the store's again.
	if err := rtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, after, err := s.Checkpoint(ctx); err != nil || after != 0 {
		t.Fatalf("checkpoint without readers: log %d bytes after, %v", after, err)
	}
	var busy int
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil || busy != 3_600_000 {
		t.Fatalf("writer busy_timeout after the checkpoint = %d (%v), want 3600000", busy, err)
	}
	if err := write(2); err != nil {
		t.Fatal(err)
	}
}
