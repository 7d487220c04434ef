package kaizen_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Behind the commit ("behind"; "idle" adds the writer's own writes), a
// write that leaves the aggregates alone — a job enqueued, a read of jobs
// through store.ViewRows — keeps the staged aggregates staged: the job
// runner's claims and looks, under a stream of outcomes, no longer write
// them every time. A write that changes aggregates, and a read through
// View, write them and empty the journal, as before.
func TestAggregatesBehindNeutralWrites(t *testing.T) {
	t.Parallel()
	db, c, e, st, record := burstEngine(t, "behind")
	defer e.Close()
	state := func() (int64, int64) { return fileState(t, db) }
	if err := record(1)(0); err != nil { // the second use of the pattern
		t.Fatal(err)
	}
	journal, events := state()
	if journal == 0 || events >= 2 {
		t.Fatalf("after an outcome: journal %d, events %d: want the outcome staged", journal, events)
	}

	now := c.Now()
	job := store.Job{ID: "job-neutral", Kind: "test.neutral", Args: json.RawMessage(`{}`), State: store.JobAvailable,
		RunAt: now.Add(kaizen.DefaultConfig().Experience.AutoExtractDelay), MaxAttempts: 1, CreatedAt: now}
	if err := st.Update(ctx, func(tx store.Tx) error {
		_, err := tx.EnqueueJob(ctx, job, store.EnqueueKeep)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := store.ViewRows(ctx, st, func(tx store.Tx) error {
		_, err := tx.GetJob(ctx, job.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if j, ev := state(); j != journal || ev != events {
		t.Fatalf("after a job write and a read of jobs: journal %d, events %d; want %d, %d (still staged)", j, ev, journal, events)
	}
	if s := writerStats(e); s.Behind < 2 {
		t.Fatalf("the job's group did not end behind: %+v", s)
	}

	// an observation changes a pattern's maturity without an outcome
	if _, err := e.ObservePattern(ctx, kaizen.ObserveInput{Pattern: "Split by feature", Success: ptr(true), TaskID: "obs-1"}); err != nil {
		t.Fatal(err)
	}
	if j, ev := state(); j != 0 || ev != 3 {
		t.Fatalf("after an observation: journal %d, events %d; want 0, 3 (written)", j, ev)
	}

	if err := record(1)(1); err != nil {
		t.Fatal(err)
	}
	if j, _ := state(); j == 0 {
		t.Fatal("the second outcome was not staged")
	}
	if err := st.View(ctx, func(store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if j, ev := state(); j != 0 || ev != 4 {
		t.Fatalf("after View: journal %d, events %d; want 0, 4 (written)", j, ev)
	}
}

// Plan guidance is evaluated at a time read once its read has begun,
// after SQLite's barrier: a call that waited behind the writer (here held
// while the clock moves 5 s) is not evaluated before the events it reads.
// Evaluated at the time read before the wait, such a call fell back to
// recomputing every criterion's weight from its events under load.
func TestGuidanceEvaluatedAfterTheBarrier(t *testing.T) {
	t.Parallel()
	_, c, e, st, record := burstEngine(t, "behind")
	defer e.Close()
	if err := record(1)(0); err != nil { // staged: the next read waits for the writer
		t.Fatal(err)
	}
	held, release, hold := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		hold <- st.Update(ctx, func(store.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	type result struct {
		g   *learning.Guidance
		err error
	}
	done := make(chan result, 1)
	go func() {
		g, err := e.PlanGuidance(ctx, kaizen.PlanInput{Task: "split by feature"})
		done <- result{g, err}
	}()
	for st.Stats().Waiting < 1 { // its barrier waits behind the held write
		time.Sleep(time.Millisecond)
	}
	start := c.Now()
	c.Advance(5 * time.Second)
	close(release)
	if err := <-hold; err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := start.Add(5 * time.Second); !r.g.At.Equal(want) {
		t.Fatalf("guidance evaluated at %v, want %v (the time after its wait)", r.g.At, want)
	}
}
