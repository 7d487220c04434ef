package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

func job(id, kind, key string, runSec int) store.Job {
	return store.Job{ID: id, Kind: kind, Args: json.RawMessage(`{"n":1}`), UniqueKey: key, State: store.JobAvailable,
		RunAt: at(runSec), MaxAttempts: 3, CreatedAt: at(0)}
}

// nextJobAt reads when the next job of kinds is due.
func nextJobAt(b *bundle, kinds []string) (time.Time, bool) {
	var n time.Time
	var ok bool
	b.view(func(tx store.Tx) error {
		var err error
		n, ok, err = tx.NextJobAt(b.ctx, kinds)
		return err
	})
	return n, ok
}

func jobIDs(js []store.Job) []string {
	out := []string{}
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}

func testJobs(t *testing.T, setup setupFunc) {
	t.Run("EnqueueAndGet", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		j := job("job-1", "k", "", 5)
		if !write(b, func(tx store.Tx) (bool, error) { return tx.EnqueueJob(b.ctx, j, store.EnqueueKeep) }) {
			t.Fatal("first EnqueueJob reported false")
		}
		if write(b, func(tx store.Tx) (bool, error) { return tx.EnqueueJob(b.ctx, j, store.EnqueueKeep) }) {
			t.Error("EnqueueJob of an existing id reported true")
		}
		got := read(b, func(tx store.Tx) (store.Job, error) { return tx.GetJob(b.ctx, "job-1") })
		requireEqual(t, "GetJob", j, got)
		if _, err := get(b, func(tx store.Tx) (store.Job, error) { return tx.GetJob(b.ctx, "nope") }); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetJob of a missing job: %v", err)
		}
	})

	t.Run("UniqueKeyModes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		enq := func(j store.Job, mode store.EnqueueMode) bool {
			return write(b, func(tx store.Tx) (bool, error) { return tx.EnqueueJob(b.ctx, j, mode) })
		}
		if !enq(job("a", "k", "key-1", 10), store.EnqueueKeep) {
			t.Fatal("first job of a key not inserted")
		}
		if enq(job("b", "k", "key-1", 20), store.EnqueueKeep) {
			t.Error("a second job with the same key was inserted")
		}
		byKey := func() store.Job {
			return read(b, func(tx store.Tx) (store.Job, error) { return tx.GetJobByKey(b.ctx, "key-1") })
		}
		if j := byKey(); j.ID != "a" || !j.RunAt.Equal(at(10)) {
			t.Errorf("keep changed the job: %+v", j)
		}
		enq(job("c", "k", "key-1", 30), store.EnqueueDebounce)
		if j := byKey(); j.ID != "a" || !j.RunAt.Equal(at(30)) {
			t.Errorf("debounce did not move run_at: %+v", j)
		}
		// Claim and fail it for good: debounce leaves it, revive brings it back.
		claimed := write(b, func(tx store.Tx) ([]store.Job, error) {
			return tx.ClaimJobs(b.ctx, nil, "w", at(40), time.Minute, 10)
		})
		requireEqual(t, "claimed", []string{"a"}, jobIDs(claimed))
		b.update(func(tx store.Tx) error {
			return tx.FinishJob(b.ctx, "a", "w", store.JobFailed, time.Time{}, "boom", at(41))
		})
		enq(job("d", "k", "key-1", 50), store.EnqueueDebounce)
		if j := byKey(); j.State != store.JobFailed {
			t.Errorf("debounce revived a failed job: %+v", j)
		}
		enq(job("e", "k", "key-1", 60), store.EnqueueRevive)
		if j := byKey(); j.State != store.JobAvailable || j.Attempts != 0 || !j.RunAt.Equal(at(60)) || j.LastError != "" ||
			!j.FinishedAt.IsZero() {
			t.Errorf("revive: %+v", j)
		}
	})

	t.Run("ClaimOrderKindsAndLimit", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i, j := range []store.Job{job("j3", "x", "", 30), job("j1", "x", "", 10), job("j2", "y", "", 20),
			job("j4", "x", "", 100)} {
			_ = i
			b.update(func(tx store.Tx) error { _, err := tx.EnqueueJob(b.ctx, j, store.EnqueueKeep); return err })
		}
		next, ok := nextJobAt(b, []string{"x"})
		if !ok || !next.Equal(at(10)) {
			t.Errorf("NextJobAt x = %v %v, want %v", next, ok, at(10))
		}
		got := write(b, func(tx store.Tx) ([]store.Job, error) {
			return tx.ClaimJobs(b.ctx, []string{"x"}, "w1", at(50), time.Minute, 1)
		})
		requireEqual(t, "first claim: the oldest due x job", []string{"j1"}, jobIDs(got))
		if g := got[0]; g.State != store.JobRunning || g.LeaseOwner != "w1" || !g.LeaseUntil.Equal(at(50).Add(time.Minute)) ||
			g.Attempts != 1 {
			t.Errorf("claimed job: %+v", g)
		}
		got = write(b, func(tx store.Tx) ([]store.Job, error) {
			return tx.ClaimJobs(b.ctx, []string{"x"}, "w1", at(50), time.Minute, 10)
		})
		requireEqual(t, "second claim: the other due x job, not the future one", []string{"j3"}, jobIDs(got))
		got = write(b, func(tx store.Tx) ([]store.Job, error) {
			return tx.ClaimJobs(b.ctx, nil, "w1", at(50), time.Minute, 10)
		})
		requireEqual(t, "any kind", []string{"j2"}, jobIDs(got))
	})

	t.Run("DueAndExpiredLeasesTogether", func(t *testing.T) {
		// NextJobAt is the earliest of the available jobs' run_at and the
		// running jobs' lease end; a claim takes due jobs and expired
		// leases together, in run_at order, up to its limit in all.
		t.Parallel()
		b := setup(t)
		for _, j := range []store.Job{job("a", "k", "", 10), job("b", "k", "", 20), job("c", "k", "", 30), job("z", "other", "", 5)} {
			b.update(func(tx store.Tx) error { _, err := tx.EnqueueJob(b.ctx, j, store.EnqueueKeep); return err })
		}
		claim := func(owner string, now time.Time, limit int) []string {
			return jobIDs(write(b, func(tx store.Tx) ([]store.Job, error) {
				return tx.ClaimJobs(b.ctx, []string{"k"}, owner, now, 15*time.Second, limit)
			}))
		}
		next := func() time.Time {
			n, ok := nextJobAt(b, []string{"k"})
			if !ok {
				t.Fatal("NextJobAt: no job")
			}
			return n
		}
		requireEqual(t, "w1 at 12", []string{"a"}, claim("w1", at(12), 1)) // a's lease ends at 27
		if n := next(); !n.Equal(at(20)) {
			t.Errorf("NextJobAt = %v, want b's run_at %v", n, at(20))
		}
		requireEqual(t, "w1 at 20", []string{"b"}, claim("w1", at(20), 1)) // b's lease ends at 35
		if n := next(); !n.Equal(at(27)) {
			t.Errorf("NextJobAt = %v, want a's lease end %v (before c's run_at)", n, at(27))
		}
		requireEqual(t, "w2 at 40, two of three", []string{"a", "b"}, claim("w2", at(40), 2))
		requireEqual(t, "w2 at 40, the rest", []string{"c"}, claim("w2", at(40), 10))
	})

	t.Run("LeaseExpiryAndFencing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			_, err := tx.EnqueueJob(b.ctx, job("j", "k", "", 0), store.EnqueueKeep)
			return err
		})
		claim := func(owner string, now time.Time) []string {
			return jobIDs(write(b, func(tx store.Tx) ([]store.Job, error) {
				return tx.ClaimJobs(b.ctx, nil, owner, now, 10*time.Second, 10)
			}))
		}
		requireEqual(t, "w1 claims", []string{"j"}, claim("w1", at(1)))
		requireList(t, "a held lease is not claimable", nil, claim("w2", at(5)))
		b.update(func(tx store.Tx) error { return tx.ExtendJobLease(b.ctx, "j", "w1", at(20)) })
		requireList(t, "an extended lease holds", nil, claim("w2", at(15)))
		requireEqual(t, "an expired lease is claimable again", []string{"j"}, claim("w2", at(21)))
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			return tx.FinishJob(b.ctx, "j", "w1", store.JobCompleted, time.Time{}, "", at(22))
		})
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("the old owner finished the job: %v", err)
		}
		b.update(func(tx store.Tx) error {
			return tx.FinishJob(b.ctx, "j", "w2", store.JobAvailable, at(40), "retry me", at(22))
		})
		j := read(b, func(tx store.Tx) (store.Job, error) { return tx.GetJob(b.ctx, "j") })
		if j.State != store.JobAvailable || !j.RunAt.Equal(at(40)) || j.Attempts != 2 || j.LastError != "retry me" || j.LeaseOwner != "" {
			t.Errorf("after a retry: %+v", j)
		}
		requireList(t, "a retried job waits for its run_at", nil, claim("w3", at(39)))
		requireEqual(t, "then it runs", []string{"j"}, claim("w3", at(40)))
		b.update(func(tx store.Tx) error {
			return tx.FinishJob(b.ctx, "j", "w3", store.JobCompleted, time.Time{}, "", at(41))
		})
		if _, ok, err := func() (time.Time, bool, error) {
			var n time.Time
			var ok bool
			var err error
			b.view(func(tx store.Tx) error { n, ok, err = tx.NextJobAt(b.ctx, nil); return nil })
			return n, ok, err
		}(); ok || err != nil {
			t.Errorf("NextJobAt with only finished jobs: %v %v", ok, err)
		}
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.DeleteJobs(b.ctx, at(41)) }); n != 0 {
			t.Errorf("DeleteJobs before the finish deleted %d", n)
		}
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.DeleteJobs(b.ctx, at(42)) }); n != 1 {
			t.Errorf("DeleteJobs after the finish deleted %d, want 1", n)
		}
	})

	t.Run("ListAndCount", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 5 {
			j := job(fmt.Sprintf("j%d", i), []string{"a", "b"}[i%2], "", i)
			j.CreatedAt = at(i)
			b.update(func(tx store.Tx) error { _, err := tx.EnqueueJob(b.ctx, j, store.EnqueueKeep); return err })
		}
		requireEqual(t, "ListJobs kind a, newest first", []string{"j4", "j2", "j0"},
			jobIDs(read(b, func(tx store.Tx) ([]store.Job, error) { return tx.ListJobs(b.ctx, store.JobFilter{Kind: "a"}) })))
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountJobs(b.ctx, store.JobFilter{States: []store.JobState{store.JobAvailable}, Limit: 1})
		}); n != 5 {
			t.Errorf("CountJobs available = %d, want 5", n)
		}
	})

	// Concurrent claimers never receive the same job.
	t.Run("ConcurrentClaims", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const jobs, claimers = 60, 8
		b.update(func(tx store.Tx) error {
			for i := range jobs {
				if _, err := tx.EnqueueJob(b.ctx, job(fmt.Sprintf("j%02d", i), "k", "", 0), store.EnqueueKeep); err != nil {
					return err
				}
			}
			return nil
		})
		var mu sync.Mutex
		seen := map[string]string{}
		var wg sync.WaitGroup
		for c := range claimers {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", c)
				for {
					var got []store.Job
					if err := b.s.Update(b.ctx, func(tx store.Tx) error {
						var err error
						got, err = tx.ClaimJobs(b.ctx, nil, owner, at(1), time.Hour, 3)
						return err
					}); err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, j := range got {
						if prev, dup := seen[j.ID]; dup {
							t.Errorf("job %s claimed by %s and %s", j.ID, prev, owner)
						}
						seen[j.ID] = owner
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != jobs {
			t.Errorf("%d of %d jobs claimed", len(seen), jobs)
		}
	})
}
