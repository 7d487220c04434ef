package kaizen_test

import (
	"sync"
	"testing"

	kaizen "github.com/kaizenhq/kaizen"
)

// Two daemons recording the outcomes of the same tasks at once: the
// key lock of a task's outcome (on PostgreSQL's group commit, the lock of
// the key's class, once per group) makes the second recorder of each task
// see the first's outcome, so every task holds one outcome and is counted
// once in its patterns.
func TestTwoEnginesSameTasksPostgres(t *testing.T) {
	t.Parallel()
	engines := twoPostgresEngines(t, "same-tasks")
	const tasks, workers = 48, 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*tasks)
	for _, e := range engines {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < tasks; i += workers {
					_, err := e.RecordOutcome(ctx, outcome(sprintf("bd-same-%d", i), true, "Split by feature"))
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	list, err := engines[1].ListOutcomes(ctx, kaizen.OutcomeQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != tasks {
		t.Errorf("%d outcomes, want %d (one per task)", list.Total, tasks)
	}
	d, err := engines[0].GetPattern(ctx, "", "Split by feature")
	if err != nil {
		t.Fatal(err)
	}
	if d.SuccessCount != tasks || d.MaturityRecord.HelpfulCount != tasks {
		t.Errorf("success %d helpful %d, want %d", d.SuccessCount, d.MaturityRecord.HelpfulCount, tasks)
	}
}
