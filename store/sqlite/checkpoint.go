package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// Checkpoint implements store.Checkpointer: it copies the write-ahead log
// into the database and truncates the log (PRAGMA wal_checkpoint(TRUNCATE)),
// returning the log's size before and after. Readers in progress may keep
// it from completing; the log then stays as large as it was, and the next
// checkpoint retries.
//
// A TRUNCATE checkpoint takes the database's write lock and then waits
// for every reader of the log. Run on a connection of its own, it and the
// writer goroutine waited for each other under a steady write load: each
// retry of the writer's BEGIN held a read mark for an instant, so the
// checkpoint kept waiting, with the write lock, until its busy timeout
// (10 s) ran out, and no write committed meanwhile (the retention job
// that calls it runs when the daemon starts: 16 outcomes in 10 s instead
// of 60,000). It therefore runs on the writer's own connection, between
// two groups (connMu), so this process's writer never waits on its lock,
// and it waits for readers at most checkpointBusyMs: past that it gives
// up (the log keeps its size) and writing resumes. A writer of another
// process waits on it at most that long too.
func (s *Store) Checkpoint(ctx context.Context) (before, after int64, err error) {
	before = walSize(s.path)
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if err := s.setBusyTimeout(checkpointBusyMs); err != nil {
		return before, before, fmt.Errorf("sqlite checkpoint: %w", err)
	}
	var busy, logFrames, done int64
	err = s.wconn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
	if rerr := s.setBusyTimeout(s.opts.BusyTimeoutMs); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return before, walSize(s.path), fmt.Errorf("sqlite checkpoint: %w", err)
	}
	return before, walSize(s.path), nil
}

// checkpointBusyMs is how long Checkpoint waits for readers of the log.
const checkpointBusyMs = 200

// setBusyTimeout sets the writer connection's busy timeout (connMu held,
// or the writer goroutine).
func (s *Store) setBusyTimeout(ms int) error {
	_, err := s.wconn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", ms))
	return err
}

func walSize(db string) int64 {
	fi, err := os.Stat(db + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}
