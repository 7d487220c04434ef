package storetest

import (
	"errors"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// testAliasing checks that a caller cannot change stored records through
// the slices and pointers it passed in or got back. (SQL backends pass
// trivially; an in-memory backend must copy.)
func testAliasing(t *testing.T, setup setupFunc) {
	t.Run("Outcome", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		o := fullOutcome("p", "o-1")
		b.seed(o)
		o.FilesTouched[0], o.Patterns[0], o.Criteria[0] = "mutated", "mutated", "mutated"
		want := fullOutcome("p", "o-1")
		reads := []func(tx store.Tx) (learning.Outcome, error){
			func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") },
			func(tx store.Tx) (learning.Outcome, error) {
				l, err := tx.ListOutcomes(b.ctx, "p", store.OutcomeFilter{})
				return first(l, err)
			},
			func(tx store.Tx) (learning.Outcome, error) {
				var got learning.Outcome
				return got, tx.EachOutcome(b.ctx, "p", func(o learning.Outcome) error { got = o; return nil })
			},
		}
		requireEqual(t, "outcome after its caller changed the inserted slices", want, read(b, reads[0]))
		for i, r := range reads {
			got := read(b, r)
			got.FilesTouched[0], got.Patterns[0], got.Criteria[0] = "mutated", "mutated", "mutated"
			requireEqual(t, "outcome after a caller changed the slices read by read path "+string(rune('0'+i)),
				want, read(b, reads[0]))
		}
	})

	t.Run("Pattern", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := fullPattern("p", "pat-1", "split by file")
		b.seed(p, fullMaturity("p", "pat-1"))
		p.Tags[0], p.ExampleTasks[0] = "mutated", "mutated"
		want := fullPattern("p", "pat-1", "split by file")
		get := func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "pat-1") }
		requireEqual(t, "pattern after its caller changed the inserted slices", want, read(b, get))
		reads := []func(tx store.Tx) (learning.Pattern, error){
			get,
			func(tx store.Tx) (learning.Pattern, error) {
				return first(tx.ListPatterns(b.ctx, "p", store.PatternFilter{}))
			},
			func(tx store.Tx) (learning.Pattern, error) {
				return first(tx.FindPatternsByContent(b.ctx, "p", "split by file"))
			},
			func(tx store.Tx) (learning.Pattern, error) {
				r, err := first(tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{}))
				return r.Pattern, err
			},
			func(tx store.Tx) (learning.Pattern, error) {
				var got learning.Pattern
				return got, tx.EachPattern(b.ctx, "p", func(p learning.Pattern) error { got = p; return nil })
			},
		}
		for i, r := range reads {
			got := read(b, r)
			got.Tags[0], got.ExampleTasks[0] = "mutated", "mutated"
			requireEqual(t, "pattern after a caller changed the slices read by read path "+string(rune('0'+i)),
				want, read(b, get))
		}
		locked := write(b, func(tx store.Tx) (learning.Pattern, error) { return tx.LockPattern(b.ctx, "p", "pat-1") })
		locked.Tags[0] = "mutated"
		requireEqual(t, "pattern after a caller changed the slices of LockPattern's result", want, read(b, get))

		// Slices passed to UpdatePattern are not kept either.
		next := fullPattern("p", "pat-1", "split by module")
		b.update(func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, next) })
		next.Tags[0] = "mutated"
		requireEqual(t, "pattern after its caller changed the slices it updated with",
			fullPattern("p", "pat-1", "split by module"), read(b, get))
	})

	t.Run("Maturity", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		m := fullMaturity("p", "pat-1")
		b.seed(m, fullPattern("p", "pat-1", "split by file"))
		*m.PromotedAt, *m.DeprecatedAt, *m.ResetAt = at(-1), at(-1), at(-1)
		want := fullMaturity("p", "pat-1")
		get := func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, "p", "pat-1") }
		requireEqual(t, "maturity after its caller changed the times it pointed to", want, read(b, get))
		reads := []func(tx store.Tx) (learning.Maturity, error){
			get,
			func(tx store.Tx) (learning.Maturity, error) { return first(tx.ListMaturity(b.ctx, "p")) },
			func(tx store.Tx) (learning.Maturity, error) {
				r, err := first(tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{}))
				return r.Maturity, err
			},
		}
		for i, r := range reads {
			got := read(b, r)
			*got.PromotedAt, *got.DeprecatedAt, *got.ResetAt = at(-1), at(-1), at(-1)
			requireEqual(t, "maturity after a caller changed the times read by read path "+string(rune('0'+i)),
				want, read(b, get))
		}
	})

	t.Run("Error", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		e := fullError("p", "e-1")
		b.seed(e)
		*e.ResolvedAt = at(-1)
		want := fullError("p", "e-1")
		get := func(tx store.Tx) (learning.ErrorEntry, error) { return tx.GetError(b.ctx, "p", "e-1") }
		requireEqual(t, "error after its caller changed the time it pointed to", want, read(b, get))
		reads := []func(tx store.Tx) (learning.ErrorEntry, error){
			get,
			func(tx store.Tx) (learning.ErrorEntry, error) {
				return first(tx.ListErrors(b.ctx, "p", store.ErrorFilter{}))
			},
			func(tx store.Tx) (learning.ErrorEntry, error) {
				return first(tx.ErrorsByTask(b.ctx, "p", e.TaskID, true))
			},
		}
		for i, r := range reads {
			got := read(b, r)
			*got.ResolvedAt = at(-1)
			requireEqual(t, "error after a caller changed the time read by read path "+string(rune('0'+i)),
				want, read(b, get))
		}
		resolved := write(b, func(tx store.Tx) (learning.ErrorEntry, error) {
			return tx.ResolveError(b.ctx, "p", "e-1", at(99))
		})
		*resolved.ResolvedAt = at(-1)
		requireEqual(t, "error after a caller changed the time ResolveError returned", want, read(b, get))
	})
}

var errEmpty = errors.New("storetest: listing is empty")

// first returns a listing's first record.
func first[T any](s []T, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	if len(s) == 0 {
		return zero, errEmpty
	}
	return s[0], nil
}
