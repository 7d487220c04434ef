package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// workers is how many goroutines contend in the concurrency tests.
const workers = 50

// together runs fn(i) for i in [0, n) on n goroutines released at the same
// instant, and returns the errors.
func together(n int, fn func(i int) error) []error {
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func requireNoErrors(t *testing.T, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s %d: %v", what, i, err)
		}
	}
}

func testConcurrency(t *testing.T, setup setupFunc) {
	t.Run("LockPattern", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := fullPattern("p", "pat-1", "split by file")
		p.SuccessCount, p.FailureCount = 0, 0
		b.seed(p)
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				p, err := tx.LockPattern(b.ctx, "p", "pat-1")
				if err != nil {
					return err
				}
				p.SuccessCount++
				p.UpdatedAt = at(i)
				return tx.UpdatePattern(b.ctx, p)
			})
		})
		requireNoErrors(t, "Update", errs)
		got := read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "pat-1") })
		if got.SuccessCount != workers {
			t.Errorf("after %d concurrent lock-increment-update transactions SuccessCount = %d (lost updates)",
				workers, got.SuccessCount)
		}
	})

	t.Run("LockCriterion", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// The criterion does not exist: the first locker creates it, the
		// others must wait for it rather than create their own.
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				c, err := tx.LockCriterion(b.ctx, "p", "c-1", at(i))
				if err != nil {
					return err
				}
				c.HelpfulCount++
				c.UpdatedAt = at(i)
				return tx.PutCriterion(b.ctx, c)
			})
		})
		requireNoErrors(t, "Update", errs)
		got := read(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "c-1") })
		if got.HelpfulCount != workers {
			t.Errorf("after %d concurrent lock-increment-put transactions HelpfulCount = %d (lost updates)",
				workers, got.HelpfulCount)
		}
	})

	t.Run("ViewsSeeWholeTransactions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		counter := fullPattern("p", "counter", "counts outcomes")
		counter.SuccessCount = 0
		b.seed(counter)
		// Each Update inserts an outcome and an error and increments the
		// counter; a View must see all three or none.
		var done atomic.Bool
		var views atomic.Int64
		readers := make(chan error, 4)
		var wg sync.WaitGroup
		for range cap(readers) {
			wg.Go(func() {
				for !done.Load() || views.Load() == 0 {
					err := b.s.View(b.ctx, func(tx store.Tx) error {
						n, err := tx.CountOutcomes(b.ctx, "p", store.OutcomeFilter{})
						if err != nil {
							return err
						}
						p, err := tx.GetPattern(b.ctx, "p", "counter")
						if err != nil {
							return err
						}
						errs, err := tx.ListErrors(b.ctx, "p", store.ErrorFilter{})
						if err != nil {
							return err
						}
						if p.SuccessCount != n || int64(len(errs)) != n {
							return fmt.Errorf("a View saw %d outcomes, %d errors and a counter of %d: a partial transaction",
								n, len(errs), p.SuccessCount)
						}
						return nil
					})
					views.Add(1)
					if err != nil {
						readers <- err
						return
					}
				}
			})
		}
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				id := fmt.Sprintf("w-%02d", i)
				if err := inserted(tx.InsertOutcome(b.ctx, fullOutcome("p", id))); err != nil {
					return err
				}
				if err := inserted(tx.InsertError(b.ctx, fullError("p", id))); err != nil {
					return err
				}
				p, err := tx.LockPattern(b.ctx, "p", "counter")
				if err != nil {
					return err
				}
				p.SuccessCount++
				return tx.UpdatePattern(b.ctx, p)
			})
		})
		done.Store(true)
		wg.Wait()
		close(readers)
		requireNoErrors(t, "Update", errs)
		for err := range readers {
			t.Error(err)
		}
		got := read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "counter") })
		if got.SuccessCount != workers {
			t.Errorf("counter = %d after %d Updates", got.SuccessCount, workers)
		}
	})

	t.Run("InsertSameID", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		won := make([]bool, workers)
		errs := together(workers, func(i int) error {
			o := fullOutcome("p", "o-1")
			o.TaskID = fmt.Sprintf("task-%02d", i)
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				var err error
				won[i], err = tx.InsertOutcome(b.ctx, o)
				return err
			})
		})
		requireNoErrors(t, "Update", errs)
		winners := 0
		winner := ""
		for i, w := range won {
			if w {
				winners++
				winner = fmt.Sprintf("task-%02d", i)
			}
		}
		if winners != 1 {
			t.Fatalf("%d concurrent InsertOutcome of one id reported true %d times, want once", workers, winners)
		}
		got := read(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		if got.TaskID != winner {
			t.Errorf("stored outcome has TaskID %q, want the one whose insert reported true, %q", got.TaskID, winner)
		}
	})

	t.Run("InsertSameContent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		won := make([]bool, workers)
		errs := together(workers, func(i int) error {
			p := fullPattern("p", fmt.Sprintf("pat-%02d", i), fmt.Sprintf("Split by file%s", [...]string{"", ".", " ", "..."}[i%4]))
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				var err error
				won[i], err = tx.InsertPattern(b.ctx, p)
				return err
			})
		})
		requireNoErrors(t, "Update", errs)
		var winners []string
		for i, w := range won {
			if w {
				winners = append(winners, fmt.Sprintf("pat-%02d", i))
			}
		}
		got := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
			return tx.ListPatterns(b.ctx, "p", store.PatternFilter{})
		})
		if len(winners) != 1 || len(got) != 1 || got[0].ID != winners[0] {
			t.Errorf("%d concurrent InsertPattern of one content key: inserts reported true for %v, stored %v; want one",
				workers, winners, keys(got, patternID))
		}
	})
}
