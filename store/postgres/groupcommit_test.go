package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/postgres"
)

// twoStores opens two stores (two kaizen servers) on one database.
func twoStores(t *testing.T) [2]*postgres.Store {
	dsn := pgtest.DSN(t)
	var out [2]*postgres.Store
	for i := range out {
		s, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out
}

// Concurrent requests on two servers add criterion events (summed per
// group and added to a free shard), read-modify-write the whole criterion
// now and then (LockCriterion folds the shards and the pending events),
// and lock and update one pattern; every fifth request fails after its
// writes. Counts are exact: nothing of a failed request stays, nothing of
// a committed one is lost.
func TestGroupCommitExactAcrossServers(t *testing.T) {
	t.Parallel()
	stores := twoStores(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	errBoom := errors.New("boom")
	p := learning.Pattern{ID: "pattern-shared", Project: "p", Content: "Split by feature", Kind: learning.KindPattern,
		Tags: []string{}, ExampleTasks: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := stores[0].Update(ctx, func(tx store.Tx) error { _, err := tx.InsertPattern(ctx, p); return err }); err != nil {
		t.Fatal(err)
	}
	const n = 240
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i] = stores[i%2].Update(ctx, func(tx store.Tx) error {
				e := learning.FeedbackEvent{Project: "p", Criterion: "type_safe", Type: learning.Helpful,
					Timestamp: now.Add(time.Duration(i) * time.Millisecond)}
				if i%7 == 3 {
					c, err := tx.LockCriterion(ctx, "p", "type_safe", now)
					if err != nil {
						return err
					}
					c.Apply(e, 1, 30)
					if err := tx.PutCriterion(ctx, c); err != nil {
						return err
					}
				} else if _, err := tx.AddCriterionEvent(ctx, e, 1, 30, now); err != nil {
					return err
				}
				got, err := tx.LockPattern(ctx, "p", p.ID)
				if err != nil {
					return err
				}
				got.SuccessCount++
				if err := tx.UpdatePattern(ctx, got); err != nil {
					return err
				}
				if i%5 == 0 {
					return errBoom
				}
				return nil
			})
		})
	}
	wg.Wait()
	want := int64(0)
	for i, err := range results {
		switch {
		case i%5 == 0 && !errors.Is(err, errBoom):
			t.Fatalf("request %d: got %v, want boom", i, err)
		case i%5 != 0 && err != nil:
			t.Fatalf("request %d: %v", i, err)
		case i%5 != 0:
			want++
		}
	}
	err := stores[1].View(ctx, func(tx store.Tx) error {
		c, err := tx.GetCriterion(ctx, "p", "type_safe")
		if err != nil {
			return err
		}
		if c.HelpfulCount != want {
			t.Errorf("criterion helpful count %d, want %d", c.HelpfulCount, want)
		}
		got, err := tx.GetPattern(ctx, "p", p.ID)
		if err != nil {
			return err
		}
		if got.SuccessCount != want {
			t.Errorf("pattern success count %d, want %d", got.SuccessCount, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var groups, requests int64
	for _, s := range stores {
		st := s.Stats()
		groups, requests = groups+st.Batches, requests+st.Requests
	}
	if requests != n+1 {
		t.Errorf("writers acknowledged %d requests, want %d", requests, n+1)
	}
	t.Logf("%d requests in %d groups", requests, groups)
}

// A request whose context is cancelled before the writer takes it fails
// with the context's error and writes nothing.
func TestGroupCommitCancelledContext(t *testing.T) {
	t.Parallel()
	s := twoStores(t)[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.InsertOutcome(context.Background(), learning.Outcome{ID: "o1", Project: "p", TaskID: "t1"})
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	err = s.View(context.Background(), func(tx store.Tx) error {
		n, err := tx.CountOutcomes(context.Background(), "p", store.OutcomeFilter{})
		if err == nil && n != 0 {
			err = fmt.Errorf("%d outcomes stored", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
