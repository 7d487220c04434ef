package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func feedbackID(e learning.FeedbackEvent) string { return e.ID }

// Criterion feedback events are projections of stored outcomes
// (learning.FeedbackEvents): these tests store outcomes and read events.
func testFeedback(t *testing.T, setup setupFunc) {
	t.Run("ProjectionOfOutcomes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullOutcome("p", "o-full")
		uni := fullOutcome(uniProject, "ид-🚀-1")
		uni.TaskID, uni.Criteria = "задача-1", []string{"читаемость", "type_safe"}
		zero := learning.Outcome{ID: "o-zero", Project: "p"}
		b.seed(full, uni, zero)
		for _, o := range []learning.Outcome{full, uni} {
			events := learning.FeedbackEvents(o)
			if len(events) != len(o.Criteria) {
				t.Fatalf("%d events for %d criteria", len(events), len(o.Criteria))
			}
			for _, e := range events {
				got := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
					return tx.FeedbackByCriterion(b.ctx, o.Project, e.Criterion)
				})
				requireList(t, "FeedbackByCriterion "+e.ID, []learning.FeedbackEvent{e}, got)
			}
			got := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
				return tx.FeedbackByTask(b.ctx, o.Project, o.TaskID)
			})
			requireSet(t, "FeedbackByTask "+o.ID, events, got, feedbackID)
		}
		requireSet(t, "EachFeedback p", learning.FeedbackEvents(full), eachFeedback(b, "p"), feedbackID)
		requireSet(t, "EachFeedback "+uniProject, learning.FeedbackEvents(uni), eachFeedback(b, uniProject), feedbackID)
	})

	t.Run("ByCriterionAndTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Oldest first by Timestamp, ties by id ascending; only the exact
		// criterion (no prefix, case or LIKE-wildcard matches) or task.
		mk := func(id, task string, ts int, criteria ...string) learning.Outcome {
			o := fullOutcome("p", id)
			o.TaskID, o.Timestamp, o.Criteria = task, at(ts), criteria
			return o
		}
		b.seed(
			mk("o-c", "t1", 10, "speed"), mk("o-a", "t2", 10, "speed", "readable"), mk("o-d", "t1", 5, "speed"),
			mk("o-b", "t1", 20, "speed"), mk("o-e", "t1", 1, "speed_x"), mk("o-f", "t1x", 2, "Speed", "sp%ed", `sp"eed`),
		)
		byCriterion := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByCriterion(b.ctx, "p", "speed")
		})
		want := []string{learning.FeedbackID("o-d", "speed"), learning.FeedbackID("o-a", "speed"),
			learning.FeedbackID("o-c", "speed"), learning.FeedbackID("o-b", "speed")}
		requireEqual(t, "FeedbackByCriterion order", want, keys(byCriterion, feedbackID))
		for _, c := range []string{"sp%ed", `sp"eed`, "Speed", "readable"} {
			got := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) { return tx.FeedbackByCriterion(b.ctx, "p", c) })
			if len(got) != 1 || got[0].Criterion != c {
				t.Errorf("FeedbackByCriterion(%q) = %v, want exactly one event of that criterion", c, keys(got, feedbackID))
			}
		}
		byTask := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByTask(b.ctx, "p", "t1")
		})
		requireEqual(t, "FeedbackByTask order", []string{learning.FeedbackID("o-e", "speed_x"), learning.FeedbackID("o-d", "speed"),
			learning.FeedbackID("o-c", "speed"), learning.FeedbackID("o-b", "speed")}, keys(byTask, feedbackID))
		for _, c := range []string{"spee", "spe_d", "%"} {
			none := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) { return tx.FeedbackByCriterion(b.ctx, "p", c) })
			requireList(t, "FeedbackByCriterion of "+c, nil, none)
		}
	})

	t.Run("EachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullOutcome("p", "o-1"), fullOutcome("p", "o-2"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachFeedback(b.ctx, "p", func(learning.FeedbackEvent) error { calls++; return errStop })
		})
		requireStopped(t, "EachFeedback", err, calls)
	})
}

func eachFeedback(b *bundle, project string) []learning.FeedbackEvent {
	b.t.Helper()
	var out []learning.FeedbackEvent
	b.view(func(tx store.Tx) error {
		return tx.EachFeedback(b.ctx, project, func(e learning.FeedbackEvent) error {
			out = append(out, e)
			return nil
		})
	})
	return out
}
