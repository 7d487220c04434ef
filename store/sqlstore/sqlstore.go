// Package sqlstore implements the store.Tx contract once, over database/sql,
// for the SQL dialects kaizen supports (SQLite and PostgreSQL). The backend
// packages store/sqlite and store/postgres own connections, transactions and
// migrations, and hand a *sql.Tx to [NewTx] (or run a transaction by hand
// on a connection: [NewConnTx]).
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// Dialect captures the differences between the supported SQL databases.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// Numbered placeholders ($1, $2…) instead of "?".
	Numbered bool
	// ForUpdate is appended to row-locking selects ("" when the whole
	// transaction is already exclusive).
	ForUpdate string
	// TagMatch is a boolean SQL expression true when the JSON text column
	// tags contains the tag bound to its single "?" placeholder.
	TagMatch string
	// ContentIndex forces the content-hash index on content lookups
	// (SQLite without statistics would otherwise scan the project).
	ContentIndex string
	// OutcomeTaskIndex forces the task index on outcome lookups by task:
	// SQLite without statistics otherwise walks the project's outcomes in
	// recorded order (the ORDER BY's index) to find one task's outcome.
	OutcomeTaskIndex string
	// CacheStatements prepares statements instead of sending SQL text
	// (worth it where the driver does not cache them, as for SQLite).
	CacheStatements bool
	// CacheAggregates keeps criteria, patterns and maturity records in a
	// per-transaction cache written at Flush (see cache.go). The backend
	// must call Flush before committing and Mark/Undo around savepoints.
	CacheAggregates bool
	// FullText is the full-text engine of the experience search documents.
	FullText FullTextEngine
	// ShardedCriteria spreads each criterion's aggregate over shard rows
	// that concurrent writers update without waiting for each other (see
	// criterion_shards.go); for databases with concurrent writers.
	ShardedCriteria bool
	// DeferOutcomes holds the outcome rows of AppendOutcome in memory and
	// writes them as multi-row INSERTs at Flush (or before any statement
	// that reads the outcomes table); see outcome_defer.go. Only for a
	// transaction without savepoints (no Mark/Undo), which calls Flush.
	DeferOutcomes bool
	// AggregatesBehind lets a recorded outcome's aggregates stay in the
	// aggregate cache past the commit that acknowledges it, journaled
	// (behind.go; SQLite's writer with [store] aggregates = "idle" or "behind").
	AggregatesBehind bool
	// GroupKeyLocks makes LockKey lock the key's class in its project (the
	// key up to its first "/"), once per transaction; see ledger_group.go.
	// Every writer of a database must agree on it.
	GroupKeyLocks bool
	// Uninterrupted runs the transaction's statements without the caller's
	// context: a group-commit writer's statements are never interrupted
	// mid-transaction (one request's cancellation must not fail the
	// group), and a context without Done spares the driver and
	// database/sql a goroutine per statement watching it.
	Uninterrupted bool
	// ScanCache, when set, are the statements that shrink the
	// connection's page cache before a read of every row of a project's
	// patterns (EachPatternRank, EachPatternID) and restore it after (see
	// scancache.go).
	ScanCache [2]string

	// PrefetchTasks lets Prefetch read a group's per-task reads (the
	// tasks' previous outcomes, tracked tasks and errors) in three
	// statements on a dialect other than PostgreSQL (the SQLite writer,
	// where a statement costs CPU, not a round trip); see prefetch.go.
	PrefetchTasks bool

	// GenericPlans makes a transaction run by hand (NewConnTx) plan its
	// prepared statements once per connection (PostgreSQL's
	// plan_cache_mode = force_generic_plan, SET LOCAL after BEGIN); see
	// conntx.go.
	GenericPlans bool
}

// FullTextEngine names how a dialect indexes search documents.
type FullTextEngine int

// Full-text engines.
const (
	// FTS5 is SQLite's FTS5 (an external-content table kept by triggers).
	FTS5 FullTextEngine = iota + 1
	// PostingTable is an inverted index kept by the store in the table
	// search_postings (PostgreSQL), read through its primary key.
	PostingTable
)

// SQLite is the dialect of modernc.org/sqlite.
var SQLite = Dialect{
	Name:             "sqlite",
	TagMatch:         "EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.value = ?)",
	ContentIndex:     " INDEXED BY patterns_content_hash",
	OutcomeTaskIndex: " INDEXED BY outcomes_task",
	CacheStatements:  true,
	CacheAggregates:  true,
	// The posting table since migration 12 (store/sqlite/migrations):
	// FTS5's "scope AND term" walked the scope token's postings.
	FullText: PostingTable,
}

