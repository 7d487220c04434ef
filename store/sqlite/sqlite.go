// Package sqlite is kaizen's embedded storage backend: SQLite through the
// pure-Go driver modernc.org/sqlite, in WAL mode with full synchronous
// commits, a single writer goroutine and a pool of readers (and, for a
// full load of a project's pattern ranks, a read connection of its own on
// SQLite's C interface: rankscan.go).
//
// Writes use group commit: a single writer goroutine takes every pending
// Update, runs them back to back in one BEGIN IMMEDIATE transaction,
// commits once, and only then acknowledges them. A failing Update makes
// the writer roll the transaction back and run the batch again with each
// Update in its own savepoint, so it fails alone without disturbing the
// others; no Update is acknowledged before the commit that contains it is
// durable, so batching raises throughput without weakening durability.
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
	"sync/atomic"
	"time"

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
	// Ephemeral marks a throwaway database (tests, simulations, the
	// "memory" store): commits are not synced to disk, and Close deletes
	// the file. Never use it for data that must survive a crash.
	Ephemeral bool
	// AggregatesBehind writes a recorded outcome's aggregates behind its
	// acknowledged commit, coalesced and journaled ([store] aggregates =
	// "behind"; behind.go).
	AggregatesBehind bool
	// AggregatesWhenIdle writes them behind too, but at the latest once the
	// writer has had nothing to do for idleFlushDelay, or once the oldest
	// staged outcome is maxStaleness old, and at Close ([store] aggregates
	// = "idle"; behind.go). AggregatesBehind wins when both are set.
	AggregatesWhenIdle bool
}

// Store is the SQLite backend.
type Store struct {
	path   string
	writer *sql.DB
	// wconn is the writer's connection, pinned: every group runs on it, so
	// its PRAGMA data_version tells whether another connection wrote
	// since the previous group (carry.go).
	wconn *sql.Conn
	// connMu is held by commit while a group uses wconn, and by
	// Checkpoint, which runs between two groups on it.
	connMu sync.Mutex
	reader *sql.DB
	// wstmts caches prepared statements for the writer. Only the writer
	// can share them: preparing on the pool needs a free connection, which
	// the single writer always has (its pool has a spare) but concurrent
	// readers holding every connection would not.
	wstmts *sqlstore.Statements
	queue  *sqlstore.GroupQueue
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
	opts   Options
	// tempDir is removed on Close (ephemeral stores only).
	tempDir string

	batches, requests, reruns atomic.Int64

	// The aggregate cache carried between groups (carry.go; writer
	// goroutine only) and the data version it was carried at.
	carried     *sqlstore.CarriedCache
	dataVersion int64
	adopted     atomic.Int64

	// The background checkpointer (bgcheckpoint.go).
	ckpt            *sql.DB
	ckptKick        chan struct{}
	ckptDone        chan struct{}
	sinceCheckpoint int // groups committed since the last kick (writer goroutine only)
	checkpoints     atomic.Int64
	onCheckpoint    func(checkpointResult) // tests

	ranks *rankScanner // a connection of its own for full pattern loads (rankscan.go)

	// Aggregates behind (behind.go): journaled is whether the journal may
	// hold outcomes whose aggregates are not in SQL (set by the writer
	// goroutine: a group replays or writes them, a read waits for them);
	// replay re-applies them.
	journaled atomic.Bool
	replayMu  sync.Mutex
	replay    store.AggregateReplay
	behind    atomic.Int64 // groups committed behind
	replayed  atomic.Int64 // journal entries replayed
	// idleFlushes counts the groups the writer ran on its own to write
	// staged aggregates when idle ("idle", behind.go)
	idleFlushes atomic.Int64
	// stagedSince is when the oldest staged outcome committed ("idle";
	// the writer's own)
	stagedSince time.Time
	// statements of committed groups (WriterStats.Statements)
	statements atomic.Int64
}

