package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// View implements store.Store: a read-only REPEATABLE READ transaction, so
// every read in fn sees the same snapshot. It runs by hand on a
// connection (sqlstore.NewConnReadTx): BEGIN goes in front of the first
// statement or pipeline, and reads known together go out in one pipeline
// (a recall's search: statistics, terms and version, then the postings),
// so a recall waits for the server about half as often as through a
// database/sql transaction (docs/storage.md).
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) (err error) {
	if s.closed.Load() {
		return store.ErrClosed
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		if errors.Is(err, sql.ErrConnDone) || s.closed.Load() {
			return store.ErrClosed
		}
		return fmt.Errorf("begin postgres transaction: %w", err)
	}
	wrapped := sqlstore.NewConnReadTx(conn, sqlstore.Postgres)
	wrapped.SetPipeliner(pipeliner(conn))
	broken := false
	defer func() {
		if p := recover(); p != nil {
			broken = true // the transaction may still be open
			err = fmt.Errorf("panic in transaction: %v", p)
		}
		s.views.Add(1)
		s.viewTrips.Add(int64(wrapped.RoundTrips()))
		if broken {
			// the connection must not go back to the pool in a transaction
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}()
	ferr := fn(wrapped)
	if err := wrapped.EndRead(context.WithoutCancel(ctx)); err != nil {
		broken = true
		if ferr == nil {
			return fmt.Errorf("end postgres read transaction: %w", err)
		}
	}
	return ferr
}

// ReadStats counts the read transactions (View) and the times they
// waited for the server: BEGIN when sent alone, statements sent alone,
// pipelines, and the ROLLBACK that ends them.
type ReadStats struct {
	Transactions int64 `json:"transactions"`
	RoundTrips   int64 `json:"round_trips"`
}

// ReadStats returns the read transactions' counters.
func (s *Store) ReadStats() ReadStats {
	return ReadStats{Transactions: s.views.Load(), RoundTrips: s.viewTrips.Load()}
}
