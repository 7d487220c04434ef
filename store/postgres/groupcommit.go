package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// Group commit (issue 17). One writer goroutine per process takes every
// pending Update and runs them back to back in one READ COMMITTED
// transaction, then commits once and only then acknowledges them, as the
// SQLite backend does. Inside the transaction the aggregate cache
// (sqlstore.Dialect.CacheAggregates) reads each shared row once, under its
// row lock, and writes it once at Flush; criterion events are summed in
// memory and added to one free shard (criterion_delta.go). So a process's
// outcomes no longer queue on the rows of their project one by one: a
// group of N outcomes takes each pattern, maturity record and criterion
// once, and the project's pattern version once.
//
// Between processes (two kaizen servers on one database) the row locks
// still apply, per group: counts stay exact. Groups of two processes may
// deadlock on pattern rows taken in different orders; PostgreSQL aborts
// one and the writer runs that group again, as it does after a
// serialization failure.
//
// A request that fails makes the writer roll back and run the group again
// with each request in its own savepoint, so the failure is isolated and
// the others commit. store.Update allows fn to run more than once.

// joinWindow bounds how long a group keeps admitting requests that arrive
// while it executes, before committing.
const joinWindow = 5 * time.Millisecond

// maxBatch bounds the requests committed together.
const maxBatch = 256

type request = sqlstore.GroupRequest

// groupDialect is the writer's dialect: PostgreSQL with the aggregate cache
// and the group's new outcome rows written together at Flush.
// isolatedDialect is the one of a rerun with savepoints, which writes
// outcome rows at once (a savepoint rollback must not take rows of
// earlier requests with it).
var groupDialect, isolatedDialect = func() (sqlstore.Dialect, sqlstore.Dialect) {
	d := sqlstore.Postgres
	d.CacheAggregates = true
	d.GroupKeyLocks = true // both: every writer must lock keys alike
	i := d
	d.DeferOutcomes = true
	return d, i
}()

// hintedDialect is the first run's of a group whose requests all said what
// they will read (store.WriteHint: outcome recordings): its statements are
// lookups by key, planned once per connection (GenericPlans, conntx.go).
var hintedDialect = func() sqlstore.Dialect {
	d := groupDialect
	d.GenericPlans = true
	return d
}()

func (s *Store) writeLoop() {
	defer close(s.done)
	last := 0 // the previous group's size
	for {
		batch := s.queue.Next(maxBatch)
		if batch == nil {
			return
		}
		batch = s.gather(batch, last) // gather.go
		n := s.commit(batch)
		last = n
		s.batches.Add(1)
		s.requests.Add(int64(n))
	}
}

// commit runs a group until it commits or fails for good, then
// acknowledges its requests.
func (s *Store) commit(batch []*request) int {
	isolate := false
	var results []error
	for attempt := 1; ; attempt++ {
		var failed, retry bool
		results, batch, failed, retry = s.runBatch(batch, isolate)
		switch {
		case retry && attempt < maxAttempts:
			time.Sleep(time.Duration(rand.Int64N(int64(time.Duration(attempt) * 5 * time.Millisecond))))
			continue
		case retry:
			err := fmt.Errorf("postgres transaction still conflicting after %d attempts", maxAttempts)
			results = make([]error, len(batch))
			for i := range results {
				results[i] = err
			}
		case failed:
			isolate = true
			s.reruns.Add(1)
			continue
		}
		break
	}
	for i, r := range batch {
		r.Done <- results[i]
	}
	return len(batch)
}

