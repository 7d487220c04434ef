package store

import (
	"context"
	"time"
)

// Aggregates applied behind (SQLite's [store] aggregates = "idle", the
// default, or "behind"). A
// store that supports it acknowledges an outcome once the outcome row and
// a journal entry are durable, and writes the aggregates the outcome
// changed (criteria, pattern counts and maturity, maturity feedback,
// pattern versions) later, coalesced with those of other outcomes, in one
// commit that also empties the journal. After a crash the journal's
// outcomes are replayed in order over the aggregates last written.

// AggregateEntry is one journaled outcome: its aggregates are applied as
// of At (the time the recording transaction evaluated them).
type AggregateEntry struct {
	Project, OutcomeID string
	At                 time.Time
}

// AggregateDeferrer is implemented by a write transaction that can apply
// an outcome's aggregates behind its commit. DeferAggregates journals the
// outcome when the transaction can (otherwise its aggregates are written
// in its commit, as always); the caller calls it only when replaying the
// entry over the aggregates as they were before the outcome reproduces
// exactly what the transaction changed.
type AggregateDeferrer interface {
	DeferAggregates(project, outcomeID string, at time.Time)
}

// RowViewer is implemented by a store whose View first writes the
// aggregates it staged (SQLite with [store] aggregates = "idle" or
// "behind"), so that a read sees them. ViewRows reads without that write:
// for reads of rows that are never staged — jobs, tasks, outcomes, errors,
// written in the commit that acknowledged them — it sees the same, and a
// frequent reader of them (the job runner) does not write the staged
// aggregates each time.
type RowViewer interface {
	ViewRows(ctx context.Context, fn func(Tx) error) error
}

// ViewRows reads with s.ViewRows when s is a RowViewer, else s.View.
// Use it only for reads of rows that are never staged.
func ViewRows(ctx context.Context, s Store, fn func(Tx) error) error {
	if v, ok := s.(RowViewer); ok {
		return v.ViewRows(ctx, fn)
	}
	return s.View(ctx, fn)
}

// AggregateReplay re-applies journaled outcomes' aggregates inside a write
// transaction, in the order given (the service layer's logic, registered
// with the store by the engine).
type AggregateReplay func(ctx context.Context, tx Tx, entries []AggregateEntry) error

// OpenOptions are backend options of store.Open carried by its context
// (the engine's [store] configuration).
type OpenOptions struct {
	// Aggregates is where SQLite writes recorded outcomes' aggregates
	// (PostgreSQL ignores it): "idle" or "" behind their commit and at the
	// latest when the writer is idle, "behind" behind their commit until
	// the next read or other write, "inline" in their commit.
	Aggregates string
}

type openOptionsKey struct{}

// WithOpenOptions returns ctx carrying o for store.Open.
func WithOpenOptions(ctx context.Context, o OpenOptions) context.Context {
	return context.WithValue(ctx, openOptionsKey{}, o)
}

// OpenOptionsOf returns the options ctx carries (the zero value if none).
func OpenOptionsOf(ctx context.Context) OpenOptions {
	o, _ := ctx.Value(openOptionsKey{}).(OpenOptions)
	return o
}
