package postgres

import (
	"context"
	"testing"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// The writer's transaction run by hand for a group of hinted requests
// asks for generic plans (sqlstore/conntx.go) whether its first statement
// goes alone or in a pipeline, for that transaction only: the connection,
// back in the pool, plans as before.
func TestWriterTransactionUsesGenericPlans(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	for _, pipelined := range []bool{true, false} {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mode := func() string {
			var m string
			if err := conn.QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		before := mode()
		tx := sqlstore.NewConnTx(conn, hintedDialect)
		if pipelined {
			tx.SetPipeliner(pipeliner(conn))
			if err := tx.Prefetch(ctx, []store.WriteHint{{Project: "p", TaskID: "t"}}); err != nil {
				t.Fatal(err)
			}
		} else if _, err := tx.ListCriteria(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		if got := mode(); got != "force_generic_plan" {
			t.Errorf("pipelined %v: plan_cache_mode %q in the writer's transaction, want force_generic_plan", pipelined, got)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if got := mode(); got != before {
			t.Errorf("pipelined %v: plan_cache_mode %q after the transaction, want %q", pipelined, got, before)
		}
		conn.Close()
	}
}
