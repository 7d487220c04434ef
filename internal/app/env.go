package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kaizenhq/kaizen/store"
)

// DefaultProject is the project of requests that name none when the
// engine has no default of its own.
const DefaultProject = "default"

// Env is what every service runs in: the store, the engine's clock and
// logger, and the default project. Services share one Env.
type Env struct {
	Store store.Store
	// Clock is the engine's clock (time.Now when nil).
	Clock func() time.Time
	// Logger receives operational logs (discarded when nil).
	Logger *slog.Logger
	// Project is the default project of requests that name none.
	Project string
}

// NewEnv fills the defaults of an environment.
func NewEnv(st store.Store, clock func() time.Time, logger *slog.Logger, project string) *Env {
	if clock == nil {
		clock = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	logger = ScrubLogger(logger) // logs quote untrusted text: see Scrub
	return &Env{Store: st, Clock: clock, Logger: logger, Project: project}
}

// Now is the engine's current time, truncated to storage precision.
func (e *Env) Now() time.Time { return e.Clock().UTC().Truncate(time.Microsecond) }

// ResolveProject resolves a request's project: the given one, else the
// engine's default, else DefaultProject.
func (e *Env) ResolveProject(op, p string) (string, error) {
	if p == "" {
		p = e.Project
	}
	if p == "" {
		p = DefaultProject
	}
	if err := ValidProject(p); err != nil {
		return "", &Error{Op: op, Kind: KindInvalid, Field: "project", Message: err.Error()}
	}
	return p, nil
}

// Update runs fn in a write transaction and gives errors their operation.
func (e *Env) Update(ctx context.Context, op string, fn func(store.Tx) error) error {
	return Wrap(op, e.Store.Update(ctx, fn))
}

// View runs fn in a read transaction and gives errors their operation.
func (e *Env) View(ctx context.Context, op string, fn func(store.Tx) error) error {
	return Wrap(op, e.Store.View(ctx, fn))
}

// NewID returns a time-sortable, collision-free id with a readable prefix.
func NewID(prefix string) string {
	return prefix + strings.ToLower(ulid.Make().String())
}

// Latest returns the later of two times.
func Latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// PageLimit validates paging: limit 0 means the default (50), at most
// 1000; offset at least 0.
func PageLimit(op string, limit, offset int) (int, error) {
	switch {
	case limit < 0 || limit > 1000:
		return 0, Invalid(op, "limit", "must be between 0 (default 50) and 1000, got %d", limit)
	case offset < 0:
		return 0, Invalid(op, "offset", "must be >= 0, got %d", offset)
	case limit == 0:
		return 50, nil
	}
	return limit, nil
}

// Health reports whether the store serves a read transaction.
func (e *Env) Health(ctx context.Context) error {
	return e.View(ctx, "health", func(tx store.Tx) error {
		_, err := tx.GetMeta(ctx, "kaizen.healthz")
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
}
