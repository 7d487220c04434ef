// Package sqlite is kaizen's embedded storage backend: SQLite through the
// pure-Go driver modernc.org/sqlite, in WAL mode with full synchronous
// commits, one writer connection and a pool of readers.
//
// Writes use group commit: a single writer goroutine takes every pending
// Update, runs each inside its own savepoint of one BEGIN IMMEDIATE
// transaction, commits once, and only then acknowledges them. A failing
// Update rolls back to its savepoint without disturbing the others, and no
// Update is acknowledged before the commit that contains it is durable, so
// batching raises throughput without weakening durability.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tune the backend. The zero value is the production default.
type Options struct {
	// MaxBatch bounds the Updates committed together (default 256).
	MaxBatch int
	// Readers is the size of the read connection pool (default GOMAXPROCS, at least 2).
	Readers int
	// BusyTimeoutMs is how long a connection waits for a lock held by
	// another process (default 10000).
	BusyTimeoutMs int
}

// Store is the SQLite backend.
type Store struct {
	path   string
	writer *sql.DB
	reader *sql.DB
	reqs   chan *request
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
	opts   Options
}

var _ store.Store = (*Store)(nil)

type request struct {
	ctx  context.Context
	fn   func(store.Tx) error
	done chan error
}

func dsn(path string, opts Options, txlock string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeoutMs))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", txlock)
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database file at path, applies
// pending migrations and starts the writer.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Readers <= 0 {
		opts.Readers = max(2, runtime.GOMAXPROCS(0))
	}
	if opts.BusyTimeoutMs <= 0 {
		opts.BusyTimeoutMs = 10_000
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	writer, err := sql.Open("sqlite", dsn(path, opts, "immediate", false))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := migrate(ctx, writer); err != nil {
		writer.Close()
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, err)
	}
	reader, err := sql.Open("sqlite", dsn(path, opts, "deferred", true))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	reader.SetMaxOpenConns(opts.Readers)
	reader.SetMaxIdleConns(opts.Readers)
	s := &Store{path: path, writer: writer, reader: reader, opts: opts,
		reqs: make(chan *request), quit: make(chan struct{}), done: make(chan struct{})}
	go s.writeLoop()
	return s, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// Backend implements store.Store.
func (s *Store) Backend() string { return "sqlite" }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Update implements store.Store. It waits for the outcome of its request
// even when ctx is cancelled after the request was taken by the writer, so
// a nil error always means durably committed and a non-nil one means not.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	req := &request{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.quit:
		return store.ErrClosed
	}
	return <-req.done
}

func (s *Store) writeLoop() {
	defer close(s.done)
	for {
		var batch []*request
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		case <-s.quit:
			return
		}
	drain:
		for len(batch) < s.opts.MaxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		s.commit(batch)
	}
}

// commit runs a batch in one transaction, each request in its own savepoint.
func (s *Store) commit(batch []*request) {
	results := make([]error, len(batch))
	finish := func() {
		for i, r := range batch {
			r.done <- results[i]
		}
	}
	defer finish()
	ctx := context.Background() // statements are never interrupted mid-transaction
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		for i := range results {
			results[i] = fmt.Errorf("begin sqlite transaction: %w", err)
		}
		return
	}
	wrapped := sqlstore.NewTx(tx, sqlstore.SQLite)
	ok := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT request"); err != nil {
			results[i] = fmt.Errorf("sqlite savepoint: %w", err)
			continue
		}
		results[i] = run(r.fn, wrapped)
		release := []string{"RELEASE request"}
		if results[i] != nil {
			release = []string{"ROLLBACK TO request", "RELEASE request"}
		} else {
			ok++
		}
		if err := execAll(ctx, tx, release); err != nil {
			// The transaction is in an unknown state: fail the whole batch.
			_ = tx.Rollback()
			for j := range results {
				if results[j] == nil {
					results[j] = fmt.Errorf("sqlite savepoint release: %w", err)
				}
			}
			return
		}
	}
	if ok == 0 {
		_ = tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		for i := range results {
			if results[i] == nil {
				results[i] = fmt.Errorf("commit sqlite transaction: %w", err)
			}
		}
	}
}

func execAll(ctx context.Context, tx *sql.Tx, stmts []string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// run calls fn, turning a panic into an error so one bad request cannot
// take the writer down.
func run(fn func(store.Tx) error, tx store.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return fn(tx)
}

// View implements store.Store.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	select {
	case <-s.quit:
		return store.ErrClosed
	default:
	}
	tx, err := s.reader.BeginTx(ctx, nil) // the reader connections are query_only
	if err != nil {
		if errors.Is(err, sql.ErrConnDone) {
			return store.ErrClosed
		}
		return fmt.Errorf("begin sqlite read: %w", err)
	}
	defer tx.Rollback()
	return run(fn, sqlstore.NewTx(tx, sqlstore.SQLite))
}

// Close stops the writer after the batch in progress and closes the database.
// A second Close returns store.ErrClosed.
func (s *Store) Close() error {
	err := store.ErrClosed
	s.once.Do(func() {
		close(s.quit)
		<-s.done
		err = errors.Join(s.reader.Close(), s.writer.Close())
	})
	return err
}
