package learningsvc

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// TestOutcomeContextsSameAsOutcomes: the contexts the store lists
// (store.OutcomeContextReader) are those of ListOutcomes, in its order,
// with and without a lower bound and a limit.
func TestOutcomeContextsSameAsOutcomes(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, _ := openStore(t, backend)
			ctx := context.Background()
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			err := st.Update(ctx, func(tx store.Tx) error {
				for i := range 40 {
					o := learning.Outcome{ID: fmt.Sprintf("o-%02d", i), Project: "x", TaskID: fmt.Sprintf("t-%d", i%7),
						Task: fmt.Sprintf("task %d «é»", i), Success: i%3 != 0, Timestamp: t0.Add(time.Duration(i) * time.Minute),
						RecordedAt: t0.Add(time.Duration(i/2) * time.Hour), Criteria: []string{}, FilesTouched: []string{},
						Tags: []string{}, Patterns: []string{}}
					switch i % 4 {
					case 1:
						o.Tags, o.Patterns = []string{"billing"}, []string{"p-1", "p-2"}
					case 2:
						o.Tags, o.Patterns = []string{`q"uote`, `back\slash`, "<tag>"}, []string{"p-3"}
					case 3:
						o.Tags = []string{"", "x"}
					}
					o.Score = learning.Score{Raw: 0.5, Type: learning.Helpful}
					if _, err := tx.InsertOutcome(ctx, o); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = st.View(ctx, func(tx store.Tx) error {
				r, ok := tx.(store.OutcomeContextReader)
				if !ok {
					t.Fatalf("%T lists no outcome contexts", tx)
				}
				for _, c := range []struct {
					since time.Time
					limit int
				}{{time.Time{}, 0}, {time.Time{}, 9}, {t0.Add(7 * time.Hour), 0}, {t0.Add(7 * time.Hour), 5}} {
					got, err := r.OutcomeContexts(ctx, "x", c.since, c.limit)
					if err != nil {
						return err
					}
					outs, err := tx.ListOutcomes(ctx, "x", store.OutcomeFilter{Since: c.since, Limit: c.limit})
					if err != nil {
						return err
					}
					want := make([]store.OutcomeContext, len(outs))
					for i, o := range outs {
						want[i] = store.OutcomeContext{ID: o.ID, TaskID: o.TaskID, Task: o.Task, Tags: o.Tags, Patterns: o.Patterns,
							Success: o.Success, Timestamp: o.Timestamp, RecordedAt: o.RecordedAt}
					}
					if len(want) == 0 || !reflect.DeepEqual(got, want) {
						t.Fatalf("since %v limit %d: got %+v\nwant %+v", c.since, c.limit, got, want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
