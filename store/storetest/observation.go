package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func observationID(o learning.Observation) string { return o.ID }

func testObservation(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullObservation("p", "ob-full")
		requireAllSet(t, full)
		cases := []learning.Observation{full, unicodeObservation("ид-🚀-1"), {ID: "ob-zero", Project: "p"}}
		b.seed(toAny(cases)...)
		for _, o := range cases {
			got := read(b, func(tx store.Tx) ([]learning.Observation, error) {
				return tx.ObservationsByPattern(b.ctx, o.Project, o.PatternID)
			})
			requireList(t, "ObservationsByPattern "+o.ID, []learning.Observation{o}, got)
		}
		requireSet(t, "EachObservation p", []learning.Observation{cases[0], cases[2]}, eachObservation(b, "p"), observationID)
		requireSet(t, "EachObservation "+uniProject, cases[1:2], eachObservation(b, uniProject), observationID)
	})

	t.Run("InsertIdempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullObservation("p", "ob-1")
		b.seed(first)
		second := unicodeObservation("ob-1")
		second.Project = "p"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertObservation(b.ctx, second) }); ok {
			t.Error("second InsertObservation of the same id reported true, want false")
		}
		requireList(t, "observations after a duplicate insert", []learning.Observation{first}, eachObservation(b, "p"))
		other := second
		other.Project = "q"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertObservation(b.ctx, other) }); !ok {
			t.Error("InsertObservation of an id taken in another project reported false, want true")
		}
		requireList(t, "observations of project q", []learning.Observation{other}, eachObservation(b, "q"))
		requireList(t, "observations of project p", []learning.Observation{first}, eachObservation(b, "p"))
	})

	t.Run("ByPattern", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Oldest first by Timestamp, ties by id ascending; only the pattern.
		mk := func(id, pattern string, ts int) learning.Observation {
			o := fullObservation("p", id)
			o.PatternID, o.Timestamp = pattern, at(ts)
			return o
		}
		b.seed(mk("ob-c", "pat-1", 10), mk("ob-a", "pat-1", 10), mk("ob-d", "pat-1", 5),
			mk("ob-b", "pat-1", 20), mk("ob-e", "pat-10", 1), mk("ob-f", "pat-", 2))
		got := read(b, func(tx store.Tx) ([]learning.Observation, error) {
			return tx.ObservationsByPattern(b.ctx, "p", "pat-1")
		})
		requireEqual(t, "ObservationsByPattern order", []string{"ob-d", "ob-a", "ob-c", "ob-b"}, keys(got, observationID))
		got = read(b, func(tx store.Tx) ([]learning.Observation, error) {
			return tx.ObservationsByPattern(b.ctx, "p", "pat-2")
		})
		requireList(t, "ObservationsByPattern of an unobserved pattern", nil, got)
	})

	t.Run("EachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullObservation("p", "ob-1"), fullObservation("p", "ob-2"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachObservation(b.ctx, "p", func(learning.Observation) error { calls++; return errStop })
		})
		requireStopped(t, "EachObservation", err, calls)
	})
}

func eachObservation(b *bundle, project string) []learning.Observation {
	b.t.Helper()
	return read(b, func(tx store.Tx) ([]learning.Observation, error) {
		var out []learning.Observation
		err := tx.EachObservation(b.ctx, project, func(o learning.Observation) error { out = append(out, o); return nil })
		return out, err
	})
}
