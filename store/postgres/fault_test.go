package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The writer's connection breaks at the COMMIT of a group (fault.go):
// before COMMIT is sent, the server rolls the group back; after COMMIT
// ran, the group is durable but its answer is lost. Either way every
// caller of the group gets an error, never an acknowledgement the writer
// cannot stand behind, and the group is all or nothing: no task without
// its criterion event or the reverse. The writer then goes on with a new
// connection. With criterion events the group's COMMIT ends Flush's last
// pipeline; without, COMMIT is sent alone: both are covered.
func TestWriterConnectionLostAtCommit(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	for i, tc := range []struct {
		name    string
		fault   commitFault
		events  bool
		durable bool
	}{
		{"before COMMIT, pipelined", lostBeforeCommit, true, false},
		{"before COMMIT, alone", lostBeforeCommit, false, false},
		{"after COMMIT, pipelined", lostAfterCommit, true, true},
		{"after COMMIT, alone", lostAfterCommit, false, true},
	} {
		project := fmt.Sprintf("p%d", i) // one store (one migration), a project per case
		t.Run(tc.name, func(t *testing.T) {
			now := time.UnixMicro(1_700_000_000_000_000).UTC()
			event := func(id string) learning.FeedbackEvent {
				return learning.FeedbackEvent{ID: id, Project: project, Criterion: "accuracy", Type: learning.Helpful,
					RawValue: 0.9, TaskID: id, Timestamp: now}
			}
			record := func(tx store.Tx, id string) error {
				if _, err := tx.InsertTask(ctx, learning.Task{ID: id, Project: project, Description: "d",
					StartedAt: now, LastActivityAt: now, UpdatedAt: now}); err != nil {
					return err
				}
				if tc.events {
					_, err := tx.AddCriterionEvent(ctx, event(id), 1, 30, now)
					return err
				}
				return nil
			}
			if err := s.Update(ctx, func(tx store.Tx) error { return record(tx, "seed") }); err != nil {
				t.Fatal(err)
			}

			s.fault.Store(int32(tc.fault))
			const n = 12
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					errs[i] = s.Update(ctx, func(tx store.Tx) error { return record(tx, fmt.Sprintf("t%02d", i)) })
				})
			}
			wg.Wait()
			s.fault.Store(int32(noFault))
			for i, err := range errs {
				if err == nil {
					t.Errorf("request %d acknowledged although its COMMIT's answer was lost", i)
				}
			}

			var tasks, helpful int64
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE project = $1 AND id <> 'seed'`, project).Scan(&tasks); err != nil {
				t.Fatal(err)
			}
			if err := s.View(ctx, func(tx store.Tx) error {
				c, err := tx.GetCriterion(ctx, project, "accuracy")
				helpful = c.HelpfulCount
				if !tc.events && err != nil {
					return nil
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			if tc.durable {
				want = n
			}
			if tasks != want {
				t.Errorf("%d tasks stored, want %d", tasks, want)
			}
			if tc.events && helpful != want+1 {
				t.Errorf("criterion has %d helpful events, want %d (the seed and one per stored task)", helpful, want+1)
			}

			// the writer goes on
			if err := s.Update(ctx, func(tx store.Tx) error { return record(tx, "after") }); err != nil {
				t.Fatalf("after the fault: %v", err)
			}
		})
	}
}
