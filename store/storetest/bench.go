package storetest

import (
	"fmt"
	"testing"

	"github.com/kaizenhq/kaizen/store"
)

// RunBenchmarks measures the store operations on the engine's hot paths.
// open must return a fresh, empty, migrated store and register its own
// cleanup.
func RunBenchmarks(b *testing.B, open func(b *testing.B) store.Store) {
	b.Run("InsertOutcome", func(b *testing.B) {
		s := open(b)
		ctx := b.Context()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o := fullOutcome("p", fmt.Sprintf("o-%09d", i))
			if err := s.Update(ctx, func(tx store.Tx) error { return inserted(tx.InsertOutcome(ctx, o)) }); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("LockUpdatePattern", func(b *testing.B) {
		s := open(b)
		ctx := b.Context()
		if err := s.Update(ctx, func(tx store.Tx) error {
			return inserted(tx.InsertPattern(ctx, fullPattern("p", "pat-1", "split by file")))
		}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Update(ctx, func(tx store.Tx) error {
				p, err := tx.LockPattern(ctx, "p", "pat-1")
				if err != nil {
					return err
				}
				p.SuccessCount++
				return tx.UpdatePattern(ctx, p)
			}); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("PatternsWithMaturity/1000", func(b *testing.B) {
		const n = 1000
		s := open(b)
		ctx := b.Context()
		if err := s.Update(ctx, func(tx store.Tx) error {
			for i := range n {
				id := fmt.Sprintf("pat-%04d", i)
				p := fullPattern("p", id, "pattern number "+id)
				p.CreatedAt = at(i)
				if err := inserted(tx.InsertPattern(ctx, p)); err != nil {
					return err
				}
				if i%2 == 0 {
					if err := tx.PutMaturity(ctx, fullMaturity("p", id)); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			var got []store.PatternRecord
			if err := s.View(ctx, func(tx store.Tx) error {
				var err error
				got, err = tx.PatternsWithMaturity(ctx, "p", store.PatternFilter{})
				return err
			}); err != nil {
				b.Fatal(err)
			}
			if len(got) != n {
				b.Fatalf("PatternsWithMaturity returned %d records, want %d", len(got), n)
			}
		}
	})
}
