package jobs_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

func TestIntervalPeriod(t *testing.T) {
	t.Parallel()
	p := jobs.Interval(time.Hour)
	if !p.Valid() {
		t.Fatal("Interval(1h) invalid")
	}
	at := time.Date(2026, 11, 25, 13, 42, 7, 0, time.FixedZone("x", 3600))
	if got, want := p.Start(at), time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("start %v, want %v", got, want)
	}
	if got, want := p.Next(at), time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next %v, want %v", got, want)
	}
	// A period boundary belongs to the period it starts.
	b := time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC)
	if !p.Start(b).Equal(b) || !p.Next(b).Equal(b.Add(time.Hour)) {
		t.Errorf("boundary: %v %v", p.Start(b), p.Next(b))
	}
	for _, bad := range []jobs.Period{jobs.Interval(0), jobs.Interval(-time.Hour), jobs.Interval(time.Millisecond), "every x", "hourly"} {
		if bad.Valid() {
			t.Errorf("%q valid", bad)
		}
	}
	if !jobs.Daily.Valid() || !jobs.Weekly.Valid() {
		t.Error("daily/weekly invalid")
	}
	r := jobs.New(nil, jobs.Options{})
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Every accepted an invalid period")
			}
		}()
		r.Every(jobs.Periodic{Kind: "x", Period: jobs.Interval(0)})
	}()
}

// An interval job runs once per interval, whatever the number of runners.
func TestIntervalJobsOncePerInterval(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func() store.Store) {
		st := open()
		clock := testkit.NewClock(time.Date(2026, 11, 25, 10, 5, 0, 0, time.UTC))
		var mu sync.Mutex
		var starts []string
		newRunner := func() *jobs.Runner {
			r := jobs.New(st, jobs.Options{Now: clock.Now})
			r.Register(jobs.Kind{Name: "gc", Handler: func(_ context.Context, j jobs.Job) error {
				var a struct {
					Start time.Time `json:"period_start"`
				}
				if err := j.Decode(&a); err != nil {
					return err
				}
				mu.Lock()
				starts = append(starts, a.Start.Format("15:04"))
				mu.Unlock()
				return nil
			}})
			r.Every(jobs.Periodic{Kind: "gc", Period: jobs.Interval(15 * time.Minute)})
			return r
		}
		a, b := newRunner(), newRunner()
		step := func() {
			for _, r := range []*jobs.Runner{a, b} {
				if err := r.EnqueuePeriodic(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := r.RunDue(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		step()
		clock.Advance(5 * time.Minute) // 10:10, same interval
		step()
		clock.Advance(10 * time.Minute) // 10:20
		step()
		clock.Advance(time.Hour) // 11:20: missed intervals are not made up
		step()
		if got, want := len(starts), 3; got != want {
			t.Fatalf("ran %v, want 3 runs", starts)
		}
		if starts[0] != "10:00" || starts[1] != "10:15" || starts[2] != "11:15" {
			t.Errorf("runs %v", starts)
		}
	})
}

// The runner's loop wakes up for the next interval by itself.
func TestIntervalRunLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := sqlite.OpenEphemeral(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ran := make(chan time.Time, 8)
		r := jobs.New(st, jobs.Options{Poll: 24 * time.Hour})
		r.Register(jobs.Kind{Name: "gc", Handler: func(context.Context, jobs.Job) error { ran <- time.Now(); return nil }})
		r.Every(jobs.Periodic{Kind: "gc", Period: jobs.Interval(time.Hour)})
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		first := <-ran
		second := <-ran
		third := <-ran
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := second.Sub(first); d > time.Hour || d <= 0 {
			t.Errorf("second run %v after the first", d)
		}
		if d := third.Sub(second); d != time.Hour {
			t.Errorf("third run %v after the second, want 1h", d)
		}
	})
}
