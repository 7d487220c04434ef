package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

type outcomeAppender interface {
	AppendOutcome(ctx context.Context, o learning.Outcome) error
}

// Outcome rows appended in a group are written at its commit; one whose
// row the server rejects at that point (a NUL byte in its text) fails
// alone: the group is run again with a savepoint per request and the
// others commit.
func TestGroupCommitDeferredOutcomeFailsAlone(t *testing.T) {
	t.Parallel()
	s := twoStores(t)[0]
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	const n = 48
	results := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = s.Update(ctx, func(tx store.Tx) error {
				a, ok := tx.(outcomeAppender)
				if !ok {
					return fmt.Errorf("%T cannot append outcomes", tx)
				}
				o := learning.Outcome{ID: fmt.Sprintf("out-%d", i), Project: "p", TaskID: fmt.Sprintf("task-%d", i),
					Success: true, Timestamp: now, RecordedAt: now, FilesTouched: []string{}, Patterns: []string{},
					Criteria: []string{}, Tags: []string{}}
				if i%8 == 5 {
					o.Task = "bad\x00text"
				}
				return a.AppendOutcome(ctx, o)
			})
		})
	}
	wg.Wait()
	want := 0
	for i, err := range results {
		if bad := i%8 == 5; bad != (err != nil) {
			t.Errorf("request %d: err %v, want an error: %v", i, err, bad)
		}
		if err == nil {
			want++
		}
	}
	var got int64
	if err := s.View(ctx, func(tx store.Tx) error {
		var err error
		got, err = tx.CountOutcomes(ctx, "p", store.OutcomeFilter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got != int64(want) {
		t.Errorf("%d outcomes stored, want %d", got, want)
	}
	st := s.Stats()
	t.Logf("%d requests in %d groups, %d reruns", st.Requests, st.Batches, st.Reruns)
}
