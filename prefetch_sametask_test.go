package kaizen_test

import (
	"sync"
	"testing"

	kaizen "github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/pgtest"
)

// One daemon on PostgreSQL recording each task several times at once: the
// recordings of one task often share a commit group, whose task reads
// were prefetched before any of them ran (store.WriteHint). Only the first
// may use the prefetched "no outcome yet" (answers are served once, and an
// appended outcome drops its task's); each later one must see the first's
// deferred row and change nothing: one outcome per task, the patterns
// counted once per task, one recording per task not Unchanged.
func TestSameTaskInOneGroupPostgres(t *testing.T) {
	t.Parallel()
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Project, cfg.Home = pgtest.DSN(t), "same-group", t.TempDir()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	const tasks, copies = 24, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := map[string]int{} // task → recordings that were not Unchanged
	errs := make(chan error, tasks*copies)
	for i := range tasks {
		for range copies {
			wg.Go(func() {
				task := sprintf("bd-group-%d", i)
				res, err := e.RecordOutcome(ctx, outcome(task, i%3 != 0, "Split by feature", "Tests alongside implementation"))
				if err != nil {
					errs <- err
					return
				}
				if !res.Unchanged {
					mu.Lock()
					recorded[task]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range tasks {
		if n := recorded[sprintf("bd-group-%d", i)]; n != 1 {
			t.Errorf("task %d recorded %d times, want once", i, n)
		}
	}
	list, err := e.ListOutcomes(ctx, kaizen.OutcomeQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != tasks {
		t.Errorf("%d outcomes, want %d (one per task)", list.Total, tasks)
	}
	for _, p := range []string{"Split by feature", "Tests alongside implementation"} {
		d, err := e.GetPattern(ctx, "", p)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.SuccessCount + d.FailureCount; got != tasks {
			t.Errorf("%s: %d successes + failures, want %d", p, got, tasks)
		}
	}
}
