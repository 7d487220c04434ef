package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func feedbackID(e learning.FeedbackEvent) string { return e.ID }

func testFeedback(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullFeedback("p", "f-full")
		requireAllSet(t, full)
		cases := []learning.FeedbackEvent{full, unicodeFeedback("ид-🚀-1"), {ID: "f-zero", Project: "p"}}
		b.seed(toAny(cases)...)
		for _, e := range cases {
			got := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
				return tx.FeedbackByCriterion(b.ctx, e.Project, e.Criterion)
			})
			requireList(t, "FeedbackByCriterion "+e.ID, []learning.FeedbackEvent{e}, got)
			got = read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
				return tx.FeedbackByTask(b.ctx, e.Project, e.TaskID)
			})
			requireList(t, "FeedbackByTask "+e.ID, []learning.FeedbackEvent{e}, got)
		}
		requireSet(t, "EachFeedback p", []learning.FeedbackEvent{cases[0], cases[2]}, eachFeedback(b, "p"), feedbackID)
		requireSet(t, "EachFeedback "+uniProject, cases[1:2], eachFeedback(b, uniProject), feedbackID)
	})

	t.Run("InsertIdempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullFeedback("p", "f-1")
		b.seed(first)
		second := unicodeFeedback("f-1")
		second.Project, second.Criterion = "p", first.Criterion
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertFeedback(b.ctx, second) }); ok {
			t.Error("second InsertFeedback of the same id reported true, want false")
		}
		requireList(t, "feedback after a duplicate insert", []learning.FeedbackEvent{first}, eachFeedback(b, "p"))

		other := second
		other.Project = "q"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertFeedback(b.ctx, other) }); !ok {
			t.Error("InsertFeedback of an id taken in another project reported false, want true")
		}
		requireList(t, "feedback of project q", []learning.FeedbackEvent{other}, eachFeedback(b, "q"))
		requireList(t, "feedback of project p", []learning.FeedbackEvent{first}, eachFeedback(b, "p"))
	})

	t.Run("ByCriterionAndTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Oldest first by Timestamp, ties by id ascending; only the exact
		// criterion or task.
		mk := func(id, criterion, task string, ts int) learning.FeedbackEvent {
			e := fullFeedback("p", id)
			e.Criterion, e.TaskID, e.Timestamp = criterion, task, at(ts)
			return e
		}
		b.seed(
			mk("f-c", "speed", "t1", 10), mk("f-a", "speed", "t2", 10), mk("f-d", "speed", "t1", 5),
			mk("f-b", "speed", "t1", 20), mk("f-e", "speed_x", "t1", 1), mk("f-f", "Speed", "t1x", 2),
		)
		byCriterion := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByCriterion(b.ctx, "p", "speed")
		})
		requireEqual(t, "FeedbackByCriterion order", []string{"f-d", "f-a", "f-c", "f-b"}, keys(byCriterion, feedbackID))
		byTask := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByTask(b.ctx, "p", "t1")
		})
		requireEqual(t, "FeedbackByTask order", []string{"f-e", "f-d", "f-c", "f-b"}, keys(byTask, feedbackID))
		none := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByCriterion(b.ctx, "p", "spee")
		})
		requireList(t, "FeedbackByCriterion of an unknown criterion", nil, none)
		none = read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByTask(b.ctx, "p", "t")
		})
		requireList(t, "FeedbackByTask of an unknown task", nil, none)
	})

	t.Run("EachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullFeedback("p", "f-1"), fullFeedback("p", "f-2"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachFeedback(b.ctx, "p", func(learning.FeedbackEvent) error { calls++; return errStop })
		})
		requireStopped(t, "EachFeedback", err, calls)
	})
}

func eachFeedback(b *bundle, project string) []learning.FeedbackEvent {
	b.t.Helper()
	return read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
		var out []learning.FeedbackEvent
		err := tx.EachFeedback(b.ctx, project, func(e learning.FeedbackEvent) error { out = append(out, e); return nil })
		return out, err
	})
}
