package kaizen

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/memory"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// Version is the kaizen release, set at build time with -ldflags.
var Version = "0.1.0-dev"

// Engine is kaizen's single entry point: one method per user action. Every
// surface (CLI, REST, MCP) is a thin adapter over these methods.
type Engine struct {
	cfg    Config
	lc     learning.Config
	st     store.Store
	owned  bool
	now    func() time.Time
	logger *slog.Logger
	cache  *patternCache
	x      *expState

	// xw is the background experience extraction worker, nil unless
	// StartExperienceWorker started it; xwMu serialises starting it and
	// Close, and closed refuses a start after Close.
	xw     atomic.Pointer[xpWorker]
	xwMu   sync.Mutex
	closed bool
}

// Open opens the store named by cfg (see Config.DB), applies migrations,
// rebuilds aggregates if the decay half-lives changed, and returns the engine.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, owned := cfg.Store, false
	if st == nil {
		var err error
		if st, err = OpenStore(ctx, cfg); err != nil {
			return nil, err
		}
		owned = true
	}
	e := &Engine{cfg: cfg, lc: cfg.Learning, st: st, owned: owned, now: cfg.Now, logger: cfg.Logger,
		cache: newPatternCache(64)}
	if e.now == nil {
		e.now = time.Now
	}
	if e.logger == nil {
		e.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := e.checkHalfLives(ctx); err != nil {
		e.Close()
		return nil, err
	}
	x, err := newExpState(cfg)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.x = x
	if err := e.checkEmbedder(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// OpenStore opens the backend selected by cfg.DB.
func OpenStore(ctx context.Context, cfg Config) (store.Store, error) {
	var (
		st  store.Store
		err error
	)
	switch backend, where := storeLocation(cfg); backend {
	case "memory":
		st = memory.New()
	case "postgres":
		st, err = postgres.Open(ctx, where)
	default:
		st, err = sqlite.Open(ctx, where, sqlite.Options{})
	}
	if err != nil {
		return nil, &Error{Op: "open store", Kind: KindInternal, Message: err.Error(), Err: err,
			Hint: "check --db / KAIZEN_DB and that the database is reachable"}
	}
	return st, nil
}

// storeLocation reads cfg.DB: the backend ("memory", "postgres" or
// "sqlite") and where its data is (the DSN, or the SQLite file path, by
// default <home>/kaizen.db).
func storeLocation(cfg Config) (backend, where string) {
	dsn := cfg.DB
	switch {
	case dsn == "memory" || dsn == "memory:":
		return "memory", ""
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite://"), "sqlite:")
	if path == "" {
		path = filepath.Join(cfg.Home, "kaizen.db")
	}
	return "sqlite", path
}

// Close stops the background experience worker, if it runs, and waits
// for it (an extraction in flight is cancelled), then closes the store if
// the engine opened it.
func (e *Engine) Close() error {
	e.stopExperienceWorker()
	if e.x != nil {
		e.x.vecs.close() // vector index snapshots for the next process
	}
	if e.owned {
		return e.st.Close()
	}
	return nil
}

// Store exposes the underlying store (for tools such as benchmarks).
func (e *Engine) Store() store.Store { return e.st }

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Now is the engine's current time, truncated to storage precision.
func (e *Engine) Now() time.Time { return e.now().UTC().Truncate(time.Microsecond) }

// project resolves a request's project: the given one, else the engine's
// default, else DefaultProject.
func (e *Engine) project(op, p string) (string, error) {
	if p == "" {
		p = e.cfg.Project
	}
	if p == "" {
		p = DefaultProject
	}
	if err := validProject(p); err != nil {
		return "", &Error{Op: op, Kind: KindInvalid, Field: "project", Message: err.Error()}
	}
	return p, nil
}

// newID returns a time-sortable, collision-free id with a readable prefix.
func newID(prefix string) string {
	return prefix + strings.ToLower(ulid.Make().String())
}

// update runs fn in a write transaction and gives errors their operation.
func (e *Engine) update(ctx context.Context, op string, fn func(store.Tx) error) error {
	return wrap(op, e.st.Update(ctx, fn))
}

// view runs fn in a read transaction and gives errors their operation.
func (e *Engine) view(ctx context.Context, op string, fn func(store.Tx) error) error {
	return wrap(op, e.st.View(ctx, fn))
}

// VersionInfo describes the running kaizen.
type VersionInfo struct {
	Version string `json:"version"`
	Backend string `json:"backend"`
}

// Version reports the release and the storage backend.
func (e *Engine) Version() VersionInfo {
	return VersionInfo{Version: Version, Backend: e.st.Backend()}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// latest returns the later of two times.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
