package store

import (
	"context"
	"time"
)

// LedgerStorage holds what makes repeated deliveries harmless: the keys of
// the events already applied (a hook event ingested from the spool, one
// step of it per key), and the removal of an outcome kaizen inferred by
// itself when an explicit one replaces it.
type LedgerStorage interface {
	// MarkEvent records that the event key was applied at time at. It
	// reports false, changing nothing, when the key was already applied at
	// a time less than window away from at (the same event delivered again,
	// or twice by two installed hooks); otherwise it records at and reports
	// true. Concurrent transactions marking the same key are serialised
	// until commit, so MarkEvent also serves as a lock on a key.
	MarkEvent(ctx context.Context, project, key string, at time.Time, window time.Duration) (bool, error)
	// LockKey serialises the transactions that lock the same key until
	// they commit, and writes nothing (where writes are already serialised,
	// as on SQLite, it does nothing).
	LockKey(ctx context.Context, project, key string) error
	// PruneEvents forgets the keys applied before the given time and
	// returns how many it removed.
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
	// Removing an outcome uses ForgetStorage.DeleteOutcome and
	// DeleteMaturityFeedback.
}
