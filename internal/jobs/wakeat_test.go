package jobs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// countingStore counts the runner's reads of the store.
type countingStore struct {
	store.Store
	views atomic.Int64
}

func (c *countingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	c.views.Add(1)
	return c.Store.View(ctx, fn)
}

// WakeAt wakes a sleeping runner only for work due before it would look
// at the store anyway: work due later costs no look (under a stream of
// outcomes each enqueuing its extraction ahead, one look per outcome was
// a claim and a read, which writes SQLite's staged aggregates); work due
// earlier runs when due.
func TestWakeAtWakesOnlyForEarlierWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sq, err := sqlite.OpenEphemeral(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer sq.Close()
		st := &countingStore{Store: sq}
		ran := make(chan time.Time, 4)
		r := jobs.New(st, jobs.Options{Poll: time.Hour})
		r.Register(jobs.Kind{Name: "k", Handler: func(ctx context.Context, j jobs.Job) error {
			ran <- time.Now()
			return nil
		}})
		start := time.Now()
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		synctest.Wait() // asleep until start+1h (the poll)
		looks := st.views.Load()

		later := start.Add(2 * time.Hour)
		enqueue(t, st, start, jobs.Request{Kind: "k", RunAt: later, UniqueKey: "later"})
		r.WakeAt(later)
		synctest.Wait()
		if n := st.views.Load(); n != looks {
			t.Fatalf("work due after the runner's next look woke it: %d looks, want %d", n, looks)
		}

		soon := start.Add(10 * time.Minute)
		enqueue(t, st, start, jobs.Request{Kind: "k", RunAt: soon, UniqueKey: "soon"})
		r.WakeAt(soon)
		if at := <-ran; !at.Equal(soon) {
			t.Errorf("work due before the runner's next look ran at +%v, want +10m", at.Sub(start))
		}
		if at := <-ran; !at.Equal(later) {
			t.Errorf("the later work ran at +%v, want +2h", at.Sub(start))
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
