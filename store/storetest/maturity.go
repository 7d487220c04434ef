package storetest

import (
	"time"

	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func maturityID(m learning.Maturity) string { return m.PatternID }

func maturityFeedbackID(f learning.MaturityFeedback) string { return f.ID }

func testMaturity(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullMaturity("p", "pat-full")
		requireAllSet(t, full)
		cases := []learning.Maturity{
			full,
			unicodeMaturity("模式-" + mixed),
			{Project: "p", PatternID: "pat-zero"}, // zero sums, nil pointers, zero times
		}
		b.seed(toAny(cases)...)
		for _, m := range cases {
			got := read(b, func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, m.Project, m.PatternID) })
			requireEqual(t, "GetMaturity "+m.PatternID, m, got)
		}
		got := read(b, func(tx store.Tx) ([]learning.Maturity, error) { return tx.ListMaturity(b.ctx, "p") })
		requireSet(t, "ListMaturity p", []learning.Maturity{cases[0], cases[2]}, got, maturityID)
		got = read(b, func(tx store.Tx) ([]learning.Maturity, error) { return tx.ListMaturity(b.ctx, uniProject) })
		requireSet(t, "ListMaturity "+uniProject, cases[1:2], got, maturityID)

		// And through PatternsWithMaturity.
		b.seed(fullPattern("p", "pat-full", "a pattern"))
		records := read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
			return tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{})
		})
		requireList(t, "PatternsWithMaturity",
			[]store.PatternRecord{{Pattern: fullPattern("p", "pat-full", "a pattern"), Maturity: full}}, records)
	})

	t.Run("PutReplaces", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullMaturity("p", "pat-1"), fullMaturity("p", "pat-2"))
		next := learning.Maturity{Project: "p", PatternID: "pat-1", Generation: 7, ResetAt: ptr(at(70)), UpdatedAt: at(70)}
		b.seed(next)
		got := read(b, func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, "p", "pat-1") })
		requireEqual(t, "maturity after a replacing PutMaturity (pointers cleared)", next, got)
		all := read(b, func(tx store.Tx) ([]learning.Maturity, error) { return tx.ListMaturity(b.ctx, "p") })
		requireSet(t, "ListMaturity after a replacing PutMaturity", []learning.Maturity{next, fullMaturity("p", "pat-2")},
			all, maturityID)
	})

	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullMaturity("p", "pat-1"), fullMaturity("p", "pat-2"), fullMaturity("q", "pat-1"))
		b.update(func(tx store.Tx) error { return tx.DeleteMaturity(b.ctx, "p", "pat-1") })
		_, err := get(b, func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, "p", "pat-1") })
		requireNotFound(t, "GetMaturity after DeleteMaturity", err)
		all := read(b, func(tx store.Tx) ([]learning.Maturity, error) { return tx.ListMaturity(b.ctx, "p") })
		requireList(t, "ListMaturity after DeleteMaturity", []learning.Maturity{fullMaturity("p", "pat-2")}, all)
		other := read(b, func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, "q", "pat-1") })
		requireEqual(t, "maturity of the same pattern id in another project", fullMaturity("q", "pat-1"), other)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullMaturity("p", "pat-1"))
		for _, k := range []struct{ project, id, why string }{
			{"p", "pat-2", "a missing pattern id"},
			{"q", "pat-1", "a pattern id of another project"},
		} {
			_, err := get(b, func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, k.project, k.id) })
			requireNotFound(t, "GetMaturity of "+k.why, err)
			err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.DeleteMaturity(b.ctx, k.project, k.id) })
			requireNotFound(t, "DeleteMaturity of "+k.why, err)
		}
		got := read(b, func(tx store.Tx) (learning.Maturity, error) { return tx.GetMaturity(b.ctx, "p", "pat-1") })
		requireEqual(t, "maturity after failed deletes", fullMaturity("p", "pat-1"), got)
	})

	t.Run("Feedback", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullMaturityFeedback("p", "mf-full")
		requireAllSet(t, full)
		cases := []learning.MaturityFeedback{full, unicodeMaturityFeedback("ид-🚀-1"), {ID: "mf-zero", Project: "p"}}
		b.seed(toAny(cases)...)
		for _, f := range cases {
			got := read(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
				return tx.MaturityFeedback(b.ctx, f.Project, f.PatternID)
			})
			requireList(t, "MaturityFeedback "+f.ID, []learning.MaturityFeedback{f}, got)
		}
		requireSet(t, "EachMaturityFeedback p", []learning.MaturityFeedback{cases[0], cases[2]},
			eachMaturityFeedback(b, "p"), maturityFeedbackID)
		requireSet(t, "EachMaturityFeedback "+uniProject, cases[1:2], eachMaturityFeedback(b, uniProject), maturityFeedbackID)
	})

	t.Run("FeedbackInsertIdempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullMaturityFeedback("p", "mf-1")
		b.seed(first)
		second := unicodeMaturityFeedback("mf-1")
		second.Project = "p"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertMaturityFeedback(b.ctx, second) }); ok {
			t.Error("second InsertMaturityFeedback of the same id reported true, want false")
		}
		requireList(t, "maturity feedback after a duplicate insert", []learning.MaturityFeedback{first},
			eachMaturityFeedback(b, "p"))
		other := second
		other.Project = "q"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertMaturityFeedback(b.ctx, other) }); !ok {
			t.Error("InsertMaturityFeedback of an id taken in another project reported false, want true")
		}
		requireList(t, "maturity feedback of project q", []learning.MaturityFeedback{other}, eachMaturityFeedback(b, "q"))
		requireList(t, "maturity feedback of project p", []learning.MaturityFeedback{first}, eachMaturityFeedback(b, "p"))
	})

	t.Run("FeedbackAppend", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullMaturityFeedback("p", "mf-1")
		b.seed(first)
		dup := unicodeMaturityFeedback("mf-1")
		dup.Project, dup.PatternID = "p", first.PatternID
		added := fullMaturityFeedback("p", "mf-2")
		added.Timestamp = first.Timestamp.Add(time.Second)
		got := write(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
			for _, f := range []learning.MaturityFeedback{dup, added, added} {
				if err := tx.AppendMaturityFeedback(b.ctx, f); err != nil {
					return nil, err
				}
			}
			// visible to reads of the same transaction
			return tx.MaturityFeedback(b.ctx, "p", first.PatternID)
		})
		requireList(t, "maturity feedback read after appends", []learning.MaturityFeedback{first, added}, got)
		requireList(t, "maturity feedback after appends", []learning.MaturityFeedback{first, added}, eachMaturityFeedback(b, "p"))
	})

	t.Run("FeedbackOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Oldest first by Timestamp, ties by id ascending; only the pattern.
		mk := func(id, pattern string, ts int) learning.MaturityFeedback {
			f := fullMaturityFeedback("p", id)
			f.PatternID, f.Timestamp = pattern, at(ts)
			return f
		}
		b.seed(mk("mf-c", "pat-1", 10), mk("mf-a", "pat-1", 10), mk("mf-d", "pat-1", 5),
			mk("mf-b", "pat-1", 20), mk("mf-e", "pat-10", 1), mk("mf-f", "PAT-1", 2))
		got := read(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
			return tx.MaturityFeedback(b.ctx, "p", "pat-1")
		})
		requireEqual(t, "MaturityFeedback order", []string{"mf-d", "mf-a", "mf-c", "mf-b"}, keys(got, maturityFeedbackID))
		got = read(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
			return tx.MaturityFeedback(b.ctx, "p", "pat-2")
		})
		requireList(t, "MaturityFeedback of a pattern without feedback", nil, got)
	})

	t.Run("FeedbackEachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullMaturityFeedback("p", "mf-1"), fullMaturityFeedback("p", "mf-2"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachMaturityFeedback(b.ctx, "p", func(learning.MaturityFeedback) error { calls++; return errStop })
		})
		requireStopped(t, "EachMaturityFeedback", err, calls)
	})
}

func eachMaturityFeedback(b *bundle, project string) []learning.MaturityFeedback {
	b.t.Helper()
	return read(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
		var out []learning.MaturityFeedback
		err := tx.EachMaturityFeedback(b.ctx, project, func(f learning.MaturityFeedback) error { out = append(out, f); return nil })
		return out, err
	})
}
