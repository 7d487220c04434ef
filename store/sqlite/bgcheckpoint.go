package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// Background checkpoints. SQLite's automatic checkpoint runs inside the
// COMMIT that crosses wal_autocheckpoint pages, on the connection that
// committed: with the single writer that is the group commit itself, so
// every dozen groups one of them also copied about 1,000 pages into the
// database file and made two more fsyncs before its requests were
// acknowledged (under the record benchmark, a commit group writes about 80
// WAL frames). Instead a checkpointer goroutine, on a connection of its
// own, runs a PASSIVE checkpoint after every checkpointEvery committed
// groups; it never blocks the writer (WAL lets one checkpointer and one
// writer work at once) and the writer's log restarts from its beginning
// once a checkpoint has copied every frame. The writer keeps an automatic
// checkpoint at writerAutoCheckpoint pages as a backstop, should the
// checkpointer fall behind.
//
// Durability does not depend on checkpoints: a commit is acknowledged after
// its WAL frames are fsynced (synchronous=FULL), and a checkpoint only
// copies frames that are already durable.

const (
	// checkpointEvery is the committed groups between two background
	// checkpoints (about 1,000 WAL pages under load, as SQLite's default).
	checkpointEvery = 12
	// writerAutoCheckpoint is the writer's automatic checkpoint, in WAL
	// pages: a backstop, ten times SQLite's default.
	writerAutoCheckpoint = 10_000
)

// checkpointResult is what a PASSIVE checkpoint reported.
type checkpointResult struct {
	busy, logFrames, checkpointed int64
	err                           error
}

// kickCheckpoint is called by the writer after each committed group: every
// checkpointEvery groups it asks the checkpointer for a checkpoint, without
// waiting (a checkpoint still running absorbs the request).
func (s *Store) kickCheckpoint() {
	s.sinceCheckpoint++
	if s.sinceCheckpoint < checkpointEvery {
		return
	}
	select {
	case s.ckptKick <- struct{}{}:
		s.sinceCheckpoint = 0
	default:
	}
}

// checkpointLoop runs the background checkpoints until the store closes.
func (s *Store) checkpointLoop() {
	defer close(s.ckptDone)
	for {
		select {
		case <-s.ckptKick:
		case <-s.quit:
			return
		}
		var r checkpointResult
		r.err = s.ckpt.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").
			Scan(&r.busy, &r.logFrames, &r.checkpointed)
		if r.err != nil {
			r.err = fmt.Errorf("sqlite background checkpoint: %w", r.err)
		}
		s.checkpoints.Add(1)
		if s.onCheckpoint != nil {
			s.onCheckpoint(r)
		}
	}
}

// openCheckpointer opens the checkpointer's connection: read-write, one
// connection, the writer's settings.
func openCheckpointer(path string, opts Options) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, opts, "deferred", false))
	if err != nil {
		return nil, fmt.Errorf("open sqlite checkpointer %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}