// WriterStats counts the writer's work: committed batches and the requests
// they carried (requests/batches is the average group-commit size).
type WriterStats struct {
	Batches  int64 `json:"batches"`
	Requests int64 `json:"requests"`
	// Reruns counts batches run again with a savepoint per request,
	// because one of their requests failed.
	Reruns int64 `json:"reruns"`
	// Checkpoints counts background checkpoints (see bgcheckpoint.go).
	Checkpoints int64 `json:"checkpoints"`
	// Carried counts groups that started from the previous group's
	// aggregate cache (see carry.go).
	Carried int64 `json:"carried"`
	// Behind counts groups committed with their outcomes' aggregates
	// left staged, Replayed the journal entries replayed (behind.go).
	Behind   int64 `json:"behind,omitempty"`
	Replayed int64 `json:"replayed,omitempty"`
	// IdleFlushes counts the groups the writer ran on its own, finding no
	// request waiting, to write staged aggregates ([store] aggregates =
	// "idle"; not in Batches).
	IdleFlushes int64 `json:"idle_flushes,omitempty"`
	// Waiting is the number of writes waiting now for the writer to take
	// them (a gauge).
	Waiting int64 `json:"waiting,omitempty"`
	// Statements counts the SQL statements of committed groups (not the
	// transaction control or the data-version read).
	Statements int64 `json:"statements,omitempty"`
}

// Stats returns the writer's counters.
func (s *Store) Stats() WriterStats {
	return WriterStats{Batches: s.batches.Load(), Requests: s.requests.Load(), Reruns: s.reruns.Load(),
		Checkpoints: s.checkpoints.Load(), Carried: s.adopted.Load(), Behind: s.behind.Load(), Replayed: s.replayed.Load(),
		IdleFlushes: s.idleFlushes.Load(), Statements: s.statements.Load(), Waiting: int64(s.queue.Waiting())}
}

var _ store.Store = (*Store)(nil)

type request = sqlstore.GroupRequest

// readerCacheKiB is the page cache of each read connection, in KiB.
const readerCacheKiB = 64 << 10

func dsn(path string, opts Options, txlock string, readOnly bool, pragmas ...string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeoutMs))
	q.Add("_pragma", "journal_mode(WAL)")
	if opts.Ephemeral {
		q.Add("_pragma", "synchronous(OFF)")
	} else {
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Add("_pragma", "foreign_keys(1)")
	// savepoint sub-journals and temp tables stay in memory (no extra file I/O)
	q.Add("_pragma", "temp_store(MEMORY)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		// Readers keep up to 64 MiB of pages each instead of SQLite's 2 MiB:
		// at 100,000s of experience items a recall touched pages no cache
		// held, and the pread system calls were an eighth of its time
		// (mmap_size did as well but counted the mapped file in RSS).
		q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -readerCacheKiB))
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
	switch os.Getenv("KAIZEN_TEST_AGGREGATES") { // run a test suite on the behind path (behind.go)
	case "behind":
		opts.AggregatesBehind = true
	case "idle":
		opts.AggregatesWhenIdle = true
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	// The writer checkpoints only as a backstop: the checkpointer does it
	// in the background (bgcheckpoint.go).
	writer, err := sql.Open("sqlite", dsn(path, opts, "immediate", false,
		fmt.Sprintf("wal_autocheckpoint(%d)", writerAutoCheckpoint)))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// Transactions run one at a time from the writer goroutine. The pool
	// has a second connection so that a statement seen for the first time
	// can be prepared while the batch transaction holds the first; the
	// statement is then bound to the transaction's connection and reused.
	writer.SetMaxOpenConns(2)
	writer.SetMaxIdleConns(2)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := migrate(ctx, writer); err != nil {
		writer.Close()
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, err)
	}
	journaled, err := journalPending(ctx, writer) // behind.go
	if err != nil {
		writer.Close()
		return nil, err
	}
	wconn, err := writer.Conn(ctx)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	reader, err := sql.Open("sqlite", dsn(path, opts, "deferred", true))
	if err != nil {
		wconn.Close()
		writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	reader.SetMaxOpenConns(opts.Readers)
	reader.SetMaxIdleConns(opts.Readers)
	ckpt, err := openCheckpointer(path, opts)
	if err != nil {
		reader.Close()
		wconn.Close()
		writer.Close()
		return nil, err
	}
	s := &Store{path: path, writer: writer, wconn: wconn, reader: reader, opts: opts, ranks: newRankScanner(path, opts),
		wstmts: sqlstore.NewStatements(writer),
		quit:   make(chan struct{}), done: make(chan struct{}),
		ckpt: ckpt, ckptKick: make(chan struct{}, 1), ckptDone: make(chan struct{})}
	s.queue = sqlstore.NewGroupQueue(s.quit)
	s.journaled.Store(journaled)
	go s.writeLoop()
	go s.checkpointLoop()
	return s, nil
}

