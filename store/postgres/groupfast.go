package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// runFast runs a group without savepoints (the first run of every group)
// in a transaction run by hand on a connection the writer holds
// (sqlstore.NewConnTx): BEGIN goes in front of the prefetch pipeline and
// COMMIT at the end of Flush's last pipeline, so a group of outcomes
// costs about four round trips: the prefetch, the requests' remaining
// reads (none for outcomes), Flush's two pipelines. Its results and
// failures are runBatch's: it stops at the first failing request, rolls
// back and reports failed (the group then runs again with savepoints, on
// a database/sql transaction); retry reports a deadlock or serialization
// failure.
func (s *Store) runFast(batch []*request) (results []error, all []*request, failed, retry bool) {
	fail := func(err error) {
		results = results[:0]
		for range batch {
			results = append(results, err)
		}
	}
	ctx := context.Background() // statements are never interrupted mid-transaction
	conn, err := s.db.Conn(ctx)
	if err != nil {
		if s.closed.Load() {
			err = store.ErrClosed
		} else {
			err = fmt.Errorf("begin postgres transaction: %w", err)
		}
		fail(err)
		return results, batch, false, false
	}
	fault := commitFault(s.fault.Load()) // fault.go: none but in tests
	var q sqlstore.Querier = conn
	if fault != noFault {
		q = faultQuerier{conn, fault}
	}
	dialect := groupDialect
	if len(hints(batch)) == len(batch) {
		dialect = hintedDialect
	}
	wrapped := sqlstore.NewConnTx(q, dialect)
	wrapped.SetPipeliner(faultyPipeliner(conn, fault))
	broken := false
	defer func() {
		s.statements.Add(int64(wrapped.Statements()))
		s.trips.Add(int64(wrapped.RoundTrips()))
		if broken {
			// the transaction may still be open: the connection must not
			// go back to the pool
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	abort := func() {
		if err := wrapped.Rollback(ctx); err != nil {
			broken = true
		}
	}
	// failure ends the group after an error: retry, or a rerun with
	// savepoints
	failure := func(err error) ([]error, []*request, bool, bool) {
		abort()
		if retryable(err) {
			return nil, batch, false, true
		}
		return nil, batch, true, false
	}
	started := time.Now()
	if err := wrapped.Prefetch(ctx, hints(batch)); err != nil {
		return failure(err)
	}
	ok := 0
	for i := 0; i < len(batch); i++ {
		r := batch[i]
		err := r.Ctx.Err()
		if err == nil {
			if err = run(r.Fn, wrapped); err != nil {
				if len(batch) == 1 && !retryable(err) {
					abort()
					return []error{err}, batch, false, false
				}
				return failure(err)
			}
			ok++
		}
		results = append(results, err)
		if i == len(batch)-1 && len(batch) < maxBatch && time.Since(started) < joinWindow {
			batch = s.queue.Drain(batch, maxBatch) // late arrivals join this transaction
			if late := hints(batch[i+1:]); len(late) > 1 {
				if err := wrapped.Prefetch(ctx, late); err != nil {
					return failure(err)
				}
			}
		}
	}
	if ok == 0 {
		abort()
		return results, batch, false, false
	}
	if err := wrapped.FlushAndCommit(ctx); err != nil {
		var pg *pgconn.PgError
		if !errors.As(err, &pg) {
			// not the server's answer (the connection failed): COMMIT
			// may have run, so the group is neither run again nor
			// acknowledged
			broken = true
			fail(err)
			return results, batch, false, false
		}
		if len(batch) > 1 || retryable(err) {
			// the deferred rows of one request may be at fault: the rerun
			// with savepoints writes them within their request
			return failure(err)
		}
		abort()
		fail(err)
	}
	return results, batch, false, false
}
