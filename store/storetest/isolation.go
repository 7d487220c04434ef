package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func testIsolation(t *testing.T, setup setupFunc) {
	t.Run("EmptyNeighbour", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		want := populate(b, "a", false)
		before := dump(b, []string{"a"})
		requireEqual(t, "state of project a", want, before.Data["a"])

		// Every read of project b, by a's ids, criteria, tasks and content,
		// finds nothing.
		empty := dump(b, []string{"b"})
		requireEqual(t, "state of project b", projectState{}, empty.Data["b"])
		requireEqual(t, "Projects", []string{"a"}, empty.Projects)
		lookups := []struct {
			what string
			do   func(tx store.Tx) (any, error)
		}{
			{"GetOutcome", func(tx store.Tx) (any, error) { return tx.GetOutcome(b.ctx, "b", "o-1") }},
			{"GetCriterion", func(tx store.Tx) (any, error) { return tx.GetCriterion(b.ctx, "b", "c-1") }},
			{"GetPattern", func(tx store.Tx) (any, error) { return tx.GetPattern(b.ctx, "b", "pat-1") }},
			{"GetMaturity", func(tx store.Tx) (any, error) { return tx.GetMaturity(b.ctx, "b", "pat-1") }},
			{"GetError", func(tx store.Tx) (any, error) { return tx.GetError(b.ctx, "b", "e-1") }},
		}
		for _, l := range lookups {
			_, err := get(b, l.do)
			requireNotFound(t, l.what+" in project b of a record of project a", err)
		}
		a := populateKeys("a")
		listings := []struct {
			what string
			do   func(tx store.Tx) (int, error)
		}{
			{"FeedbackByCriterion", func(tx store.Tx) (int, error) {
				r, err := tx.FeedbackByCriterion(b.ctx, "b", a.criterion)
				return len(r), err
			}},
			{"FeedbackByTask", func(tx store.Tx) (int, error) {
				r, err := tx.FeedbackByTask(b.ctx, "b", a.feedbackTask)
				return len(r), err
			}},
			{"FindPatternsByContent", func(tx store.Tx) (int, error) {
				r, err := tx.FindPatternsByContent(b.ctx, "b", "split by file")
				return len(r), err
			}},
			{"MaturityFeedback", func(tx store.Tx) (int, error) {
				r, err := tx.MaturityFeedback(b.ctx, "b", a.feedbackPattern)
				return len(r), err
			}},
			{"ErrorsByTask", func(tx store.Tx) (int, error) {
				r, err := tx.ErrorsByTask(b.ctx, "b", a.errorTask, true)
				return len(r), err
			}},
			{"ListOutcomes by task", func(tx store.Tx) (int, error) {
				r, err := tx.ListOutcomes(b.ctx, "b", store.OutcomeFilter{TaskID: a.outcomeTask})
				return len(r), err
			}},
			{"ListErrors by task", func(tx store.Tx) (int, error) {
				r, err := tx.ListErrors(b.ctx, "b", store.ErrorFilter{TaskID: a.errorTask})
				return len(r), err
			}},
			{"ListPatterns by tag", func(tx store.Tx) (int, error) {
				r, err := tx.ListPatterns(b.ctx, "b", store.PatternFilter{Tag: "go", Search: "split"})
				return len(r), err
			}},
		}
		for _, l := range listings {
			if n := read(b, l.do); n != 0 {
				t.Errorf("%s in project b returned %d records of project a", l.what, n)
			}
		}

		// Writes to project b by a's ids find nothing to change.
		changes := []struct {
			what string
			do   func(tx store.Tx) error
		}{
			{"LockPattern", func(tx store.Tx) error { _, err := tx.LockPattern(b.ctx, "b", "pat-1"); return err }},
			{"UpdatePattern", func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, fullPattern("b", "pat-1", "x")) }},
			{"DeletePattern", func(tx store.Tx) error { return tx.DeletePattern(b.ctx, "b", "pat-1") }},
			{"DeleteMaturity", func(tx store.Tx) error { return tx.DeleteMaturity(b.ctx, "b", "pat-1") }},
			{"ResolveError", func(tx store.Tx) error { _, err := tx.ResolveError(b.ctx, "b", "e-1", at(9)); return err }},
		}
		for _, c := range changes {
			requireNotFound(t, c.what+" in project b of a record of project a", b.s.Update(b.ctx, c.do))
		}
		fresh := write(b, func(tx store.Tx) (learning.Criterion, error) { return tx.LockCriterion(b.ctx, "b", "c-1", at(9)) })
		requireEqual(t, "LockCriterion in project b of a criterion name of project a",
			learning.Criterion{Project: "b", Name: "c-1", CreatedAt: at(9), UpdatedAt: at(9)}, fresh)

		requireEqual(t, "state of project a after reads and writes in project b", before.Data, dump(b, []string{"a"}).Data)
	})

	t.Run("SameIDs", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		wantA := populate(b, "a", false)
		wantB := populate(b, "b", true) // the same ids, other values
		got := dump(b, []string{"a", "b"})
		requireEqual(t, "state of project a", wantA, got.Data["a"])
		requireEqual(t, "state of project b", wantB, got.Data["b"])
		requireEqual(t, "Projects", []string{"a", "b"}, got.Projects)
	})
}

// populateKeys are the lookup keys of the records populate stores.
type populatedKeys struct {
	criterion, feedbackTask, feedbackPattern, errorTask, outcomeTask string
}

func populateKeys(project string) populatedKeys {
	return populatedKeys{
		criterion:       fullOutcome(project, "o-1").Criteria[0],
		feedbackTask:    fullOutcome(project, "o-1").TaskID,
		feedbackPattern: fullMaturityFeedback(project, "mf-1").PatternID,
		errorTask:       fullError(project, "e-1").TaskID,
		outcomeTask:     fullOutcome(project, "o-1").TaskID,
	}
}
