package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
)

type groupedArgs struct {
	N int `json:"n"`
}

func enqueueGrouped(ctx context.Context, tx store.Tx, now time.Time, n int, group string) error {
	_, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: "member", Args: groupedArgs{N: n},
		RunAt: now.Add(time.Duration(n) * time.Second), UniqueKey: fmt.Sprintf("member/%d", n),
		Mode: store.EnqueueRevive, MaxAttempts: 3, Deferred: true, Group: group})
	return err
}

// The grouped jobs deferred in one transaction are written as one job of
// the group's kind listing their arguments in order, due when the last of
// them is and without unique key; a group's only member, and a job
// without group, are written as themselves.
func TestGroupedJobsMergeInOneTransaction(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	err := s.Update(ctx, func(tx store.Tx) error {
		for _, n := range []int{3, 1, 2} {
			if err := enqueueGrouped(ctx, tx, now, n, "members"); err != nil {
				return err
			}
		}
		if err := enqueueGrouped(ctx, tx, now, 4, "alone"); err != nil {
			return err
		}
		return enqueueGrouped(ctx, tx, now, 5, "")
	})
	if err != nil {
		t.Fatal(err)
	}
	var all []store.Job
	if err := s.View(ctx, func(tx store.Tx) (err error) {
		all, err = tx.ListJobs(ctx, store.JobFilter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]store.Job{}
	for _, j := range all {
		byKind[j.Kind] = append(byKind[j.Kind], j)
	}
	if len(all) != 3 || len(byKind["members"]) != 1 || len(byKind["member"]) != 2 {
		t.Fatalf("jobs %+v: want one of kind members and two of kind member", all)
	}
	g := byKind["members"][0]
	var args jobs.GroupArgs
	if err := json.Unmarshal(g.Args, &args); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, raw := range args.Jobs {
		var a groupedArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		got = append(got, a.N)
	}
	if !slices.Equal(got, []int{3, 1, 2}) || g.UniqueKey != "" || !g.RunAt.Equal(now.Add(3*time.Second)) ||
		g.MaxAttempts != 3 || g.State != store.JobAvailable {
		t.Errorf("grouped job %+v with members %v: want members 3, 1, 2, due in 3 s, no key", g, got)
	}
	keys := []string{byKind["member"][0].UniqueKey, byKind["member"][1].UniqueKey}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"member/4", "member/5"}) {
		t.Errorf("single jobs keep their keys: %v", keys)
	}
}

// Under concurrent requests, some failing (the writer then reruns the
// group with a savepoint per request and writes each job at once), every
// job of a committed request is stored exactly once, as itself or inside
// a grouped job, and none of a failed request.
func TestGroupedJobsExactlyOnceUnderGroupCommit(t *testing.T) {
	t.Parallel()
	s := open(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	errBoom := errors.New("boom")
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(ctx, func(tx store.Tx) error {
				if err := enqueueGrouped(ctx, tx, now, i, "members"); err != nil {
					return err
				}
				if i%7 == 0 {
					return errBoom
				}
				return nil
			})
			if (err != nil) != (i%7 == 0) {
				t.Errorf("request %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	var all []store.Job
	if err := s.View(ctx, func(tx store.Tx) (err error) {
		all, err = tx.ListJobs(ctx, store.JobFilter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for _, j := range all {
		switch j.Kind {
		case "member":
			var a groupedArgs
			if err := json.Unmarshal(j.Args, &a); err != nil {
				t.Fatal(err)
			}
			seen[a.N]++
		case "members":
			var g jobs.GroupArgs
			if err := json.Unmarshal(j.Args, &g); err != nil {
				t.Fatal(err)
			}
			for _, raw := range g.Jobs {
				var a groupedArgs
				if err := json.Unmarshal(raw, &a); err != nil {
					t.Fatal(err)
				}
				seen[a.N]++
			}
		default:
			t.Fatalf("job of kind %q", j.Kind)
		}
	}
	for i := range n {
		if want := map[bool]int{true: 0, false: 1}[i%7 == 0]; seen[i] != want {
			t.Errorf("job %d stored %d times, want %d", i, seen[i], want)
		}
	}
}
