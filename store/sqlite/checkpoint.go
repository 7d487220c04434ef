package sqlite

import (
	"context"
	"fmt"
	"os"
)

// Checkpoint implements store.Checkpointer: it copies the write-ahead log
// into the database and truncates the log (PRAGMA wal_checkpoint(TRUNCATE)),
// returning the log's size before and after. Readers in progress may keep
// it from completing; the log then stays as large as it was, and the next
// checkpoint retries.
func (s *Store) Checkpoint(ctx context.Context) (before, after int64, err error) {
	before = walSize(s.path)
	var busy, logFrames, done int64
	if err := s.writer.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return before, before, fmt.Errorf("sqlite checkpoint: %w", err)
	}
	return before, walSize(s.path), nil
}

func walSize(db string) int64 {
	fi, err := os.Stat(db + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}
