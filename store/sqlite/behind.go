package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// Aggregates applied behind (Options.AggregatesWhenIdle, [store]
// aggregates = "idle", the engine's default; Options.AggregatesBehind,
// "behind"; issue 17). A group whose requests all recorded outcomes that
// deferred their aggregates (store.AggregateDeferrer) or were neutral
// (they left the aggregates alone: a job claimed, a task's rows;
// sqlstore.Tx.RequestDone) commits only its own rows (outcomes, tasks,
// jobs) and one aggregate_journal row per outcome; the aggregate rows
// those outcomes changed stay staged in the writer's cache, carried to the
// next group (sqlstore/behind.go). The next group that is not such a
// group — any other write, a read's barrier below (View; not ViewRows), or
// a cache past maxPendingAggregates staged rows — writes them all,
// coalesced (one write per row for any number of outcomes), and empties
// the journal in the same commit.
//
// Crash safety: the journal names exactly the acknowledged outcomes whose
// aggregates are not in SQL. Whenever the writer starts a group without
// the staged cache that goes with the journal — after Open, after a group
// that failed or rolled back, after another connection wrote the file
// (PRAGMA data_version, carry.go) — it replays the journal inside the
// group first (the service layer's logic, SetAggregateReplay), at the
// instants journaled, and the group ends with the full flush. The replay
// runs whether or not the option is on, so turning it off keeps a
// journal's outcomes.
//
// Read-your-writes: while aggregates are staged, View first submits an
// empty write, whose group writes them, so a read started after an
// acknowledged outcome sees its aggregates. Another process reading the
// file sees them once this process writes them: with "idle" at the latest
// once the writer has waited idleFlushDelay for a request, once the oldest
// staged outcome is maxStaleness old, or at Close; with "behind" at its
// next View or write that is neither an outcome nor neutral, or its next
// open.

// maxPendingAggregates bounds the rows a behind group leaves staged: past
// it the group writes them.
const maxPendingAggregates = 4096

// errNoReplay: the journal holds outcomes and nobody registered the
// replay (a store opened outside the engine).
var errNoReplay = errors.New("sqlite: the aggregate journal holds outcomes to replay and no replay is registered")

// SetAggregateReplay registers the replay of journaled outcomes (the
// engine does, before its first write or read).
func (s *Store) SetAggregateReplay(fn store.AggregateReplay) {
	s.replayMu.Lock()
	s.replay = fn
	s.replayMu.Unlock()
}

// journalPending reads whether the journal holds outcomes (at Open).
func journalPending(ctx context.Context, db *sql.DB) (bool, error) {
	var n int64
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM aggregate_journal`).Scan(&n); err != nil {
		return false, fmt.Errorf("read aggregate journal: %w", err)
	}
	return n > 0, nil
}

// replayJournal re-applies the journal's outcomes in the group's
// transaction; the group then ends with the full flush.
func (s *Store) replayJournal(ctx context.Context, tx *sqlstore.Tx) error {
	entries, err := tx.Journal(ctx)
	if err != nil {
		return err
	}
	tx.ForceFull()
	if len(entries) == 0 {
		return nil
	}
	s.replayMu.Lock()
	fn := s.replay
	s.replayMu.Unlock()
	if fn == nil {
		return errNoReplay
	}
	if err := fn(ctx, tx, entries); err != nil {
		return fmt.Errorf("replay aggregate journal: %w", err)
	}
	s.replayed.Add(int64(len(entries)))
	return nil
}

// noWrite is the empty write of the barrier and the idle flush: its group
// writes the staged aggregates and empties the journal (it would be a
// neutral request otherwise, which leaves them staged).
func noWrite(tx store.Tx) error {
	if t, ok := tx.(*sqlstore.Tx); ok {
		t.ForceFull()
	}
	return nil
}

// aggregateBarrier makes the staged aggregates visible to a read: an
// empty write, whose group writes them.
func (s *Store) aggregateBarrier(ctx context.Context) error {
	if !s.journaled.Load() {
		return nil
	}
	return s.queue.Submit(ctx, noWrite)
}

// idleFlushDelay is how long the writer of "idle" waits for a request,
// with aggregates staged, before it writes them on its own; maxStaleness
// bounds how long an acknowledged outcome's aggregates stay staged while
// the writer is never idle. Another process reading the file sees an
// outcome's aggregates at most about maxStaleness after its commit.
const (
	idleFlushDelay = 10 * time.Millisecond
	maxStaleness   = time.Second
)

// defersAggregates says whether a group lets its outcomes' aggregates
// stay staged: always with "behind"; with "idle" unless the oldest staged
// outcome is maxStaleness old.
func (s *Store) defersAggregates() bool {
	if s.opts.AggregatesBehind {
		return true
	}
	return s.opts.AggregatesWhenIdle && (!s.journaled.Load() || time.Since(s.stagedSince) < maxStaleness)
}

// idleFlushDue says whether the writer writes staged aggregates when it
// is idle, and at Close ("idle"; "behind" leaves them to the next write or
// read, or to the replay after the next open). Only aggregates this
// writer staged, and one attempt each time: a journal found at Open, or
// left by a flush that failed, is written by the next group as with
// "behind".
func (s *Store) idleFlushDue() bool {
	return s.opts.AggregatesWhenIdle && !s.opts.AggregatesBehind && s.journaled.Load() && !s.stagedSince.IsZero()
}

// idleFlush is the writer's own group that writes the staged aggregates.
func (s *Store) idleFlush() {
	s.stagedSince = time.Time{} // one attempt (idleFlushDue)
	s.commit([]*request{{Ctx: context.Background(), Fn: noWrite, Done: make(chan error, 1)}})
	s.idleFlushes.Add(1)
}

// flush ends a group: the full Flush, or when the group defers (allowed)
// or a journal is to be emptied, FlushBehind.
func (s *Store) flush(ctx context.Context, tx *sqlstore.Tx, requests int, allowed bool) (behind bool, err error) {
	if !allowed && !s.journaled.Load() {
		return false, tx.Flush(ctx)
	}
	return tx.FlushBehind(ctx, requests, allowed, maxPendingAggregates)
}

// committed keeps what a committed group leaves for the next one: its
// whole staged cache after a behind flush, else the clean cache (carry.go).
func (s *Store) committed(tx *sqlstore.Tx, version int64, carry, behind bool) {
	if behind {
		s.carried, s.dataVersion = tx.CarryAll(), version
		if !s.journaled.Load() {
			s.stagedSince = time.Now()
		}
		s.journaled.Store(true)
		s.behind.Add(1)
		return
	}
	s.journaled.Store(false)
	if carry {
		s.carry(tx, version)
	}
}

// rollback rolls a group back; a group that started from the staged
// cache leaves it, reverted, for the next group (the database holds what
// it held when the cache was carried).
func (s *Store) rollback(tx *sql.Tx, wrapped *sqlstore.Tx) {
	_ = tx.Rollback()
	if c := wrapped.Restore(); c != nil {
		s.carried = c // s.dataVersion is still the version it was adopted at
	}
}
