package storetest

import (
	"errors"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// testForget checks store.ForgetStorage: each deletion removes exactly the
// records it names (and the dependent rows its doc lists), in its project
// only, and reports ErrNotFound for what is not there.
func testForget(t *testing.T, setup setupFunc) {
	t.Run("Outcome", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, p := range []string{"p", "q"} {
			b.update(func(tx store.Tx) error {
				for _, id := range []string{"out-1", "out-2"} {
					if _, err := tx.InsertOutcome(b.ctx, fullOutcome(p, id)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		b.update(func(tx store.Tx) error { return tx.DeleteOutcome(b.ctx, "p", "out-1") })
		if _, err := get(b, func(tx store.Tx) (learning.Outcome, error) { return tx.GetOutcome(b.ctx, "p", "out-1") }); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted outcome: %v", err)
		}
		// Its feedback events went with it; the other outcome's stayed.
		events := read(b, func(tx store.Tx) ([]learning.FeedbackEvent, error) {
			return tx.FeedbackByTask(b.ctx, "p", "task-out-1")
		})
		if len(events) != 0 {
			t.Errorf("feedback of the deleted outcome: %v", events)
		}
		for _, c := range []struct {
			project string
			want    int64
		}{{"p", 1}, {"q", 2}} {
			n := read(b, func(tx store.Tx) (int64, error) { return tx.CountOutcomes(b.ctx, c.project, store.OutcomeFilter{}) })
			if n != c.want {
				t.Errorf("project %s: %d outcomes, want %d", c.project, n, c.want)
			}
		}
		b.expectNotFound("outcome twice", func(tx store.Tx) error { return tx.DeleteOutcome(b.ctx, "p", "out-1") })
		b.expectNotFound("outcome of another project", func(tx store.Tx) error { return tx.DeleteOutcome(b.ctx, "r", "out-2") })
	})

	t.Run("MaturityFeedback", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			for _, id := range []string{"mf-1", "mf-2"} {
				if _, err := tx.InsertMaturityFeedback(b.ctx, fullMaturityFeedback("p", id)); err != nil {
					return err
				}
			}
			return nil
		})
		b.update(func(tx store.Tx) error { return tx.DeleteMaturityFeedback(b.ctx, "p", "mf-1") })
		left := read(b, func(tx store.Tx) ([]learning.MaturityFeedback, error) {
			return tx.MaturityFeedback(b.ctx, "p", fullMaturityFeedback("p", "mf-2").PatternID)
		})
		if len(left) != 1 || left[0].ID != "mf-2" {
			t.Errorf("after deleting mf-1: %+v", left)
		}
		b.expectNotFound("maturity feedback twice", func(tx store.Tx) error { return tx.DeleteMaturityFeedback(b.ctx, "p", "mf-1") })
	})

	t.Run("TurnAndSignal", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, fullTurn("p", "turn-1"), fullTurn("p", "turn-2"), fullTurn("q", "turn-1"),
			fullSignal("p", "sig-1"), fullSignal("p", "sig-2"))
		b.update(func(tx store.Tx) error {
			if err := tx.DeleteTurn(b.ctx, "p", "turn-1"); err != nil {
				return err
			}
			return tx.DeleteSignal(b.ctx, "p", "sig-1")
		})
		turns := read(b, func(tx store.Tx) ([]experience.Turn, error) { return tx.ListTurns(b.ctx, "p", store.TurnFilter{}) })
		if len(turns) != 1 || turns[0].ID != "turn-2" {
			t.Errorf("turns after the deletion: %v", keys(turns, turnID))
		}
		if _, err := get(b, func(tx store.Tx) (experience.Turn, error) { return tx.GetTurn(b.ctx, "q", "turn-1") }); err != nil {
			t.Errorf("the other project's turn: %v", err)
		}
		signals := read(b, func(tx store.Tx) ([]experience.FeedbackSignal, error) {
			return tx.ListSignals(b.ctx, "p", store.SignalFilter{})
		})
		if len(signals) != 1 || signals[0].ID != "sig-2" {
			t.Errorf("signals after the deletion: %v", keys(signals, signalID))
		}
		b.expectNotFound("turn twice", func(tx store.Tx) error { return tx.DeleteTurn(b.ctx, "p", "turn-1") })
		b.expectNotFound("signal twice", func(tx store.Tx) error { return tx.DeleteSignal(b.ctx, "p", "sig-1") })
	})

	t.Run("Heuristic", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, fullHeuristic("p", "heur-1"), fullHeuristic("p", "heur-2"), fullHeuristic("q", "heur-1"),
			fullEvidence("p", "ev-1", "heur-1"), fullEvidence("p", "ev-2", "heur-2"),
			fullHeuristicFeedback("p", "hfb-1", "heur-1"), fullHeuristicFeedback("p", "hfb-2", "heur-2"),
			fullEvidence("q", "ev-1", "heur-1"))
		b.update(func(tx store.Tx) error {
			for _, h := range []string{"heur-1", "heur-2"} {
				if _, err := tx.AddSupport(b.ctx, "p", h, "task-9", at(1)); err != nil {
					return err
				}
			}
			return tx.DeleteHeuristic(b.ctx, "p", "heur-1")
		})
		if _, err := get(b, func(tx store.Tx) (experience.Heuristic, error) { return tx.GetHeuristic(b.ctx, "p", "heur-1") }); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted heuristic: %v", err)
		}
		b.view(func(tx store.Tx) error {
			for _, c := range []struct {
				h    string
				want int
			}{{"heur-1", 0}, {"heur-2", 1}} {
				ev, err := tx.ListEvidence(b.ctx, "p", c.h)
				if err != nil {
					return err
				}
				sp, err := tx.ListSupport(b.ctx, "p", c.h)
				if err != nil {
					return err
				}
				fb, err := tx.ListHeuristicFeedback(b.ctx, "p", c.h)
				if err != nil {
					return err
				}
				if len(ev) != c.want || len(sp) != c.want || len(fb) != c.want {
					t.Errorf("%s: %d evidence, %d support, %d verdicts, want %d each", c.h, len(ev), len(sp), len(fb), c.want)
				}
			}
			other, err := tx.ListEvidence(b.ctx, "q", "heur-1")
			if err == nil && len(other) != 1 {
				t.Errorf("the other project's evidence: %d", len(other))
			}
			return err
		})
		b.expectNotFound("heuristic twice", func(tx store.Tx) error { return tx.DeleteHeuristic(b.ctx, "p", "heur-1") })
	})

	t.Run("ExperienceLessons", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, fullExperience("p", "task-1"), fullExperience("q", "task-1"))
		b.update(func(tx store.Tx) error {
			return tx.SetExperienceLessons(b.ctx, "p", "task-1", []experience.TransferableHeuristic{})
		})
		got := read(b, func(tx store.Tx) (experience.TaskExperience, error) { return tx.GetExperience(b.ctx, "p", "task-1") })
		want := fullExperience("p", "task-1")
		if len(got.Heuristics) != 0 || got.Goal != want.Goal || got.WorkingApproach != want.WorkingApproach || len(got.FailedAttempts) != 1 {
			t.Errorf("after clearing the lessons: %+v", got)
		}
		other := read(b, func(tx store.Tx) (experience.TaskExperience, error) { return tx.GetExperience(b.ctx, "q", "task-1") })
		if len(other.Heuristics) != 1 {
			t.Errorf("the other project's lessons: %+v", other.Heuristics)
		}
		b.expectNotFound("lessons of an unknown task", func(tx store.Tx) error {
			return tx.SetExperienceLessons(b.ctx, "p", "task-2", nil)
		})
	})

	t.Run("Skill", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, fullSkill("p", "skill-1", "deploy"), fullSkill("p", "skill-2", "review"),
			fullSkillVersion("p", "skill-1", 1), fullSkillVersion("p", "skill-1", 2), fullSkillVersion("p", "skill-2", 1))
		b.update(func(tx store.Tx) error { return tx.DeleteSkill(b.ctx, "p", "skill-1") })
		if _, err := get(b, func(tx store.Tx) (experience.Skill, error) { return tx.GetSkillByName(b.ctx, "p", "deploy") }); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted skill: %v", err)
		}
		for _, c := range []struct {
			id   string
			want int
		}{{"skill-1", 0}, {"skill-2", 1}} {
			vs := read(b, func(tx store.Tx) ([]experience.SkillVersion, error) { return tx.ListSkillVersions(b.ctx, "p", c.id) })
			if len(vs) != c.want {
				t.Errorf("%s: %d versions, want %d", c.id, len(vs), c.want)
			}
		}
		// The name is free again.
		insertAll(b, fullSkill("p", "skill-3", "deploy"))
		b.expectNotFound("skill twice", func(tx store.Tx) error { return tx.DeleteSkill(b.ctx, "p", "skill-1") })
	})

	t.Run("RecallItem", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		insertAll(b, fullRecall("p", "recall-1", "heur-1", "heur-2"), fullRecall("p", "recall-2", "heur-2"),
			fullRecall("q", "recall-1", "heur-1"))
		n := write(b, func(tx store.Tx) (int64, error) { return tx.ForgetRecallItem(b.ctx, "p", "heur-1") })
		if n != 1 {
			t.Errorf("ForgetRecallItem changed %d recalls, want 1", n)
		}
		r := read(b, func(tx store.Tx) (experience.RecallEvent, error) { return tx.GetRecall(b.ctx, "p", "recall-1") })
		if len(r.Items) != 1 || r.Items[0].RefID != "heur-2" {
			t.Errorf("recall-1 items after forgetting heur-1: %+v", r.Items)
		}
		for _, c := range []struct {
			project, ref string
			want         int64
		}{{"p", "heur-1", 0}, {"p", "heur-2", 2}, {"q", "heur-1", 1}} {
			got := read(b, func(tx store.Tx) (int64, error) {
				return tx.CountRecalls(b.ctx, c.project, store.RecallFilter{RefID: c.ref})
			})
			if got != c.want {
				t.Errorf("%s: recalls considering %s: %d, want %d", c.project, c.ref, got, c.want)
			}
		}
		if n := write(b, func(tx store.Tx) (int64, error) { return tx.ForgetRecallItem(b.ctx, "p", "heur-1") }); n != 0 {
			t.Errorf("forgetting again changed %d recalls", n)
		}
	})
}

// expectNotFound runs fn in an Update that is rolled back and requires
// ErrNotFound from it.
func (b *bundle) expectNotFound(what string, fn func(tx store.Tx) error) {
	b.t.Helper()
	var inner error
	sentinel := errors.New("roll back")
	err := b.s.Update(b.ctx, func(tx store.Tx) error {
		inner = fn(tx)
		return sentinel
	})
	if !errors.Is(err, sentinel) {
		b.t.Fatalf("%s: Update: %v", what, err)
	}
	if !errors.Is(inner, store.ErrNotFound) {
		b.t.Errorf("%s: %v, want ErrNotFound", what, inner)
	}
}