// Postgres is the dialect of PostgreSQL through pgx.
var Postgres = Dialect{
	Name:      "postgres",
	Numbered:  true,
	ForUpdate: " FOR UPDATE",
	TagMatch:  "(tags::jsonb @> jsonb_build_array(?::text))",
	FullText:  PostingTable,

	ShardedCriteria: true,
}

// rebind rewrites "?" placeholders into "$n" for numbered dialects. Queries
// in this package never contain a literal "?".
func (d Dialect) rebind(q string) string {
	if !d.Numbered {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// Statements prepares each distinct query once on a *sql.DB and keeps it:
// database/sql then reuses the driver statement on every connection it was
// prepared on, so a transaction binds it with Tx.StmtContext instead of
// parsing the SQL again. Safe for concurrent use.
type Statements struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// NewStatements returns a statement cache for db.
func NewStatements(db *sql.DB) *Statements {
	return &Statements{db: db, stmts: map[string]*sql.Stmt{}}
}

func (c *Statements) get(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[q]; ok {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = s
	return s, nil
}

// Close closes every cached statement.
func (c *Statements) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, s := range c.stmts {
		errs = append(errs, s.Close())
	}
	c.stmts = map[string]*sql.Stmt{}
	return errors.Join(errs...)
}

// Tx implements store.Tx over a *sql.Tx.
type Tx struct {
	tx    *sql.Tx
	d     Dialect
	cache *Statements
	stmts map[string]*sql.Stmt
	agg   *aggregateCache

	touched map[string]map[string]bool // project → pattern ids changed
	resets  map[string]bool            // projects with a deleted pattern
	// stamps: the versions advanced at Flush before the staged patterns
	// are written; stamped: the patterns written with theirs
	// (pattern_stamp.go, SQLite)
	stamps  map[string]int64
	stamped map[rowKey]bool

	deferred deferredOutcomes // DeferOutcomes: rows not yet written
	pre      *prefetched      // Prefetch: reads of a group done ahead (prefetch.go)

	statements int          // statements sent (Statements)
	trips      int          // round trips (RoundTrips)
	pipe       Pipeliner    // several statements at once (pipeline.go)
	queued     *[]Pipelined // writes held for the next pipeline (flush_pipeline.go)
	conn       connState    // a transaction run by hand on a connection (conntx.go)

	keys map[string]contentKeys // content → content key and hash (content_keys.go)

	ranks RankScanner // the store's own scan of pattern ranks (pattern_rank_scanner.go)

	behind behindState // AggregatesBehind (behind.go)
}

var _ store.Tx = (*Tx)(nil)

// NewTx wraps a database/sql transaction. The Tx is valid until tx ends.
// With a statement cache (optional), queries are prepared once per
// database instead of once per use.
func NewTx(tx *sql.Tx, d Dialect, cache *Statements) *Tx {
	t := &Tx{tx: tx, d: d, cache: cache, stmts: map[string]*sql.Stmt{}}
	if d.CacheAggregates {
		t.agg = newAggregateCache()
	}
	return t
}

var rebound sync.Map // query → query rebound for the numbered dialect

func (t *Tx) query(q string) string {
	if !t.d.Numbered {
		return q
	}
	if r, ok := rebound.Load(q); ok {
		return r.(string)
	}
	r := t.d.rebind(q)
	rebound.Store(q, r)
	return r
}

func (t *Tx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := t.stmts[q]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if t.cache != nil {
		parent, err := t.cache.get(ctx, q)
		if err != nil {
			return nil, err
		}
		s = t.tx.StmtContext(ctx, parent)
	} else {
		var err error
		if s, err = t.tx.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
	}
	t.stmts[q] = s
	return s, nil
}

func (t *Tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := t.beforeStatement(ctx, q); err != nil {
		return nil, err
	}
	if t.queued != nil { // flush_pipeline.go
		t.queue(Pipelined{SQL: q, Args: args})
		return queuedResult{}, nil
	}
	t.statements++
	t.trips++
	q = t.query(q)
	if t.d.Uninterrupted {
		ctx = context.Background()
	}
	if t.conn.Querier != nil { // conntx.go
		if err := t.begin(ctx); err != nil {
			return nil, err
		}
		return t.conn.ExecContext(ctx, q, args...)
	}
	if t.d.CacheStatements {
		s, err := t.stmt(ctx, q)
		if err != nil {
			return nil, err
		}
		return s.ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, q, args...)
}

func (t *Tx) rows(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := t.beforeStatement(ctx, q); err != nil {
		return nil, err
	}
	if err := t.sendQueued(ctx); err != nil { // flush_pipeline.go
		return nil, err
	}
	t.statements++
	t.trips++
	q = t.query(q)
	if t.d.Uninterrupted {
		ctx = context.Background()
	}
	if t.conn.Querier != nil { // conntx.go
		if err := t.begin(ctx); err != nil {
			return nil, err
		}
		return t.conn.QueryContext(ctx, q, args...)
	}
	if t.d.CacheStatements {
		s, err := t.stmt(ctx, q)
		if err != nil {
			return nil, err
		}
		return s.QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, q, args...)
}

// scanner is satisfied by *sql.Row and *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// one runs a single-row query and scans it with scan; ErrNotFound when no
// row matches.
func one[T any](ctx context.Context, t *Tx, what string, scan func(scanner) (T, error), q string, args ...any) (T, error) {
	var zero T
	rows, err := t.rows(ctx, q, args...)
	if err != nil {
		return zero, fmt.Errorf("get %s: %w", what, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return zero, fmt.Errorf("get %s: %w", what, err)
		}
		return zero, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	v, err := scan(rows)
	if err != nil {
		return zero, fmt.Errorf("scan %s: %w", what, err)
	}
	return v, rows.Close()
}

// many runs a query and scans every row.
func many[T any](ctx context.Context, t *Tx, what string, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	out := []T{}
	err := each(ctx, t, what, scan, func(v T) error { out = append(out, v); return nil }, q, args...)
	return out, err
}

// each streams rows to fn.
func each[T any](ctx context.Context, t *Tx, what string, scan func(scanner) (T, error), fn func(T) error, q string, args ...any) error {
	rows, err := t.rows(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return fmt.Errorf("scan %s: %w", what, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list %s: %w", what, err)
	}
	return rows.Close()
}

func (t *Tx) count(ctx context.Context, what, q string, args ...any) (int64, error) {
	return one(ctx, t, what, func(s scanner) (int64, error) {
		var n int64
		return n, s.Scan(&n)
	}, q, args...)
}

// insert runs an INSERT … ON CONFLICT DO NOTHING and reports whether it
// wrote a row.
func (t *Tx) insert(ctx context.Context, what, q string, args ...any) (bool, error) {
	res, err := t.exec(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("insert %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("insert %s: %w", what, err)
	}
	return n > 0, nil
}

// change runs an UPDATE or DELETE and turns "no row changed" into
// ErrNotFound.
func (t *Tx) change(ctx context.Context, what, q string, args ...any) error {
	res, err := t.exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return nil
}

// Time encoding: microseconds since the Unix epoch; the zero time is NULL.

func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func microsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

func fromMicrosPtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := time.UnixMicro(n.Int64).UTC()
	return &t
}

// JSON text columns hold string lists; nil is stored as [] and read back as
// an empty list.
func jsonList(v []string) string {
	if len(v) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func fromJSONList(s string) ([]string, error) {
	out := []string{}
	if s == "" || s == "[]" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("decode list %q: %w", s, err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// likePattern builds a LIKE pattern matching s as a substring, escaping the
// wildcards with a backslash (queries say ESCAPE '\').
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// maxLiteralLimit bounds the limits written into the SQL text (see page).
const maxLiteralLimit = 1000

// page appends LIMIT/OFFSET clauses. A limit up to maxLiteralLimit (every
// page size the API accepts) is written as a literal: SQLite's planner
// looks at a bound LIMIT's value, so a statement with "LIMIT ?" is
// re-prepared on every execution, which costs more than the lookup it
// limits (a task's outcome on the write path).
func page(q string, args []any, limit, offset int) (string, []any) {
	if limit > 0 {
		if limit <= maxLiteralLimit {
			q += " LIMIT " + strconv.Itoa(limit)
		} else {
			q += " LIMIT ?"
			args = append(args, limit)
		}
		if offset > 0 {
			q += " OFFSET ?"
			args = append(args, offset)
		}
	} else if offset > 0 {
		q += " LIMIT 9223372036854775807 OFFSET ?"
		args = append(args, offset)
	}
	return q, args
}
