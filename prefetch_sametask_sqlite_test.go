package kaizen_test

import (
	"path/filepath"
	"sync"
	"testing"

	kaizen "github.com/kaizenhq/kaizen"
)

// TestSameTaskInOneGroupSQLite is TestSameTaskInOneGroupPostgres on
// SQLite, whose writer prefetches a group's per-task reads too
// (sqlstore.Dialect.PrefetchTasks): each task recorded several times at
// once keeps one outcome, counted once in its patterns, and exactly one
// of its recordings is not Unchanged.
func TestSameTaskInOneGroupSQLite(t *testing.T) {
	t.Parallel()
	cfg := kaizen.DefaultConfig()
	cfg.Project, cfg.Home = "same-group", t.TempDir()
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
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
		for c := range copies {
			wg.Go(func() {
				task := sprintf("bd-group-%d", i)
				in := outcome(task, i%3 != 0, "Split by feature", "Tests alongside implementation")
				in.Inferred = c == 0 && i%2 == 0 // an inferred one, replaced by the explicit ones when first
				res, err := e.RecordOutcome(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				if !res.Unchanged && !in.Inferred {
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
			t.Errorf("task %d recorded explicitly %d times, want once", i, n)
		}
	}
	list, err := e.ListOutcomes(ctx, kaizen.OutcomeQuery{Limit: tasks * copies})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != tasks {
		t.Errorf("%d outcomes, want %d (one per task)", list.Total, tasks)
	}
	for _, o := range list.Items {
		if o.Inferred {
			t.Errorf("task %s kept its inferred outcome", o.TaskID)
		}
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
