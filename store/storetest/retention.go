package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// testRetention checks store.RetentionStorage: compaction keeps only the
// injected items of a recall (and the RefID filter follows), pruning by
// age and by count per project removes recalls with their item rows, and
// both leave other projects' recent recalls alone.
func testRetention(t *testing.T, setup setupFunc) {
	t.Run("Compact", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			for i := range 3 {
				r := fullRecall("p", fmt.Sprintf("recall-%d", i), "heur-1", "heur-2", "heur-3")
				if _, err := tx.InsertRecall(b.ctx, r); err != nil {
					return err
				}
			}
			injectedOnly := fullRecall("q", "recall-q", "heur-1")
			_, err := tx.InsertRecall(b.ctx, injectedOnly)
			return err
		})
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountRecalls(b.ctx, "p", store.RecallFilter{RefID: "heur-2"})
		}); n != 3 {
			t.Fatalf("before compaction %d recalls considered heur-2", n)
		}
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.CompactRecalls(b.ctx, 2) }); n != 2 {
			t.Fatalf("compacted %d with limit 2", n)
		}
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.CompactRecalls(b.ctx, 10) }); n != 1 {
			t.Fatalf("second pass compacted %d, want 1", n)
		}
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.CompactRecalls(b.ctx, 10) }); n != 0 {
			t.Fatalf("third pass compacted %d, want 0", n)
		}
		r := read(b, func(tx store.Tx) (experience.RecallEvent, error) { return tx.GetRecall(b.ctx, "p", "recall-1") })
		want := fullRecall("p", "recall-1", "heur-1")
		if len(r.Items) != 1 || r.Items[0] != want.Items[0] || r.Query != want.Query || len(r.LiveSignals) != 2 {
			t.Fatalf("compacted recall %+v", r)
		}
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountRecalls(b.ctx, "p", store.RecallFilter{RefID: "heur-2"})
		}); n != 0 {
			t.Fatalf("after compaction %d recalls still list heur-2", n)
		}
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountRecalls(b.ctx, "p", store.RecallFilter{RefID: "heur-1"})
		}); n != 3 {
			t.Fatalf("after compaction %d recalls list the injected heur-1", n)
		}
	})
	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		b.update(func(tx store.Tx) error {
			for _, project := range []string{"p", "q"} {
				for i := range 5 {
					r := fullRecall(project, fmt.Sprintf("recall-%d", i), "heur-1", "heur-2")
					r.CreatedAt = base.Add(time.Duration(i) * 24 * time.Hour)
					if _, err := tx.InsertRecall(b.ctx, r); err != nil {
						return err
					}
				}
			}
			return nil
		})
		// Nothing to prune.
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.PruneRecalls(b.ctx, time.Time{}, 0) }); n != 0 {
			t.Fatalf("no policy pruned %d", n)
		}
		// Older than day 2 (recall-0 and recall-1 of each project).
		if n := write(b, func(tx store.Tx) (int64, error) {
			return tx.PruneRecalls(b.ctx, base.Add(2*24*time.Hour), 0)
		}); n != 4 {
			t.Fatalf("pruned %d by age, want 4", n)
		}
		// Keep the newest 2 per project.
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.PruneRecalls(b.ctx, time.Time{}, 2) }); n != 2 {
			t.Fatalf("pruned %d by count, want 2", n)
		}
		for _, project := range []string{"p", "q"} {
			recs := read(b, func(tx store.Tx) ([]experience.RecallEvent, error) {
				return tx.ListRecalls(b.ctx, project, store.RecallFilter{})
			})
			if len(recs) != 2 || recs[0].ID != "recall-4" || recs[1].ID != "recall-3" {
				t.Fatalf("%s keeps %+v", project, recs)
			}
			if n := read(b, func(tx store.Tx) (int64, error) {
				return tx.CountRecalls(b.ctx, project, store.RecallFilter{RefID: "heur-2"})
			}); n != 2 {
				t.Fatalf("%s: %d recalls by item after pruning", project, n)
			}
			if _, err := get(b, func(tx store.Tx) (experience.RecallEvent, error) {
				return tx.GetRecall(b.ctx, project, "recall-0")
			}); err == nil {
				t.Fatalf("%s: pruned recall still readable", project)
			}
		}
		// An id reused after pruning does not inherit stale item rows.
		b.update(func(tx store.Tx) error {
			r := fullRecall("p", "recall-0", "heur-9")
			r.CreatedAt = base.Add(10 * 24 * time.Hour)
			_, err := tx.InsertRecall(b.ctx, r)
			return err
		})
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountRecalls(b.ctx, "p", store.RecallFilter{RefID: "heur-1"})
		}); n != 2 {
			t.Fatalf("stale recall_items: %d recalls by heur-1", n)
		}
	})
}
