package sqlstore

import (
	"context"
	"fmt"
)

// Pipelines (PostgreSQL's group commit, issue 17). The writer's
// statements each waited for the server's answer before the next was
// sent; where a transaction knows several statements ahead, it can send
// them at once and read their answers in order: one round trip. The
// server runs them one after the other in the transaction, each with its
// own snapshot (READ COMMITTED), exactly as if sent one by one, so a
// statement still sees what the ones before it locked and waited for.

// Pipelined is one statement of a pipeline: SQL with "?" placeholders, its
// arguments, and for a query the function each of its rows is scanned
// with (nil for a statement whose rows are not read).
type Pipelined struct {
	SQL  string
	Args []any
	Row  func(scanner) error
	// Affected, if set, checks the rows a write changed.
	Affected func(int64) error
}

// Pipeliner sends statements (with numbered placeholders) in one round
// trip and reads their answers in order, stopping at the first error.
type Pipeliner func(ctx context.Context, stmts []Pipelined) error

// SetPipeliner lets the transaction send several statements at once (see
// pipeline.go); without one it sends them one by one.
func (t *Tx) SetPipeliner(p Pipeliner) { t.pipe = p }

// RoundTrips returns the number of times the transaction waited for the
// server so far: statements sent alone, and pipelines.
func (t *Tx) RoundTrips() int { return t.trips }

// pipeline runs stmts in order, in one round trip when the transaction
// has a pipeliner.
func (t *Tx) pipeline(ctx context.Context, what string, stmts []Pipelined) error {
	for _, s := range stmts {
		if err := t.beforeStatement(ctx, s.SQL); err != nil {
			return err
		}
	}
	begin := t.pipe != nil && t.conn.Querier != nil && !t.conn.begun // conntx.go
	if t.pipe == nil || (len(stmts) == 1 && !begin) {
		for _, s := range stmts {
			if s.Row == nil {
				res, err := t.exec(ctx, s.SQL, s.Args...)
				if err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
				if s.Affected != nil {
					n, err := res.RowsAffected()
					if err != nil {
						return fmt.Errorf("%s: %w", what, err)
					}
					if err := s.Affected(n); err != nil {
						return err
					}
				}
				continue
			}
			if err := each(ctx, t, what, func(sc scanner) (struct{}, error) { return struct{}{}, s.Row(sc) },
				func(struct{}) error { return nil }, s.SQL, s.Args...); err != nil {
				return err
			}
		}
		return nil
	}
	bound := make([]Pipelined, 0, len(stmts)+2)
	if begin {
		bound = append(bound, t.beginStatements()...) // conntx.go
	}
	for _, s := range stmts {
		bound = append(bound, Pipelined{SQL: t.query(s.SQL), Args: s.Args, Row: s.Row, Affected: s.Affected})
	}
	t.statements += len(stmts)
	t.trips++
	if err := t.pipe(ctx, bound); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
