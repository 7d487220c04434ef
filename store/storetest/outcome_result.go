package storetest

import (
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// testOutcomeResults checks OutcomeResults against ListOutcomes: the same
// outcomes in the same order under every filter, with the result, the
// inferred mark and both times exact to the microsecond.
func testOutcomeResults(t *testing.T, setup setupFunc) {
	t.Run("MatchesListOutcomes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var seed []any
		for i, task := range []string{"t1", "t2", "t1", "t1", "t2", "t1"} {
			o := fullOutcome("p", "o-"+string(rune('0'+i)))
			o.TaskID, o.Success = task, i%3 != 1
			// Recorded in order, finished in another; o-2 and o-3 are
			// recorded at the same instant (ties go by id, descending).
			o.RecordedAt = at(i).Add(time.Duration(i) * time.Microsecond)
			if i == 3 {
				o.RecordedAt = seed[2].(learning.Outcome).RecordedAt
			}
			o.Timestamp = at(100 - i).Add(123 * time.Microsecond)
			o.Inferred, o.Inference = false, ""
			if i == 4 {
				o.Inferred, o.Inference = true, "session ended without errors"
			}
			seed = append(seed, o)
		}
		other := fullOutcome("q", "o-0")
		b.seed(append(seed, other, unicodeOutcome("o-9"))...)
		for _, f := range []store.OutcomeFilter{
			{}, {TaskID: "t1"}, {Since: at(2)}, {Until: at(2)}, {Since: at(1), Until: at(4)},
			{Limit: 2}, {Limit: 2, Offset: 3}, {Offset: 4}, {Offset: 6}, {TaskID: "t2", Limit: 1},
		} {
			want := read(b, func(tx store.Tx) ([]learning.Outcome, error) { return tx.ListOutcomes(b.ctx, "p", f) })
			got := read(b, func(tx store.Tx) ([]store.OutcomeResult, error) { return tx.OutcomeResults(b.ctx, "p", f) })
			var wantRes []store.OutcomeResult
			for _, o := range want {
				wantRes = append(wantRes, store.OutcomeResult{ID: o.ID, TaskID: o.TaskID, Success: o.Success, Inferred: o.Inferred,
					Timestamp: o.Timestamp, RecordedAt: o.RecordedAt})
			}
			requireList(t, "OutcomeResults", wantRes, got)
		}
		all := read(b, func(tx store.Tx) ([]store.OutcomeResult, error) {
			return tx.OutcomeResults(b.ctx, "p", store.OutcomeFilter{})
		})
		requireEqual(t, "OutcomeResults order", []string{"o-5", "o-4", "o-3", "o-2", "o-1", "o-0"},
			keys(all, func(r store.OutcomeResult) string { return r.ID }))
		if len(all) == 6 {
			if !all[1].Inferred || all[0].Inferred {
				t.Errorf("Inferred = %v, %v for o-5, o-4; want false, true", all[0].Inferred, all[1].Inferred)
			}
			if all[4].Success || !all[5].Success {
				t.Errorf("Success = %v, %v for o-1, o-0; want false, true", all[4].Success, all[5].Success)
			}
		}
		uni := read(b, func(tx store.Tx) ([]store.OutcomeResult, error) {
			return tx.OutcomeResults(b.ctx, uniProject, store.OutcomeFilter{})
		})
		if len(uni) != 1 || uni[0].ID != "o-9" || uni[0].TaskID != unicodeOutcome("o-9").TaskID {
			t.Errorf("OutcomeResults of the unicode project = %+v, want o-9 with its task id", uni)
		}
		none := read(b, func(tx store.Tx) ([]store.OutcomeResult, error) {
			return tx.OutcomeResults(b.ctx, "empty", store.OutcomeFilter{})
		})
		if len(none) != 0 {
			t.Errorf("OutcomeResults of a project without outcomes = %+v, want none", none)
		}
	})
}
