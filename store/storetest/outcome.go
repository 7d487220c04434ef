package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func outcomeID(o learning.Outcome) string { return o.ID }

func testOutcome(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullOutcome("p", "o-full")
		requireAllSet(t, full)
		empty := learning.Outcome{ID: "o-empty", Project: "p", FilesTouched: []string{}, Patterns: []string{}, Criteria: []string{}}
		cases := []learning.Outcome{
			full,
			unicodeOutcome("ид-🚀-1"),
			{ID: "o-zero", Project: "p"}, // zero times, nil lists
			empty,
		}
		b.seed(toAny(cases)...)
		for _, o := range cases {
			got := read(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, o.Project, o.ID) })
			requireEqual(t, "GetOutcome "+o.ID, wantOutcome(o), got)
		}
		for _, project := range []string{"p", uniProject} {
			var want []learning.Outcome
			for _, o := range cases {
				if o.Project == project {
					want = append(want, wantOutcome(o))
				}
			}
			got := read(b, func(tx store.Tx) ([]learning.Outcome, error) {
				return tx.ListOutcomes(b.ctx, project, store.OutcomeFilter{})
			})
			requireSet(t, "ListOutcomes "+project, want, got, outcomeID)
			requireSet(t, "EachOutcome "+project, want, eachOutcome(b, project), outcomeID)
		}
	})

	t.Run("InsertIdempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullOutcome("p", "o-1")
		b.seed(first)
		second := unicodeOutcome("o-1")
		second.Project = "p"
		ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertOutcome(b.ctx, second) })
		if ok {
			t.Error("second InsertOutcome of the same id reported true, want false")
		}
		got := read(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		requireEqual(t, "outcome after a duplicate insert", first, got)
		n := read(b, func(tx store.Tx) (int64, error) { return tx.CountOutcomes(b.ctx, "p", store.OutcomeFilter{}) })
		if n != 1 {
			t.Errorf("CountOutcomes after a duplicate insert = %d, want 1", n)
		}

		other := unicodeOutcome("o-1")
		other.Project = "q"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertOutcome(b.ctx, other) }); !ok {
			t.Error("InsertOutcome of an id taken in another project reported false, want true")
		}
		got = read(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "q", "o-1") })
		requireEqual(t, "outcome of project q", wantOutcome(other), got)
		got = read(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-1") })
		requireEqual(t, "outcome of project p", first, got)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullOutcome("p", "o-1"))
		_, err := get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "o-2") })
		requireNotFound(t, "GetOutcome of a missing id", err)
		_, err = get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "q", "o-1") })
		requireNotFound(t, "GetOutcome of an id of another project", err)
	})

	t.Run("ListOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Newest first by RecordedAt, ties by id descending. Timestamp runs
		// the other way, so ordering by the wrong column shows.
		mk := func(id string, recorded, ts int) learning.Outcome {
			o := fullOutcome("p", id)
			o.RecordedAt, o.Timestamp = at(recorded), at(ts)
			return o
		}
		b.seed(mk("o-b", 10, 1), mk("o-d", 5, 2), mk("o-a", 10, 3), mk("o-c", 20, 4), mk("o-e", 10, 0))
		got := read(b, func(tx store.Tx) ([]learning.Outcome, error) {
			return tx.ListOutcomes(b.ctx, "p", store.OutcomeFilter{})
		})
		requireEqual(t, "ListOutcomes order", []string{"o-c", "o-e", "o-b", "o-a", "o-d"}, keys(got, outcomeID))
	})

	t.Run("Filter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var seed []any
		for i, task := range []string{"t1", "t2", "t1", "t1", "t2", "t1"} {
			o := fullOutcome("p", "o-"+string(rune('0'+i)))
			o.TaskID, o.RecordedAt = task, at(i)
			seed = append(seed, o)
		}
		b.seed(seed...) // recorded o-0 … o-5 at 0 … 5 s
		for _, tc := range []struct {
			name  string
			f     store.OutcomeFilter
			want  []string
			count int64
		}{
			{"none", store.OutcomeFilter{}, []string{"o-5", "o-4", "o-3", "o-2", "o-1", "o-0"}, 6},
			{"task", store.OutcomeFilter{TaskID: "t1"}, []string{"o-5", "o-3", "o-2", "o-0"}, 4},
			{"unknown task", store.OutcomeFilter{TaskID: "t"}, nil, 0},
			{"since is inclusive", store.OutcomeFilter{Since: at(2)}, []string{"o-5", "o-4", "o-3", "o-2"}, 4},
			{"until is exclusive", store.OutcomeFilter{Until: at(2)}, []string{"o-1", "o-0"}, 2},
			{"since and until", store.OutcomeFilter{Since: at(1), Until: at(4)}, []string{"o-3", "o-2", "o-1"}, 3},
			{"since in another zone", store.OutcomeFilter{Since: at(4).In(zone)}, []string{"o-5", "o-4"}, 2},
			{"between microseconds", store.OutcomeFilter{Since: at(2).Add(time.Microsecond), Until: at(3).Add(time.Microsecond)}, []string{"o-3"}, 1},
			{"task and window", store.OutcomeFilter{TaskID: "t2", Since: at(2)}, []string{"o-4"}, 1},
			{"limit", store.OutcomeFilter{Limit: 2}, []string{"o-5", "o-4"}, 6},
			{"limit and offset", store.OutcomeFilter{Limit: 2, Offset: 2}, []string{"o-3", "o-2"}, 6},
			{"offset without limit", store.OutcomeFilter{Offset: 4}, []string{"o-1", "o-0"}, 6},
			{"offset past the end", store.OutcomeFilter{Offset: 6}, nil, 6},
			{"limit beyond the end", store.OutcomeFilter{Limit: 100, Offset: 5}, []string{"o-0"}, 6},
			{"task and paging", store.OutcomeFilter{TaskID: "t1", Limit: 2, Offset: 1}, []string{"o-3", "o-2"}, 4},
		} {
			got := read(b, func(tx store.Tx) ([]learning.Outcome, error) { return tx.ListOutcomes(b.ctx, "p", tc.f) })
			requireList(t, "ListOutcomes "+tc.name, tc.want, keys(got, outcomeID))
			n := read(b, func(tx store.Tx) (int64, error) { return tx.CountOutcomes(b.ctx, "p", tc.f) })
			if n != tc.count {
				t.Errorf("CountOutcomes %s = %d, want %d (Count ignores Limit and Offset)", tc.name, n, tc.count)
			}
		}
	})

	t.Run("EachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullOutcome("p", "o-1"), fullOutcome("p", "o-2"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachOutcome(b.ctx, "p", func(learning.Outcome) error { calls++; return errStop })
		})
		requireStopped(t, "EachOutcome", err, calls)
	})
}

// requireStopped checks that an Each* call stopped at the callback's first
// error and returned it.
func requireStopped(t *testing.T, what string, err error, calls int) {
	t.Helper()
	if !errors.Is(err, errStop) {
		t.Errorf("%s returned %v, want the callback's error", what, err)
	}
	if calls != 1 {
		t.Errorf("%s called its callback %d times after it failed, want 1", what, calls)
	}
}

func eachOutcome(b *bundle, project string) []learning.Outcome {
	b.t.Helper()
	return read(b, func(tx store.Tx) ([]learning.Outcome, error) {
		var out []learning.Outcome
		err := tx.EachOutcome(b.ctx, project, func(o learning.Outcome) error { out = append(out, o); return nil })
		return out, err
	})
}

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