// backfill is the Go migration filling the full-text statistics from the
// existing documents (sqlstore.BackfillSearchTerms); undone with the tables.
// At version 6 the database still matches through FTS5 (the posting table
// comes with migration 12, which fills it), so the backfill runs with the
// dialect of that time.
var backfill = goose.WithGoMigrations(goose.NewGoMigration(sqlstore.BackfillMigration,
	&goose.GoFunc{RunTx: sqlstore.BackfillMigrationFunc(fts5Dialect())},
	&goose.GoFunc{RunTx: func(context.Context, *sql.Tx) error { return nil }}))

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// Out of order: a migration numbered below the newest applied one is
	// still applied (versions are merged from parallel work, and a repair
	// may re-run the backfill).
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, backfill, goose.WithAllowOutofOrder(true))
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
	return s.queue.Submit(ctx, fn)
}

func (s *Store) writeLoop() {
	defer close(s.done)
	for {
		var batch []*request
		if s.idleFlushDue() { // behind.go
			b, idle := s.queue.NextWithin(s.opts.MaxBatch, idleFlushDelay)
			if idle { // the staged aggregates, while nobody waits
				s.idleFlush()
				s.kickCheckpoint()
				continue
			}
			batch = b
		} else {
			batch = s.queue.Next(s.opts.MaxBatch)
		}
		if batch == nil {
			if s.idleFlushDue() { // closing: leave no journal to replay
				s.idleFlush()
			}
			return
		}
		n := s.commit(batch)
		s.batches.Add(1)
		s.requests.Add(int64(n))
		s.kickCheckpoint()
	}
}

// joinWindow bounds how long a batch keeps admitting requests that arrive
// while it executes, before committing.
const joinWindow = 5 * time.Millisecond

// commit runs a batch in one transaction and acknowledges its requests
// after the commit. Requests that arrive while the batch executes join it
// (up to MaxBatch requests or joinWindow of work), so the commit's fsync is
// shared by more requests without making any of them wait idly.
//
// Requests run back to back without savepoints: the service layer
// validates its input before it reaches the writer, so a request that
// fails inside the transaction is rare (a conflict, a broken invariant), and
// a savepoint per request would cost three statements and a sub-journal
// for nothing. When one does fail, the whole transaction is rolled back
// (nothing of it was acknowledged) and the batch runs again with each
// request in its own savepoint, so the failure is isolated and the others
// commit. store.Update allows fn to run more than once.
func (s *Store) commit(batch []*request) (requests int) {
	s.connMu.Lock() // Checkpoint runs between two groups
	results, batch, failed := s.runBatch(batch, false)
	if failed {
		s.reruns.Add(1)
		results, batch, _ = s.runBatch(batch, true)
	}
	s.connMu.Unlock()
	for i, r := range batch {
		r.Done <- results[i]
	}
	return len(batch)
}

