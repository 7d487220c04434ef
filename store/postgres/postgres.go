// Package postgres is kaizen's server storage backend: PostgreSQL through
// pgx. Several kaizen processes may share one database: updates of shared
// aggregates take row locks (SELECT … FOR UPDATE), unique constraints make
// concurrent creation safe, and transactions that hit a serialization
// failure or deadlock are retried.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL backend.
type Store struct {
	db     *sql.DB
	dsn    string // for the dedicated LISTEN connection (notify.go)
	closed atomic.Bool
	// the group-commit writer (groupcommit.go)
	queue      *sqlstore.GroupQueue
	quit, done chan struct{}

	batches, requests, reruns, statements, trips atomic.Int64
	views, viewTrips                             atomic.Int64 // View (readtx.go)

	fault atomic.Int32 // a commitFault injected by tests (fault.go)
}

// WriterStats counts the writer's work: committed groups and the requests
// they carried (requests/batches is the average group size).
type WriterStats struct {
	Batches  int64 `json:"batches"`
	Requests int64 `json:"requests"`
	// Reruns counts groups run again with a savepoint per request,
	// because one of their requests failed.
	Reruns int64 `json:"reruns"`
	// Statements counts the statements the writer's transactions sent
	// through the store (round trips, without BEGIN and COMMIT).
	Statements int64 `json:"statements"`
	// RoundTrips counts the times those transactions waited for the
	// server: statements sent alone and pipelines (pipeline.go).
	RoundTrips int64 `json:"round_trips"`
}

// Stats returns the writer's counters.
func (s *Store) Stats() WriterStats {
	return WriterStats{Batches: s.batches.Load(), Requests: s.requests.Load(), Reruns: s.reruns.Load(), Statements: s.statements.Load(), RoundTrips: s.trips.Load()}
}

var _ store.Store = (*Store)(nil)

// maxAttempts bounds retries of a transaction after serialization
// failures or deadlocks.
const maxAttempts = 10

// Open connects to the database named by a postgres:// DSN and applies
// pending migrations (under an advisory lock, so concurrent servers
// starting together migrate once).
func Open(ctx context.Context, dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := checkSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate postgres: %w", err)
	}
	s := &Store{db: db, dsn: dsn, quit: make(chan struct{}), done: make(chan struct{})}
	s.queue = sqlstore.NewGroupQueue(s.quit)
	go s.writeLoop()
	return s, nil
}

func init() {
	store.Register("postgres", func(ctx context.Context, dsn string) (store.Store, error) { return Open(ctx, dsn) })
}

// backfill is the Go migration filling the full-text statistics from the
// existing documents (sqlstore.BackfillSearchTerms); undone with the tables.
var backfill = goose.WithGoMigrations(goose.NewGoMigration(sqlstore.BackfillMigration,
	&goose.GoFunc{RunTx: sqlstore.BackfillMigrationFunc(sqlstore.Postgres)},
	&goose.GoFunc{RunTx: func(context.Context, *sql.Tx) error { return nil }}))

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker), backfill,
		goose.WithAllowOutofOrder(true)) // see store/sqlite
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// Backend implements store.Store.
func (s *Store) Backend() string { return "postgres" }

// DB exposes the connection pool (for tests and benchmarks).
func (s *Store) DB() *sql.DB { return s.db }

// Update implements store.Store: fn runs in a READ COMMITTED transaction
// shared with the other Updates of its group (groupcommit.go), and is run
// again on a serialization failure or deadlock. It waits for the outcome
// of its request even when ctx is cancelled after the writer took it, so
// a nil error always means committed and a non-nil one means not.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return s.queue.Submit(ctx, fn)
}

// retryable reports a serialization failure (40001) or deadlock (40P01).
func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01")
}

// Close closes the connection pool. A second Close returns store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return store.ErrClosed
	}
	close(s.quit)
	<-s.done // the group in progress commits
	return s.db.Close()
}
