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