// runBatch runs the batch in one transaction and commits it. Without
// isolate, it stops at the first failing request, rolls back and reports
// failed (the caller runs the batch again isolated; no result is final).
// With isolate, each request of a shared transaction runs in its own
// savepoint.
func (s *Store) runBatch(batch []*request, isolate bool) (results []error, all []*request, failed bool) {
	fail := func(err error) {
		for len(results) < len(batch) {
			results = append(results, nil)
		}
		for i := range results {
			if results[i] == nil {
				results[i] = err
			}
		}
	}
	ctx := context.Background() // statements are never interrupted mid-transaction
	tx, err := s.wconn.BeginTx(ctx, nil)
	if err != nil {
		s.carried = nil
		fail(fmt.Errorf("begin sqlite transaction: %w", err))
		return results, batch, false
	}
	dialect := groupDialect
	deferring := s.defersAggregates() // behind.go
	if deferring {
		dialect = behindDialect
	}
	if isolate {
		dialect = isolatedDialect
	}
	wrapped := sqlstore.NewTx(tx, dialect, s.wstmts)
	version, carry, staged := s.adoptCarried(ctx, tx, wrapped)
	if s.journaled.Load() && !staged {
		if err := s.replayJournal(ctx, wrapped); err != nil {
			s.rollback(tx, wrapped) // behind.go
			fail(err)
			return results, batch, false
		}
	}
	started := time.Now()
	if !isolate && len(batch) > 1 {
		if err := wrapped.Prefetch(ctx, hints(batch)); err != nil {
			s.rollback(tx, wrapped) // behind.go
			return nil, batch, true // run again isolated, without prefetch
		}
	}
	ok := 0
	for i := 0; i < len(batch); i++ {
		r := batch[i]
		err := r.Ctx.Err()
		switch {
		case err != nil:
		case !isolate || len(batch) == 1:
			// No savepoint: the transaction is the request's savepoint.
			// A failure rolls back the transaction: alone so far, the
			// request's result is final; otherwise the batch runs again
			// isolated.
			mark := wrapped.RequestMark()
			if err = run(r.Fn, wrapped); err != nil {
				s.rollback(tx, wrapped) // behind.go
				if len(batch) == 1 {
					return append(results, err), batch, false
				}
				return nil, batch, true
			}
			wrapped.RequestDone(mark) // behind.go
		default:
			if err = s.isolated(ctx, tx, wrapped, r); errors.Is(err, errBrokenTx) {
				s.rollback(tx, wrapped) // behind.go
				fail(err)
				return results, batch, false
			}
		}
		if err == nil {
			ok++
		}
		results = append(results, err)
		if i == len(batch)-1 && len(batch) < s.opts.MaxBatch && time.Since(started) < joinWindow {
			batch = s.queue.Drain(batch, s.opts.MaxBatch) // late arrivals join this transaction
			if late := hints(batch[i+1:]); !isolate && len(late) > 1 {
				if err := wrapped.Prefetch(ctx, late); err != nil {
					s.rollback(tx, wrapped) // behind.go
					return nil, batch, true
				}
			}
		}
	}
	if ok == 0 {
		s.rollback(tx, wrapped) // behind.go
		return results, batch, false
	}
	behind, err := s.flush(ctx, wrapped, ok, deferring && !isolate)
	if err != nil { // staged aggregate and deferred rows
		s.rollback(tx, wrapped) // behind.go
		if !isolate && len(batch) > 1 {
			// the deferred rows of one request may be at fault: the rerun
			// with savepoints writes them within their request
			return nil, batch, true
		}
		fail(fmt.Errorf("commit sqlite transaction: %w", err))
		return results, batch, false
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("commit sqlite transaction: %w", err))
	} else {
		s.statements.Add(int64(wrapped.Statements()))
		s.committed(wrapped, version, carry, behind)
	}
	return results, batch, false
}

