package kaizen_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/store"
)

// Finding 5 of issue 12: each stored recall kept every item it considered
// (~12.6 KB per hooked prompt). Now it keeps the injected ones; the caller
// still sees everything considered.
func TestRecallStoredCompactly(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite")
	for i := range 30 {
		if _, err := b.e.Capture(ctx, kaizen.CaptureInput{TaskID: sprintf("memory-%d", i),
			Turns: []kaizen.TurnInput{{Role: "user", Content: sprintf("configure the pgx connection pool for postgres, variant %d", i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := b.e.Recall(ctx, kaizen.RecallInput{Query: "how do I configure the postgres connection pool", TaskID: "now"})
	if err != nil {
		t.Fatal(err)
	}
	injected := 0
	for _, it := range res.Items {
		if it.Injected {
			injected++
		}
	}
	if injected == 0 || len(res.Items) <= injected {
		t.Fatalf("the recall must consider more than it injects to test this: %d items, %d injected", len(res.Items), injected)
	}
	var stored experience.RecallEvent
	b.e.SettleRecalls()
	if err := b.e.Store().View(ctx, func(tx store.Tx) error {
		var err error
		stored, err = tx.GetRecall(ctx, res.Project, res.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(stored.Items) != injected {
		t.Fatalf("stored %d items, want the %d injected", len(stored.Items), injected)
	}
	for _, it := range stored.Items {
		if !it.Injected {
			t.Fatalf("stored a considered item %+v", it)
		}
	}
	// recall_items = "all" keeps them.
	c := setup(t, "sqlite", func(cfg *kaizen.Config) { cfg.Retention.RecallItems = "all" })
	if _, err := c.e.Capture(ctx, kaizen.CaptureInput{TaskID: "m", Turns: []kaizen.TurnInput{{Role: "user", Content: "configure the pool"}}}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.e.Recall(ctx, kaizen.RecallInput{Query: "configure the pool"}); err != nil || r.ID == "" {
		t.Fatalf("%+v %v", r, err)
	}
}

func insertRecalls(t *testing.T, st store.Store, project string, n int, start time.Time, step time.Duration) {
	t.Helper()
	if err := st.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			r := experience.RecallEvent{ID: sprintf("recall-%s-%03d", project, i), Project: project, Query: "q",
				LiveSignals: []experience.LiveSignal{}, CreatedAt: start.Add(time.Duration(i) * step),
				Items: []experience.RecallItem{{Kind: experience.ItemHeuristic, RefID: "heur-1", Score: 1, Injected: true},
					{Kind: experience.ItemHeuristic, RefID: "heur-2", Score: 0.5}}}
			if _, err := tx.InsertRecall(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func countRecalls(t *testing.T, st store.Store, project string, f store.RecallFilter) int64 {
	t.Helper()
	var n int64
	if err := st.View(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.CountRecalls(ctx, project, f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// The retention policy bounds recalls by age and count, compacts the
// recalls stored before compaction existed, and truncates SQLite's
// write-ahead log.
func TestGCAppliesRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", func(cfg *kaizen.Config) {
		cfg.Retention.RecallKeep = 20
		cfg.Retention.RecallMaxAge = 10 * 24 * time.Hour
	})
	now := b.clock.Now()
	insertRecalls(t, b.e.Store(), "p", 40, now.Add(-5*24*time.Hour), time.Minute) // recent: 40 > keep 20
	insertRecalls(t, b.e.Store(), "q", 5, now.Add(-30*24*time.Hour), time.Hour)   // all too old
	insertRecalls(t, b.e.Store(), "r", 3, now.Add(-1*time.Hour), time.Minute)     // kept
	res, err := b.e.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.RecallsCompacted != 48 || res.RecallsPruned != 20+5 {
		t.Fatalf("gc: %+v", res)
	}
	if n := countRecalls(t, b.e.Store(), "p", store.RecallFilter{}); n != 20 {
		t.Errorf("p keeps %d recalls", n)
	}
	if n := countRecalls(t, b.e.Store(), "q", store.RecallFilter{}); n != 0 {
		t.Errorf("q keeps %d recalls", n)
	}
	if n := countRecalls(t, b.e.Store(), "r", store.RecallFilter{RefID: "heur-2"}); n != 0 {
		t.Errorf("r: %d recalls still list a considered item", n)
	}
	if n := countRecalls(t, b.e.Store(), "r", store.RecallFilter{RefID: "heur-1"}); n != 3 {
		t.Errorf("r: %d recalls list the injected item", n)
	}
	if !res.Checkpointed || res.WALBytesAfter != 0 {
		t.Errorf("WAL not truncated: %+v", res)
	}
	if fi, err := os.Stat(b.cfg.Home + "/kaizen.db-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("WAL is %d bytes after gc", fi.Size())
	}
	// Idempotent.
	if res, err := b.e.GC(ctx); err != nil || res.RecallsCompacted+res.RecallsPruned != 0 {
		t.Fatalf("second gc: %+v %v", res, err)
	}
}

// Automatic compaction is a periodic job of the durable job runner: the
// daemon's job loop runs it without being asked.
func TestGCIsAPeriodicJob(t *testing.T) {
	t.Parallel()
	b := setup(t, "sqlite", func(cfg *kaizen.Config) { cfg.Retention.RecallKeep = 2 })
	insertRecalls(t, b.e.Store(), "p", 5, b.clock.Now().Add(-time.Hour), time.Minute)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.e.RunJobs(runCtx) }()
	testkit.Eventually(t, "the periodic gc job", func() bool {
		return countRecalls(t, b.e.Store(), "p", store.RecallFilter{}) == 2
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l, err := b.e.ListJobs(ctx, kaizen.JobQuery{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range l.Items {
		found = found || j.Kind == "gc"
	}
	if !found {
		t.Fatalf("no gc job among %+v", l.Items)
	}
}

func TestRetentionConfigValidate(t *testing.T) {
	t.Parallel()
	for _, bad := range []kaizen.RetentionConfig{
		{RecallMaxAge: -1}, {RecallKeep: -1}, {RecallItems: "some"}, {Interval: time.Second},
	} {
		cfg := kaizen.DefaultConfig()
		cfg.Retention = bad
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	d := kaizen.DefaultRetention()
	if d.RecallMaxAge <= 0 || d.RecallKeep <= 0 || d.Interval <= 0 || !d.Checkpoint || d.RecallItems != "injected" {
		t.Errorf("the default policy is not bounded: %+v", d)
	}
}
