package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// Fault injection for tests: the writer's connection breaking around the
// COMMIT of a group (fault_test.go). Unset (the zero value) in every
// store but a test's.

type commitFault int32

const (
	noFault commitFault = iota
	// lostBeforeCommit: the connection breaks just before the statements
	// that hold COMMIT are sent; the server rolls the transaction back.
	lostBeforeCommit
	// lostAfterCommit: COMMIT runs and its answer arrives, then the
	// connection breaks and the answer is reported lost: the group is
	// durable but the writer cannot know it.
	lostAfterCommit
)

// errInjectedLoss is the error a lostAfterCommit fault reports.
var errInjectedLoss = errors.New("injected: connection lost after COMMIT was sent")

// hasCommit reports whether a pipeline holds COMMIT.
func hasCommit(stmts []sqlstore.Pipelined) bool {
	for _, st := range stmts {
		if st.SQL == "COMMIT" {
			return true
		}
	}
	return false
}

// breakConn closes the network connection under a pgx connection.
func breakConn(c *pgx.Conn) { _ = c.PgConn().Conn().Close() }

// faultQuerier is the writer's connection with the store's fault applied
// to a COMMIT sent alone.
type faultQuerier struct {
	*sql.Conn
	fault commitFault
}

func (f faultQuerier) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if q != "COMMIT" || f.fault == noFault {
		return f.Conn.ExecContext(ctx, q, args...)
	}
	raw := func() {
		_ = f.Conn.Raw(func(dc any) error {
			if c, ok := dc.(*stdlib.Conn); ok {
				breakConn(c.Conn())
			}
			return nil
		})
	}
	if f.fault == lostBeforeCommit {
		raw()
		return f.Conn.ExecContext(ctx, q, args...)
	}
	res, err := f.Conn.ExecContext(ctx, q, args...)
	if err != nil {
		return res, err
	}
	raw()
	return nil, errInjectedLoss
}
