package kaizen_test

import (
	"encoding/json"
	"testing"

	"github.com/kaizenhq/kaizen"
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
