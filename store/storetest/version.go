package storetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func testVersion(t *testing.T, setup setupFunc) {
	version := func(b *bundle, project string) store.PatternVersion {
		b.t.Helper()
		return read(b, func(tx store.Tx) (store.PatternVersion, error) { return tx.PatternVersion(b.ctx, project) })
	}
	changed := func(b *bundle, project string, after int64) map[string]int64 {
		b.t.Helper()
		recs := read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
			return tx.PatternsWithMaturity(b.ctx, project, store.PatternFilter{ChangedAfter: after})
		})
		out := map[string]int64{}
		for _, r := range recs {
			out[r.Pattern.ID] = r.Version
		}
		return out
	}
	pattern := func(id string) learning.Pattern {
		p := fullPattern("p", id, "content of "+id)
		p.Kind = learning.KindPattern
		return p
	}

	t.Run("Lifecycle", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if v := version(b, "p"); v != (store.PatternVersion{}) {
			t.Fatalf("fresh project version %+v, want zero", v)
		}
		b.update(func(tx store.Tx) error { _, err := tx.InsertPattern(b.ctx, pattern("a")); return err })
		if v := version(b, "p"); v != (store.PatternVersion{Version: 1}) {
			t.Fatalf("after one insert: %+v, want version 1", v)
		}
		requireEqual(t, "changed after 0", map[string]int64{"a": 1}, changed(b, "p", 0))
		b.update(func(tx store.Tx) error {
			if _, err := tx.InsertPattern(b.ctx, pattern("b")); err != nil {
				return err
			}
			return tx.PutMaturity(b.ctx, fullMaturity("p", "a"))
		})
		if v := version(b, "p"); v.Version != 2 {
			t.Fatalf("one Update, one increment: %+v", v)
		}
		requireEqual(t, "changed after 1", map[string]int64{"a": 2, "b": 2}, changed(b, "p", 1))
		requireEqual(t, "changed after 2", map[string]int64{}, changed(b, "p", 2))

		// Failed Updates, reads, and writes of other records change nothing.
		errBoom := errors.New("boom")
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			p := pattern("a")
			p.SuccessCount = 99
			if err := tx.UpdatePattern(b.ctx, p); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("got %v", err)
		}
		b.update(func(tx store.Tx) error {
			if _, err := tx.GetPattern(b.ctx, "p", "a"); err != nil {
				return err
			}
			if _, err := tx.InsertOutcome(b.ctx, fullOutcome("p", "o1")); err != nil {
				return err
			}
			_, err := tx.LockCriterion(b.ctx, "p", "type_safe", at(1))
			return err
		})
		if v := version(b, "p"); v.Version != 2 {
			t.Fatalf("unchanged patterns moved the version: %+v", v)
		}
		// Removing a maturity record changes its pattern; deleting a pattern resets.
		b.update(func(tx store.Tx) error { return tx.DeleteMaturity(b.ctx, "p", "a") })
		requireEqual(t, "changed after 2", map[string]int64{"a": 3}, changed(b, "p", 2))
		b.update(func(tx store.Tx) error { return tx.DeletePattern(b.ctx, "p", "b") })
		if v := version(b, "p"); v != (store.PatternVersion{Version: 4, ResetVersion: 4}) {
			t.Fatalf("after a delete: %+v, want 4/4", v)
		}
		if v := version(b, "q"); v != (store.PatternVersion{}) {
			t.Fatalf("another project's version moved: %+v", v)
		}
	})

	// An incremental reader that keeps the patterns in memory and refreshes
	// them with ChangedAfter, under concurrent writers, always holds exactly
	// what a full read of the same snapshot returns.
	t.Run("IncrementalReaderConverges", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"}
		b.update(func(tx store.Tx) error {
			for _, id := range ids {
				if _, err := tx.InsertPattern(b.ctx, pattern(id)); err != nil {
					return err
				}
			}
			return nil
		})
		var wg sync.WaitGroup
		writers := 6
		done := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				for i := range 25 {
					err := b.s.Update(b.ctx, func(tx store.Tx) error {
						id := ids[(w*7+i*3)%len(ids)]
						p, err := tx.LockPattern(b.ctx, "p", id)
						if err != nil {
							return err
						}
						p.SuccessCount++
						if err := tx.UpdatePattern(b.ctx, p); err != nil {
							return err
						}
						if i%4 == 0 {
							m := fullMaturity("p", ids[(w+i)%len(ids)])
							m.HelpfulCount = int64(w*100 + i)
							return tx.PutMaturity(b.ctx, m)
						}
						return nil
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		go func() { wg.Wait(); close(done) }()
		cache := map[string]store.PatternRecord{}
		var cached int64
		refresh := func() {
			err := b.s.View(b.ctx, func(tx store.Tx) error {
				v, err := tx.PatternVersion(b.ctx, "p")
				if err != nil {
					return err
				}
				if v.ResetVersion > cached {
					cache, cached = map[string]store.PatternRecord{}, 0
				}
				delta, err := tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{ChangedAfter: cached})
				if err != nil {
					return err
				}
				for _, r := range delta {
					if r.Version > v.Version || r.Version <= cached {
						return fmt.Errorf("record %s version %d outside (%d, %d]", r.Pattern.ID, r.Version, cached, v.Version)
					}
					cache[r.Pattern.ID] = r
				}
				cached = v.Version
				full, err := tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{})
				if err != nil {
					return err
				}
				got := slices.SortedFunc(maps.Values(cache), func(a, b store.PatternRecord) int { return cmpID(a.Pattern.ID, b.Pattern.ID) })
				slices.SortFunc(full, func(a, b store.PatternRecord) int { return cmpID(a.Pattern.ID, b.Pattern.ID) })
				if d := diff(full, got); d != "" {
					return fmt.Errorf("incremental state differs from a full read at version %d (-full +incremental):\n%s", v.Version, d)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			refresh()
		}
		refresh()
		if cached == 0 {
			t.Fatal("the reader never saw a version")
		}
	})
}

func cmpID(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
