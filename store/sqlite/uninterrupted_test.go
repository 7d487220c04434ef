package sqlite_test

import (
	"context"
	"testing"

	"github.com/kaizenhq/kaizen/store"
)

// Once the writer runs a request, the request's context no longer
// interrupts its statements: a request cancelled mid-transaction (its
// caller gave up) still writes, so it cannot fail the group it runs in,
// and Update reports the commit.
func TestWriterStatementsIgnoreCancellation(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := s.Update(ctx, func(tx store.Tx) error {
		cancel()
		if _, err := tx.InsertOutcome(ctx, outcome("p", "o1")); err != nil {
			return err
		}
		_, err := tx.GetOutcome(ctx, "p", "o1")
		return err
	})
	if err != nil {
		t.Fatalf("a request cancelled while it ran: %v, want its commit", err)
	}
	if err := s.View(context.Background(), func(tx store.Tx) error {
		_, err := tx.GetOutcome(context.Background(), "p", "o1")
		return err
	}); err != nil {
		t.Fatalf("the outcome of the cancelled request: %v", err)
	}
}
