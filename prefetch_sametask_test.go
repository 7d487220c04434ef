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
	recordSameTasksAtOnce(t, cfg, false)
}

// recordSameTasksAtOnce records each of 24 tasks 4 times at once on an
// engine opened with cfg and checks that each task keeps one outcome,
// counted once in its patterns, and exactly one of its explicit
// recordings is not Unchanged. With inferredFirst, the first recording of
// every other task is inferred, to be replaced by the explicit ones (no
// inferred outcome may survive).
func recordSameTasksAtOnce(t *testing.T, cfg kaizen.Config, inferredFirst bool) {
	t.Helper()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	const tasks, copies = 24, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := map[string]int{} // task → explicit recordings that were not Unchanged
	errs := make(chan error, tasks*copies)
	for i := range tasks {
		for c := range copies {
			wg.Go(func() {
				task := sprintf("bd-group-%d", i)
				in := outcome(task, i%3 != 0, "Split by feature", "Tests alongside implementation")
				in.Inferred = inferredFirst && c == 0 && i%2 == 0
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
