package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// A transaction run by hand on a connection (PostgreSQL's group commit,
// issue 17). database/sql sends BEGIN when a transaction starts and COMMIT
// when it ends, each a round trip of its own. A writer that holds a
// connection (sql.Conn) can instead let the Tx send BEGIN in front of its
// first statement or pipeline and COMMIT at the end of Flush's last
// pipeline (FlushAndCommit): two round trips fewer per group. The
// statements are the same, in the same order.

// Querier is what a transaction run by hand needs of its connection
// (*sql.Conn).
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type connState struct {
	Querier
	begun, ended bool
	committing   bool // FlushAndCommit: Flush's last pipeline ends with COMMIT
	// beginSQL starts the transaction ("BEGIN" when empty); a read
	// transaction's names its isolation (readtx.go).
	beginSQL string
	// snapshot marks a read-only REPEATABLE READ transaction: every read
	// sees one snapshot, so values read once may be kept (readtx.go).
	snapshot bool
	versions map[string]int64 // snapshot: experience versions read, by project
}

// NewConnTx starts a transaction by hand on c: nothing is sent until the
// first statement, which BEGIN precedes. The caller ends it with
// FlushAndCommit or Rollback, then may release c.
func NewConnTx(c Querier, d Dialect) *Tx {
	t := &Tx{d: d, stmts: map[string]*sql.Stmt{}, conn: connState{Querier: c}}
	if d.CacheAggregates {
		t.agg = newAggregateCache()
	}
	return t
}

// begin sends BEGIN before the transaction's first statement.
func (t *Tx) begin(ctx context.Context) error {
	if t.conn.Querier == nil || t.conn.begun {
		return nil
	}
	t.conn.begun = true
	t.trips++
	q := t.conn.begin()
	if t.d.GenericPlans {
		q += "; " + genericPlans // no arguments: one simple query
	}
	if _, err := t.conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("begin postgres transaction: %w", err)
	}
	return nil
}

// Generic plans (issue 17, item 2). The writer's statements are prepared
// once per connection (pgx's statement cache), but PostgreSQL plans a
// prepared statement again at every execution while it judges a plan for
// its arguments better than the generic one, which it did for the
// group's reads by task, pattern content and project (ANY($2) over the
// group's keys): statement logs showed their binds (the planning) taking
// most of the server's time of a group outside COMMIT. The statements of
// outcome recordings are lookups by primary or unique keys, whose generic
// plans are the same index scans, so the writer asks for them in a group
// of such requests (Dialect.GenericPlans).
const genericPlans = "SET LOCAL plan_cache_mode = force_generic_plan"

// beginStatements returns what goes in front of the transaction's first
// pipeline, if nothing was sent yet: BEGIN (and the plan mode).
func (t *Tx) beginStatements() []Pipelined {
	if t.conn.Querier == nil || t.conn.begun {
		return nil
	}
	t.conn.begun = true
	if t.d.GenericPlans {
		return []Pipelined{{SQL: t.conn.begin()}, {SQL: genericPlans}}
	}
	return []Pipelined{{SQL: t.conn.begin()}}
}

// begin is the statement that starts the transaction.
func (c *connState) begin() string {
	if c.beginSQL != "" {
		return c.beginSQL
	}
	return "BEGIN"
}

// FlushAndCommit is Flush, then COMMIT: in Flush's last pipeline when it
// has one. A transaction that sent nothing has nothing to commit.
func (t *Tx) FlushAndCommit(ctx context.Context) error {
	if t.conn.Querier == nil {
		return fmt.Errorf("FlushAndCommit: not a transaction run by hand")
	}
	t.conn.committing = true
	err := t.Flush(ctx)
	t.conn.committing = false
	if err != nil {
		return err
	}
	if t.conn.ended || !t.conn.begun {
		t.conn.ended = true
		return nil
	}
	t.conn.ended = true
	t.trips++
	if _, err := t.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit postgres transaction: %w", err)
	}
	return nil
}

// Rollback ends a transaction run by hand without its changes (after any
// error, including a failed COMMIT: the server answers ROLLBACK outside a
// transaction with a warning only).
func (t *Tx) Rollback(ctx context.Context) error {
	if t.conn.Querier == nil || !t.conn.begun {
		return nil
	}
	t.conn.ended = true
	_, err := t.conn.ExecContext(ctx, "ROLLBACK")
	return err
}
