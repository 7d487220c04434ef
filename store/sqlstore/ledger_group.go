package sqlstore

import (
	"context"
	"fmt"
	"strings"
)

// Key-class locks (Dialect.GroupKeyLocks, issue 17). LockKey serialises
// the transactions that lock one key, e.g. the recorders of one task's
// outcome ("outcome/<task>"). Under PostgreSQL's group commit a single
// writer per process runs every Update, so inside a process those
// transactions are serialised already; the lock only matters between
// processes (two daemons on one database). Locking each key costs a
// round trip per outcome; here a transaction locks the key's class in its
// project instead ("outcome/*", the key up to its first "/"), once: a
// coarser lock that still serialises every pair of transactions that lock
// the same key, so counts stay exact between daemons. A daemon's group
// then waits for another daemon's group that records outcomes of the same
// project (they mostly wait on the project's pattern and criterion rows
// anyway); two groups that take the classes of two projects in opposite
// orders deadlock, PostgreSQL aborts one and the writer reruns it.
//
// The lock is remembered for the rest of the transaction only while no
// savepoint was set (Mark): a lock taken inside a savepoint that is rolled
// back is released with it.
//
// Every process writing one database must lock the same way: a process
// locking single keys and one locking classes would not wait for each
// other.

// lockKeyClass takes the advisory lock of the key's class in the project.
func (t *Tx) lockKeyClass(ctx context.Context, project, key string) error {
	class, _, _ := strings.Cut(key, "/")
	name := fmt.Sprintf("%d:%s/%s/*", len(project), project, class)
	d := &t.deferred
	if !d.off && d.held[name] {
		return nil
	}
	if _, err := t.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, name); err != nil {
		return fmt.Errorf("lock key %s: %w", key, err)
	}
	if !d.off {
		if d.held == nil {
			d.held = map[string]bool{}
		}
		d.held[name] = true
	}
	return nil
}

// keyLock is LockKey as a statement to pipeline (prefetch.go); ok is
// false when the transaction holds the class lock already or the dialect
// has no key locks. The class lock counts as held from here on: a
// pipeline that fails ends the transaction.
func (t *Tx) keyLock(project, key string) (st Pipelined, ok bool) {
	if t.d.Name != Postgres.Name {
		return Pipelined{}, false
	}
	const q = `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`
	if !t.d.GroupKeyLocks {
		return Pipelined{SQL: q, Args: []any{fmt.Sprintf("%d:%s/%s", len(project), project, key)}}, true
	}
	class, _, _ := strings.Cut(key, "/")
	name := fmt.Sprintf("%d:%s/%s/*", len(project), project, class)
	d := &t.deferred
	if d.held[name] {
		return Pipelined{}, false
	}
	if !d.off {
		if d.held == nil {
			d.held = map[string]bool{}
		}
		d.held[name] = true
	}
	return Pipelined{SQL: q, Args: []any{name}}, true
}
