package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// The writer's transaction runs on a connection it holds (sql.Conn), so
// that it can reach the pgx connection under database/sql and send
// several statements in one round trip (pgx.Batch: one pipeline, answered
// in order) where the transaction knows them in advance
// (sqlstore/pipeline.go): the prefetch of a group's reads.

// beginWriter starts the writer's transaction. end returns the connection
// to the pool; call it once the transaction is committed or rolled back.
func (s *Store) beginWriter(ctx context.Context) (tx *sql.Tx, pipe sqlstore.Pipeliner, end func(), err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	tx, err = conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, nil, nil, err
	}
	return tx, pipeliner(conn), func() { conn.Close() }, nil
}

// pipeliner sends statements through the pgx connection under conn, in
// the transaction open on it.
func pipeliner(conn *sql.Conn) sqlstore.Pipeliner { return faultyPipeliner(conn, noFault) }

// faultyPipeliner is pipeliner with a fault injected at COMMIT (fault.go).
func faultyPipeliner(conn *sql.Conn, fault commitFault) sqlstore.Pipeliner {
	return func(ctx context.Context, stmts []sqlstore.Pipelined) error {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("pipeline: driver connection %T is not pgx's", dc)
			}
			if fault != noFault && hasCommit(stmts) {
				if fault == lostBeforeCommit {
					breakConn(c.Conn())
				} else {
					defer breakConn(c.Conn())
					if err := sendBatch(ctx, c, stmts); err != nil {
						return err
					}
					return errInjectedLoss
				}
			}
			return sendBatch(ctx, c, stmts)
		})
	}
}

// sendBatch sends stmts as one pgx.Batch and reads their answers.
func sendBatch(ctx context.Context, c *stdlib.Conn, stmts []sqlstore.Pipelined) error {
	b := &pgx.Batch{}
	for _, st := range stmts {
		b.Queue(st.SQL, st.Args...)
	}
	br := c.Conn().SendBatch(ctx, b)
	for _, st := range stmts {
		if err := read(br, st); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// read reads the answer to one statement of a pipeline.
func read(br pgx.BatchResults, st sqlstore.Pipelined) error {
	if st.Row == nil {
		tag, err := br.Exec()
		if err == nil && st.Affected != nil {
			err = st.Affected(tag.RowsAffected())
		}
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := st.Row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