// errBrokenTx: a savepoint could not be released or rolled back, so the
// transaction's state is unknown and the whole batch must fail.
var errBrokenTx = errors.New("sqlite savepoint failed")

// isolated runs one request of a shared transaction inside its own
// savepoint, rolling back to it (and undoing the aggregate cache) when the
// request fails.
func (s *Store) isolated(ctx context.Context, tx *sql.Tx, wrapped *sqlstore.Tx, r *request) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT request"); err != nil {
		return fmt.Errorf("%w: %v", errBrokenTx, err)
	}
	mark := wrapped.Mark()
	err := run(r.Fn, wrapped)
	release := []string{"RELEASE request"}
	if err != nil {
		release = []string{"ROLLBACK TO request", "RELEASE request"}
		wrapped.Undo(mark)
	}
	if xerr := execAll(ctx, tx, release); xerr != nil {
		return fmt.Errorf("%w: %v", errBrokenTx, xerr)
	}
	return err
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
	return s.view(ctx, fn, true)
}

// ViewRows implements store.RowViewer: View without the barrier that
// first writes staged aggregates (behind.go).
func (s *Store) ViewRows(ctx context.Context, fn func(store.Tx) error) error {
	return s.view(ctx, fn, false)
}

func (s *Store) view(ctx context.Context, fn func(store.Tx) error, barrier bool) error {
	select {
	case <-s.quit:
		return store.ErrClosed
	default:
	}
	if barrier {
		if err := s.aggregateBarrier(ctx); err != nil { // behind.go: read-your-writes
			return err
		}
	}
	tx, err := s.reader.BeginTx(ctx, nil) // the reader connections are query_only
	if err != nil {
		if errors.Is(err, sql.ErrConnDone) {
			return store.ErrClosed
		}
		return fmt.Errorf("begin sqlite read: %w", err)
	}
	defer tx.Rollback()
	t := sqlstore.NewTx(tx, readDialect, nil)
	t.SetRankScanner(s)
	return run(fn, t)
}

// Close stops the writer after the batch in progress and closes the database.
// A second Close returns store.ErrClosed.
func (s *Store) Close() error {
	err := store.ErrClosed
	s.once.Do(func() {
		close(s.quit)
		<-s.done
		<-s.ckptDone
		s.ranks.close()
		err = errors.Join(s.wstmts.Close(), s.ckpt.Close(), s.reader.Close(), s.wconn.Close(), s.writer.Close())
		if s.tempDir != "" {
			err = errors.Join(err, os.RemoveAll(s.tempDir))
		}
	})
	return err
}

// OpenEphemeral opens a throwaway database in a new temporary directory
// (see Options.Ephemeral): the embedded store for tests, simulations and
// the "memory" setting. Close deletes it.
func OpenEphemeral(ctx context.Context) (*Store, error) {
	dir, err := os.MkdirTemp("", "kaizen-ephemeral-")
	if err != nil {
		return nil, fmt.Errorf("open ephemeral sqlite: %w", err)
	}
	s, err := Open(ctx, filepath.Join(dir, "kaizen.db"), Options{Ephemeral: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.tempDir = dir
	return s, nil
}

func init() {
	store.Register("sqlite", func(ctx context.Context, path string) (store.Store, error) {
		// [store] aggregates: "idle" unless set ("inline", "behind")
		agg := store.OpenOptionsOf(ctx).Aggregates
		return Open(ctx, path, Options{AggregatesBehind: agg == "behind", AggregatesWhenIdle: agg == "idle" || agg == ""})
	})
	store.Register("memory", func(ctx context.Context, _ string) (store.Store, error) {
		return OpenEphemeral(ctx)
	})
}

// fts5Dialect is the SQLite dialect as it was before migration 12.
func fts5Dialect() sqlstore.Dialect {
	d := sqlstore.SQLite
	d.FullText = sqlstore.FTS5
	return d
}
