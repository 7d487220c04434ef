package kaizen_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// groupingStore runs the next n Updates in one transaction of the inner
// store once all n have arrived, as the writer's group commit does with
// requests that arrive together; other Updates pass through.
type groupingStore struct {
	store.Store
	mu      sync.Mutex
	n       int
	pending []func(store.Tx) error
	done    []chan error
}

func (g *groupingStore) group(n int) {
	g.mu.Lock()
	g.n = n
	g.mu.Unlock()
}

func (g *groupingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return g.Store.Update(ctx, fn)
	}
	ch := make(chan error, 1)
	g.pending, g.done = append(g.pending, fn), append(g.done, ch)
	if len(g.pending) < g.n {
		g.mu.Unlock()
		return <-ch
	}
	fns, done := g.pending, g.done
	g.pending, g.done, g.n = nil, nil, 0
	g.mu.Unlock()
	err := g.Store.Update(ctx, func(tx store.Tx) error {
		for _, f := range fns {
			if err := f(tx); err != nil {
				return err
			}
		}
		return nil
	})
	for _, c := range done {
		c <- err
	}
	return <-ch
}

// TestExtractionJobsGrouped: the first outcomes of several tasks recorded
// in one transaction enqueue one grouped extraction job, due after the
// quiet delay, which extracts each task once; a task whose inferred
// outcome is replaced by an explicit report afterwards is left to its own
// job, due after the delay of the replacement, and extracted once.
func TestExtractionJobsGrouped(t *testing.T) {
	t.Parallel()
	srv := goodChat(t)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "kaizen.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g := &groupingStore{Store: st}
	b := setup(t, "sqlite", withChat(srv, time.Minute, experience.ModeBalanced), func(c *kaizen.Config) { c.Store = g })
	for _, task := range []string{"task-1", "task-2", "task-3"} {
		conversation(t, b, task)
	}
	inferred := outcome("task-3", true)
	inferred.Inferred = true
	g.group(3)
	var wg sync.WaitGroup
	for _, in := range []kaizen.OutcomeInput{outcome("task-1", true), outcome("task-2", false), inferred} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.e.RecordOutcome(ctx, in); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	list := func(kind string) kaizen.JobList {
		l, err := b.e.ListJobs(ctx, kaizen.JobQuery{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		return *l
	}
	if grouped, single := list("experience.extract-group"), list("experience.extract"); grouped.Total != 1 || single.Total != 0 {
		t.Fatalf("jobs after one transaction of three outcomes: grouped %+v, single %+v", grouped.Items, single.Items)
	}
	// The explicit report replaces task-3's inferred outcome 30 s later.
	b.clock.Advance(30 * time.Second)
	if _, err := b.e.RecordOutcome(ctx, outcome("task-3", true)); err != nil {
		t.Fatal(err)
	}
	if n := runJobs(t, b); n != 0 {
		t.Fatalf("ran %d jobs before the delay", n)
	}
	b.clock.Advance(30 * time.Second)
	if n := runJobs(t, b); n != 1 || !hasExperience(b, "task-1") || !hasExperience(b, "task-2") ||
		hasExperience(b, "task-3") || srv.calls.Load() != 2 {
		t.Fatalf("the grouped job: ran %d, %d calls, experiences %v %v %v", n, srv.calls.Load(),
			hasExperience(b, "task-1"), hasExperience(b, "task-2"), hasExperience(b, "task-3"))
	}
	b.clock.Advance(30 * time.Second)
	if n := runJobs(t, b); n != 1 || !hasExperience(b, "task-3") || srv.calls.Load() != 3 {
		t.Fatalf("task-3's own job: ran %d, %d calls", n, srv.calls.Load())
	}
	b.clock.Advance(time.Hour)
	runJobs(t, b)
	if srv.calls.Load() != 3 {
		t.Errorf("%d calls in all, want one per task", srv.calls.Load())
	}
	if l := list("experience.extract-group"); l.Total != 1 || l.Items[0].State != "completed" {
		t.Errorf("grouped job: %+v", l.Items)
	}
}
