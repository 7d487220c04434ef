package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

var ctx = context.Background()

// stores opens a fresh store of each backend.
func forEachStore(t *testing.T, f func(t *testing.T, open func() store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, func() store.Store {
			s, err := sqlite.OpenEphemeral(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.DSN(t)
		f(t, func() store.Store {
			s, err := postgres.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

func enqueue(t *testing.T, st store.Store, now time.Time, r jobs.Request) bool {
	t.Helper()
	var ok bool
	if err := st.Update(ctx, func(tx store.Tx) error {
		var err error
		ok, err = jobs.Enqueue(ctx, tx, now, r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func jobByKey(t *testing.T, st store.Store, key string) store.Job {
	t.Helper()
	var j store.Job
	if err := st.View(ctx, func(tx store.Tx) error {
		var err error
		j, err = tx.GetJobByKey(ctx, key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return j
}

// A job commits with the work that enqueues it, or not at all.
func TestEnqueueIsPartOfTheTransaction(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func() store.Store) {
		st := open()
		boom := errors.New("the work failed")
		err := st.Update(ctx, func(tx store.Tx) error {
			if _, err := jobs.Enqueue(ctx, tx, testkit.Start, jobs.Request{Kind: "k", UniqueKey: "rolled-back"}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		err = st.View(ctx, func(tx store.Tx) error {
			_, err := tx.GetJobByKey(ctx, "rolled-back")
			return err
		})
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a job of a rolled-back transaction exists: %v", err)
		}
	})
}

// RunDue runs a job once it is due, retries a failing one with growing
// backoff, fails it after its attempts or at once for a permanent error.
func TestRunDueRetriesAndFails(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func() store.Store) {
		st := open()
		clock := testkit.NewClock(testkit.Start)
		r := jobs.New(st, jobs.Options{Now: clock.Now})
		var calls sync.Map // key → attempts seen
		r.Register(jobs.Kind{Name: "flaky", MaxAttempts: 3, MinBackoff: time.Minute,
			Handler: func(ctx context.Context, j jobs.Job) error {
				var a struct{ Key string }
				if err := j.Decode(&a); err != nil {
					return err
				}
				n, _ := calls.LoadOrStore(a.Key, new(atomic.Int32))
				n.(*atomic.Int32).Add(1)
				switch a.Key {
				case "ok":
					return nil
				case "permanent":
					return jobs.Permanent(errors.New("cannot ever work"))
				}
				return errors.New("not yet")
			}})
		for _, k := range []string{"ok", "always", "permanent"} {
			enqueue(t, st, clock.Now(), jobs.Request{Kind: "flaky", Args: map[string]string{"key": k},
				RunAt: clock.Now().Add(time.Hour), UniqueKey: k})
		}
		if n, err := r.RunDue(ctx); n != 0 || err != nil {
			t.Fatalf("before the run_at: ran %d (%v)", n, err)
		}
		clock.Advance(time.Hour)
		if n, err := r.RunDue(ctx); n != 3 || err != nil {
			t.Fatalf("at the run_at: ran %d (%v), want 3", n, err)
		}
		if s := jobByKey(t, st, "ok").State; s != store.JobCompleted {
			t.Errorf("ok: %s", s)
		}
		if j := jobByKey(t, st, "permanent"); j.State != store.JobFailed || j.Attempts != 1 {
			t.Errorf("permanent: %+v", j)
		}
		always := jobByKey(t, st, "always")
		if always.State != store.JobAvailable || !always.RunAt.Equal(clock.Now().Add(time.Minute)) {
			t.Fatalf("first retry: %+v", always)
		}
		clock.Advance(time.Minute)
		r.RunDue(ctx)
		if j := jobByKey(t, st, "always"); j.State != store.JobAvailable || !j.RunAt.Equal(clock.Now().Add(2*time.Minute)) {
			t.Fatalf("second retry doubles the backoff: %+v", j)
		}
		clock.Advance(2 * time.Minute)
		r.RunDue(ctx)
		if j := jobByKey(t, st, "always"); j.State != store.JobFailed || j.Attempts != 3 || j.LastError != "not yet" {
			t.Fatalf("after 3 attempts: %+v", j)
		}
		got := r.Stats().Kinds["flaky"]
		if got != (jobs.KindStats{Completed: 1, Retried: 2, Failed: 2}) {
			t.Errorf("stats %+v", got)
		}
	})
}

// A job whose runner died is run by another once its lease expires, and
// the dead runner can no longer finish it.
func TestExpiredLeaseIsRescued(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func() store.Store) {
		st := open()
		clock := testkit.NewClock(testkit.Start)
		enqueue(t, st, clock.Now(), jobs.Request{Kind: "k", UniqueKey: "j"})
		// A runner claims it and dies.
		if err := st.Update(ctx, func(tx store.Tx) error {
			_, err := tx.ClaimJobs(ctx, []string{"k"}, "dead", clock.Now(), jobs.DefaultLease, 1)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var ran atomic.Int32
		r := jobs.New(st, jobs.Options{Now: clock.Now})
		r.Register(jobs.Kind{Name: "k", Handler: func(context.Context, jobs.Job) error { ran.Add(1); return nil }})
		if n, _ := r.RunDue(ctx); n != 0 {
			t.Fatal("a held job was run")
		}
		clock.Advance(jobs.DefaultLease + time.Second)
		if n, _ := r.RunDue(ctx); n != 1 || ran.Load() != 1 {
			t.Fatalf("the rescued job ran %d times", ran.Load())
		}
		if j := jobByKey(t, st, "j"); j.State != store.JobCompleted || j.Attempts != 2 {
			t.Errorf("rescued job: %+v", j)
		}
	})
}

// Two runners (two daemons on one database) run each period's job once.
func TestPeriodicJobsOncePerPeriod(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func() store.Store) {
		st := open()
		clock := testkit.NewClock(time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)) // a Wednesday
		var mu sync.Mutex
		var periods []string
		newRunner := func() *jobs.Runner {
			r := jobs.New(st, jobs.Options{Now: clock.Now})
			r.Register(jobs.Kind{Name: "review.daily", Handler: func(_ context.Context, j jobs.Job) error {
				var a struct {
					Start time.Time `json:"period_start"`
				}
				if err := j.Decode(&a); err != nil {
					return err
				}
				mu.Lock()
				periods = append(periods, a.Start.Format("2006-01-02"))
				mu.Unlock()
				return nil
			}})
			r.Every(jobs.Periodic{Kind: "review.daily", Period: jobs.Daily})
			return r
		}
		a, b := newRunner(), newRunner()
		step := func() {
			for _, r := range []*jobs.Runner{a, b, a} {
				if err := r.EnqueuePeriodic(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := r.RunDue(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		step()
		clock.Advance(30 * time.Minute) // same day
		step()
		clock.Advance(time.Hour) // the next day
		step()
		want := []string{"2026-11-25", "2026-11-26"}
		if fmt.Sprint(periods) != fmt.Sprint(want) {
			t.Errorf("periods run %v, want %v", periods, want)
		}
		if s := jobs.Weekly.Start(clock.Now()); s.Weekday() != time.Monday || s.After(clock.Now()) {
			t.Errorf("weekly period start %v", s)
		}
	})
}

// Inside a synctest bubble the runner's loop sleeps until the next job is
// due (virtual time), runs a job enqueued in six hours at that instant, is
// woken at once by Wake, and hands a job in flight back when stopped.
func TestRunLoopSleepsUntilDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := sqlite.OpenEphemeral(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ran := make(chan time.Time, 4)
		block := make(chan struct{})
		r := jobs.New(st, jobs.Options{Poll: time.Hour})
		r.Register(jobs.Kind{Name: "k", Handler: func(ctx context.Context, j jobs.Job) error {
			ran <- time.Now()
			if j.UniqueKey == "stuck" {
				select {
				case <-block:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}})
		start := time.Now()
		enqueue(t, st, start, jobs.Request{Kind: "k", RunAt: start.Add(6 * time.Hour), UniqueKey: "later"})
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		at := <-ran
		if d := at.Sub(start); d != 6*time.Hour {
			t.Errorf("the job ran after %v, want 6h", d)
		}
		// Enqueued now with a Wake: run without waiting for the hour's poll.
		enqueue(t, st, time.Now(), jobs.Request{Kind: "k", UniqueKey: "now"})
		before := time.Now()
		r.Wake()
		if at := <-ran; at != before {
			t.Errorf("a woken runner waited %v", at.Sub(before))
		}
		// A job in flight when the runner stops goes back to the store.
		enqueue(t, st, time.Now(), jobs.Request{Kind: "k", UniqueKey: "stuck"})
		r.Wake()
		<-ran
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if j := jobByKey(t, st, "stuck"); j.State != store.JobAvailable || j.LeaseOwner != "" {
			t.Errorf("a job in flight at stop: %+v", j)
		}
		close(block)
	})
}
