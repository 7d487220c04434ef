package store

import (
	"context"
	"time"
)

// RetentionStorage bounds what grows with use and is not evidence: stored
// recall events. Unlike the rest of Tx its methods span every project (the
// retention policy is one per database).
type RetentionStorage interface {
	// CompactRecalls rewrites up to limit stored recalls that still list
	// items which were considered but not injected, keeping only the
	// injected ones (and their recall_items rows). It returns how many
	// recalls it rewrote; fewer than limit means none is left.
	CompactRecalls(ctx context.Context, limit int) (int64, error)
	// PruneRecalls deletes the recalls created before before (zero: no age
	// limit) and, in each project, all but the newest keep (0: no count
	// limit), with their recall_items rows. It returns how many recalls it
	// deleted.
	PruneRecalls(ctx context.Context, before time.Time, keep int) (int64, error)
}

// Checkpointer is implemented by stores with a write-ahead log that can be
// folded back into the database and truncated (SQLite in WAL mode).
type Checkpointer interface {
	// Checkpoint copies the write-ahead log into the database and
	// truncates it, returning the log's size in bytes before and after.
	Checkpoint(ctx context.Context) (before, after int64, err error)
}