// runBatch runs the group in one transaction and commits it. Without
// isolate it stops at the first failing request, rolls back and reports
// failed (no result is final): runFast (groupfast.go). Retry reports a
// deadlock or serialization failure: the whole group runs again.
func (s *Store) runBatch(batch []*request, isolate bool) (results []error, all []*request, failed, retry bool) {
	if !isolate {
		return s.runFast(batch) // groupfast.go
	}
	fail := func(err error) {
		results = results[:0]
		for range batch {
			results = append(results, err)
		}
	}
	ctx := context.Background() // statements are never interrupted mid-transaction
	tx, pipe, end, err := s.beginWriter(ctx)
	if err != nil {
		if errors.Is(err, sql.ErrConnDone) || s.closed.Load() {
			err = store.ErrClosed
		} else {
			err = fmt.Errorf("begin postgres transaction: %w", err)
		}
		fail(err)
		return results, batch, false, false
	}
	defer end() // after the transaction ends, on every path below
	dialect := groupDialect
	if isolate {
		dialect = isolatedDialect
	}
	wrapped := sqlstore.NewTx(tx, dialect, nil)
	wrapped.SetPipeliner(pipe)
	defer func() { s.statements.Add(int64(wrapped.Statements())); s.trips.Add(int64(wrapped.RoundTrips())) }()
	started := time.Now()
	ok := 0
	for i := 0; i < len(batch); i++ {
		r := batch[i]
		err := r.Ctx.Err()
		switch {
		case err != nil:
		case !isolate || len(batch) == 1:
			if err = run(r.Fn, wrapped); err != nil {
				_ = tx.Rollback()
				if retryable(err) {
					return nil, batch, false, true
				}
				if len(batch) == 1 {
					return []error{err}, batch, false, false
				}
				return nil, batch, true, false
			}
		default:
			err = isolated(ctx, tx, wrapped, r)
			if errors.Is(err, errBrokenTx) || retryable(err) {
				_ = tx.Rollback()
				if retryable(err) {
					return nil, batch, false, true
				}
				fail(err)
				return results, batch, false, false
			}
		}
		if err == nil {
			ok++
		}
		results = append(results, err)
		if i == len(batch)-1 && len(batch) < maxBatch && time.Since(started) < joinWindow {
			batch = s.queue.Drain(batch, maxBatch) // late arrivals join this transaction
		}
	}
	if ok == 0 {
		_ = tx.Rollback()
		return results, batch, false, false
	}
	if err := wrapped.Flush(ctx); err != nil {
		_ = tx.Rollback()
		if retryable(err) {
			return nil, batch, false, true
		}
		if !isolate && len(batch) > 1 {
			// the deferred rows of one request may be at fault: the rerun
			// with savepoints writes them within their request
			return nil, batch, true, false
		}
		fail(err)
		return results, batch, false, false
	}
	if err := tx.Commit(); err != nil {
		if retryable(err) {
			return nil, batch, false, true
		}
		fail(fmt.Errorf("commit postgres transaction: %w", err))
	}
	return results, batch, false, false
}

// errBrokenTx: a savepoint could not be released or rolled back, so the
// transaction's state is unknown and the whole group must fail.
var errBrokenTx = errors.New("postgres savepoint failed")

// isolated runs one request of a shared transaction inside its own
// savepoint, rolling back to it (and undoing the aggregate cache) when the
// request fails.
func isolated(ctx context.Context, tx *sql.Tx, wrapped *sqlstore.Tx, r *request) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT request"); err != nil {
		return fmt.Errorf("%w: %v", errBrokenTx, err)
	}
	mark := wrapped.Mark()
	err := run(r.Fn, wrapped)
	release := []string{"RELEASE SAVEPOINT request"}
	if err != nil {
		release = []string{"ROLLBACK TO SAVEPOINT request", "RELEASE SAVEPOINT request"}
		wrapped.Undo(mark)
	}
	for _, q := range release {
		if _, xerr := tx.ExecContext(ctx, q); xerr != nil {
			return fmt.Errorf("%w: %v", errBrokenTx, xerr)
		}
	}
	return err
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

// hints collects what the requests said they will read
// (store.WriteHint), for Prefetch: one statement per table for the whole
// group instead of one per request (sqlstore/prefetch.go).
func hints(batch []*request) []store.WriteHint {
	var out []store.WriteHint
	for _, r := range batch {
		if h, ok := store.WriteHintOf(r.Ctx); ok && r.Ctx.Err() == nil {
			out = append(out, h)
		}
	}
	return out
}
