package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

func outcome(project, id string) learning.Outcome {
	return learning.Outcome{ID: id, Project: project, TaskID: "task-" + id, Success: true,
		Timestamp: time.UnixMicro(1_700_000_000_000_000).UTC(), RecordedAt: time.UnixMicro(1_700_000_000_000_001).UTC(),
		Score: learning.Score{Raw: 1, Type: learning.Helpful}}
}

// A failing request inside a batch rolls back to its own savepoint: the
// other requests of the same batch commit, and it leaves nothing behind.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	errBoom := errors.New("boom")
	const n = 200
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Update(ctx, func(tx store.Tx) error {
				if _, err := tx.InsertOutcome(ctx, outcome("p", fmt.Sprintf("o%03d", i))); err != nil {
					return err
				}
				switch i % 5 {
				case 0:
					return errBoom
				case 1:
					panic("bad request")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	var want int64
	for i, err := range results {
		switch i % 5 {
		case 0:
			if !errors.Is(err, errBoom) {
				t.Fatalf("request %d: got %v, want boom", i, err)
			}
		case 1:
			if err == nil {
				t.Fatalf("request %d: a panic must surface as an error", i)
			}
		default:
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			want++
		}
	}
	err := s.View(ctx, func(tx store.Tx) error {
		got, err := tx.CountOutcomes(ctx, "p", store.OutcomeFilter{})
		if err != nil {
			return err
		}
		if got != want {
			t.Errorf("committed outcomes = %d, want %d", got, want)
		}
		for i := range n {
			_, err := tx.GetOutcome(ctx, "p", fmt.Sprintf("o%03d", i))
			if present := err == nil; present != (i%5 >= 2) {
				t.Errorf("outcome %d present=%v err=%v", i, present, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A request whose context is cancelled before the writer takes it never
// runs; one that ran reports the truth about its commit.
func TestUpdateCancelledContext(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := s.Update(ctx, func(tx store.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("err=%v ran=%v, want context.Canceled and not run", err, ran)
	}
}

func TestReopenKeepsCommittedData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "k.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.InsertOutcome(ctx, outcome("p", "kept"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("update after close: %v", err)
	}
	s, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.View(ctx, func(tx store.Tx) error {
		o, err := tx.GetOutcome(ctx, "p", "kept")
		if err == nil && o.TaskID != "task-kept" {
			t.Errorf("task id %q", o.TaskID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Failing requests in a batch undo their changes to cached aggregate rows,
// including rows they forced to be written early (a list query flushes the
// cache): the surviving count equals the successful requests exactly.
func TestGroupCommitUndoesCachedAggregates(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	errBoom := errors.New("boom")
	const n = 300
	var wg sync.WaitGroup
	var mu sync.Mutex
	succeeded := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(ctx, func(tx store.Tx) error {
				c, err := tx.LockCriterion(ctx, "p", "type_safe", now)
				if err != nil {
					return err
				}
				c.HelpfulCount++
				if err := tx.PutCriterion(ctx, c); err != nil {
					return err
				}
				if i%3 == 0 { // forces a flush of every staged row inside this request
					if _, err := tx.ListCriteria(ctx, "p"); err != nil {
						return err
					}
				}
				if i%4 == 0 {
					return errBoom
				}
				return nil
			})
			if err == nil {
				mu.Lock()
				succeeded++
				mu.Unlock()
			} else if !errors.Is(err, errBoom) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	err := s.View(ctx, func(tx store.Tx) error {
		c, err := tx.GetCriterion(ctx, "p", "type_safe")
		if err == nil && int(c.HelpfulCount) != succeeded {
			t.Errorf("helpful count %d, want %d successful requests", c.HelpfulCount, succeeded)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if succeeded != n-n/4 {
		t.Errorf("%d succeeded, want %d", succeeded, n-n/4)
	}
}

// Requests that all succeed never pay for savepoints: no batch is run
// again, and the aggregate they all update counts every one of them.
func TestGroupCommitWithoutFailuresRunsOnce(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(ctx, func(tx store.Tx) error {
				if _, err := tx.InsertOutcome(ctx, outcome("p", fmt.Sprintf("once-%03d", i))); err != nil {
					return err
				}
				c, err := tx.LockCriterion(ctx, "p", "type_safe", now)
				if err != nil {
					return err
				}
				c.HelpfulCount++
				return tx.PutCriterion(ctx, c)
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	st := s.(*sqlite.Store).Stats()
	if st.Reruns != 0 || st.Requests != n {
		t.Fatalf("stats %+v: want %d requests and no rerun", st, n)
	}
	err := s.View(ctx, func(tx store.Tx) error {
		c, err := tx.GetCriterion(ctx, "p", "type_safe")
		if err == nil && c.HelpfulCount != n {
			t.Errorf("helpful count %d, want %d", c.HelpfulCount, n)
		}
		got, err2 := tx.CountOutcomes(ctx, "p", store.OutcomeFilter{})
		if err2 == nil && got != n {
			t.Errorf("outcomes %d, want %d", got, n)
		}
		return errors.Join(err, err2)
	})
	if err != nil {
		t.Fatal(err)
	}
}
