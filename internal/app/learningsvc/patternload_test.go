package learningsvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// TestLoadBaseSameAsRecords: a base loaded in full (loadBase: on SQLite
// from the scans in id order, put in the store's order here) has the rows
// of PatternsWithMaturity in its order and the id index of its rows, also
// when creation times do not follow the ids (later patterns with lower
// ids, equal times, patterns without a creation time, which come first)
// and with maturity rows of no pattern.
func TestLoadBaseSameAsRecords(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, _ := openStore(t, backend)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			snapWorld(t, st, 300, t0)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(5, 6))
			err := st.Update(ctx, func(tx store.Tx) error {
				for i := range 200 {
					id := fmt.Sprintf("%c-%04d", "ampz"[r.IntN(4)], r.IntN(10_000))
					if _, err := tx.GetPattern(ctx, "x", id); err == nil {
						continue
					}
					var at time.Time // unset for some
					if r.IntN(6) != 0 {
						at = t0.Add(time.Duration(r.IntN(50)) * time.Second) // many ties
					}
					p := learning.Pattern{ID: id, Project: "x", Kind: learning.KindPattern,
						Content: fmt.Sprintf("Extra pattern %d", i), Tags: []string{}, ExampleTasks: []string{},
						CreatedAt: at, UpdatedAt: t0}
					if _, err := tx.InsertPattern(ctx, p); err != nil {
						return err
					}
					if i%3 != 0 {
						m := learning.Maturity{Project: "x", PatternID: id, Helpful: learning.DecayedSum{Value: float64(i), Ref: t0}}
						if err := tx.PutMaturity(ctx, m); err != nil {
							return err
						}
					}
				}
				// maturity of no pattern (between, before and after the ids)
				for _, id := range []string{"0-orphan", "p-00002x", "zz-orphan"} {
					if err := tx.PutMaturity(ctx, learning.Maturity{Project: "x", PatternID: id, Manual: learning.Proven}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = st.View(ctx, func(tx store.Tx) error {
				if ir, ok := tx.(store.PatternRankIDReader); backend == "sqlite" {
					if !ok {
						t.Fatalf("%T does not stream pattern ranks by id", tx)
					}
					if used, err := ir.EachPatternRankByID(ctx, "x", func(*store.PatternRank) error { return nil }); err != nil || !used {
						t.Fatalf("EachPatternRankByID on SQLite: used %v, %v", used, err)
					}
				}
				b, err := loadBase(ctx, tx, "x")
				if err != nil {
					return err
				}
				recs, err := tx.PatternsWithMaturity(ctx, "x", store.PatternFilter{})
				if err != nil {
					return err
				}
				if len(b.rows) != len(recs) || len(b.byID) != len(recs) {
					t.Fatalf("%d rows (%d in the id index), %d records", len(b.rows), len(b.byID), len(recs))
				}
				for i := range recs {
					want := rowOf(&recs[i])
					if len(want.tags) == 0 {
						want.tags = nil
					}
					if !reflect.DeepEqual(b.rows[i], want) {
						t.Fatalf("row %d: %+v, want %+v", i, b.rows[i], want)
					}
				}
				ids := make([]string, len(b.byID))
				for i, p := range b.byID {
					ids[i] = b.rows[p].id
				}
				if !slices.IsSortedFunc(ids, strings.Compare) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
					t.Fatalf("id index not in id order")
				}
				for _, rec := range recs {
					if pos, ok := b.pos(rec.Pattern.ID); !ok || b.rows[pos].id != rec.Pattern.ID {
						t.Fatalf("pattern %s not found by id", rec.Pattern.ID)
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

// TestBaseByID: the store's order and the id index from rows in id order.
func TestBaseByID(t *testing.T) {
	mk := func(ids ...string) []patternRow {
		rows := make([]patternRow, len(ids))
		for i, id := range ids {
			rows[i].id = id
		}
		return rows
	}
	b := baseByID(mk("a", "b", "c", "d"), []int64{store.NoCreated, 5, 3, 3})
	var got []string
	for _, r := range b.rows {
		got = append(got, r.id)
	}
	if want := []string{"a", "c", "d", "b"}; !slices.Equal(got, want) {
		t.Fatalf("store order %v, want %v", got, want)
	}
	if want := []int32{0, 3, 1, 2}; !slices.Equal(b.byID, want) {
		t.Fatalf("id index %v, want %v", b.byID, want)
	}
	b = baseByID(mk("a", "b"), []int64{1, 1})
	if !slices.Equal(b.byID, []int32{0, 1}) || b.rows[0].id != "a" {
		t.Fatalf("sorted input changed: %v", b.byID)
	}
}
