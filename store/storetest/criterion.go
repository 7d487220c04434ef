package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func criterionName(c learning.Criterion) string { return c.Name }

func testCriterion(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullCriterion("p", "type_safe")
		requireAllSet(t, full)
		cases := []learning.Criterion{
			full,
			unicodeCriterion("критерий ✓ " + mixed),
			{Project: "p", Name: "zero"}, // zero sums (zero Ref), zero times
		}
		b.seed(toAny(cases)...)
		for _, c := range cases {
			got := read(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, c.Project, c.Name) })
			requireEqual(t, "GetCriterion "+c.Name, c, got)
			locked := write(b, func(tx store.Tx) (learning.Criterion, error) {
				return tx.LockCriterion(b.ctx, c.Project, c.Name, at(999))
			})
			requireEqual(t, "LockCriterion of an existing criterion "+c.Name, c, locked)
		}
		got := read(b, func(tx store.Tx) ([]learning.Criterion, error) { return tx.ListCriteria(b.ctx, "p") })
		requireList(t, "ListCriteria", []learning.Criterion{cases[0], cases[2]}, got)
		got = read(b, func(tx store.Tx) ([]learning.Criterion, error) { return tx.ListCriteria(b.ctx, uniProject) })
		requireList(t, "ListCriteria "+uniProject, cases[1:2], got)
	})

	t.Run("PutReplaces", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullCriterion("p", "c"))
		next := learning.Criterion{Project: "p", Name: "c", HarmfulCount: 1, UpdatedAt: at(100)}
		b.seed(next)
		got := read(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "c") })
		requireEqual(t, "criterion after PutCriterion", next, got)
		all := read(b, func(tx store.Tx) ([]learning.Criterion, error) { return tx.ListCriteria(b.ctx, "p") })
		requireList(t, "ListCriteria after a replacing PutCriterion", []learning.Criterion{next}, all)
	})

	t.Run("LockCreates", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		now := at(7).In(zone)
		want := learning.Criterion{Project: "p", Name: "fresh", CreatedAt: now, UpdatedAt: now}
		got := write(b, func(tx store.Tx) (learning.Criterion, error) { return tx.LockCriterion(b.ctx, "p", "fresh", now) })
		requireEqual(t, "LockCriterion of a missing criterion", want, got)
		stored := read(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "fresh") })
		requireEqual(t, "criterion created by LockCriterion", want, stored)
		again := write(b, func(tx store.Tx) (learning.Criterion, error) { return tx.LockCriterion(b.ctx, "p", "fresh", at(8)) })
		requireEqual(t, "second LockCriterion (keeps CreatedAt)", want, again)
		_, err := get(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "q", "fresh") })
		requireNotFound(t, "GetCriterion in the project next door", err)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullCriterion("p", "c"))
		_, err := get(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "p", "d") })
		requireNotFound(t, "GetCriterion of a missing name", err)
		_, err = get(b, func(tx store.Tx) (learning.Criterion, error) { return tx.GetCriterion(b.ctx, "q", "c") })
		requireNotFound(t, "GetCriterion of a name of another project", err)
	})

	t.Run("ListOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Bytewise: upper case before lower case, '-' (0x2d) before '_'
		// (0x5f), multi-byte UTF-8 last.
		for _, name := range []string{"beta_1", "émile", "alpha", "Zeta", "beta-2", "alpha2"} {
			b.seed(fullCriterion("p", name))
		}
		got := read(b, func(tx store.Tx) ([]learning.Criterion, error) { return tx.ListCriteria(b.ctx, "p") })
		requireEqual(t, "ListCriteria order", []string{"Zeta", "alpha", "alpha2", "beta-2", "beta_1", "émile"},
			keys(got, criterionName))
	})
}
