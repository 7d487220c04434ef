package kaizen_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// learnedState is what a project learned from its outcomes: every
// pattern's counts, maturity and inversion, every criterion's weight.
type learnedState struct {
	Patterns map[string]patternState
	Criteria map[string]learning.CriterionWeight
}

type patternState struct {
	Success, Failure int64
	State            learning.MaturityState
	Helpful, Harmful float64
	Anti             string // the anti-pattern's content, "" when not inverted
}

func learned(t *testing.T, b *bundle, project string) learnedState {
	t.Helper()
	s := learnedState{Patterns: map[string]patternState{}, Criteria: map[string]learning.CriterionWeight{}}
	list, err := b.e.ListPatterns(ctx, kaizen.PatternQuery{Project: project, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	antis := map[string]string{}
	for _, p := range list.Items {
		if p.Kind == learning.KindAntiPattern {
			antis[p.SourceID] = p.Content
		}
	}
	for _, p := range list.Items {
		if p.Kind != learning.KindPattern {
			continue
		}
		s.Patterns[p.Content] = patternState{Success: p.SuccessCount, Failure: p.FailureCount, State: p.Maturity.State,
			Helpful: p.Maturity.DecayedHelpful, Harmful: p.Maturity.DecayedHarmful, Anti: antis[p.ID]}
	}
	cs, err := b.e.ListCriteria(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		if c.HelpfulCount+c.HarmfulCount+c.NeutralCount > 0 { // a criterion left without events is kept empty
			s.Criteria[c.Criterion] = c
		}
	}
	return s
}

// TestDeleteOutcomeRecomputes: deleting an outcome leaves the project
// exactly as if the outcome had never been recorded — pattern counts,
// maturity, inversion, criterion weights — on every backend.
func TestDeleteOutcomeRecomputes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		day := func(d int) string { return start.Add(time.Duration(d) * 24 * time.Hour).Format(time.RFC3339) }
		type rec struct {
			task    string
			success bool
			pats    []string
			crit    []string
		}
		recs := []rec{
			{"t1", false, []string{"Split by file type"}, []string{"tests_pass"}},
			{"t2", false, []string{"Split by file type"}, []string{"tests_pass", "type_safe"}},
			{"t3", false, []string{"Split by file type", "Only in the deleted one"}, []string{"tests_pass", "rare"}},
			{"t4", true, []string{"Split by feature"}, []string{"tests_pass"}},
			{"t5", true, []string{"Split by feature"}, nil},
		}
		b.clock.Set(start.Add(10 * 24 * time.Hour))
		ids := map[string]string{}
		for i, r := range recs {
			for _, project := range []string{"with", "without"} {
				if project == "without" && r.task == "t3" {
					continue
				}
				in := outcome(r.task, r.success, r.pats...)
				in.Project, in.Timestamp, in.Criteria = project, day(i), r.crit
				res, err := b.e.RecordOutcome(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				if project == "with" {
					ids[r.task] = res.Outcome.ID
				}
			}
		}
		before := learned(t, b, "with")
		if before.Patterns["Split by file type"].Anti == "" {
			t.Fatalf("three failures of three did not invert: %+v", before.Patterns)
		}
		res, err := b.e.DeleteOutcome(ctx, kaizen.ForgetInput{Project: "with", ID: ids["t3"]})
		if err != nil {
			t.Fatal(err)
		}
		if res.Observations != 2 || len(res.AntiPatternsRemoved) != 1 || len(res.PatternsRemoved) != 1 {
			t.Errorf("delete result: %d observations, anti-patterns removed %v, patterns removed %v; want 2, one, one",
				res.Observations, res.AntiPatternsRemoved, res.PatternsRemoved)
		}
		opts := cmp.Options{cmpopts.EquateApprox(0, 1e-9)}
		got, want := learned(t, b, "with"), learned(t, b, "without")
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Errorf("after deleting t3, the project differs from one that never had it (-never +deleted):\n%s", diff)
		}
		if got.Patterns["Split by file type"].Failure != 2 || got.Patterns["Split by file type"].Anti != "" {
			t.Errorf("Split by file type after the deletion: %+v", got.Patterns["Split by file type"])
		}
		// The weight of a criterion only the deleted outcome judged is
		// empty again; the others equal the never-recorded project's.
		if w := got.Criteria["tests_pass"]; w.HelpfulCount+w.HarmfulCount+w.NeutralCount != 3 {
			t.Errorf("tests_pass after the deletion: %+v", w)
		}
		if _, err := b.e.GetOutcome(ctx, "with", ids["t3"]); kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("the deleted outcome is still there: %v", err)
		}
		_, err = b.e.DeleteOutcome(ctx, kaizen.ForgetInput{Project: "with", ID: ids["t3"]})
		var ke *kaizen.Error
		if !errors.As(err, &ke) || ke.Kind != kaizen.KindNotFound {
			t.Errorf("deleting twice: %v, want not found", err)
		}

		// A sticky inversion stays while the remaining evidence met the
		// rule at some point: four failures, one deleted, three remain.
		for i, task := range []string{"u1", "u2", "u3", "u4"} {
			in := outcome(task, false, "Parallel everything")
			in.Project, in.Timestamp = "sticky", day(i)
			if _, err := b.e.RecordOutcome(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		list, err := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: "sticky", TaskID: "u4"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list: %v %v", list, err)
		}
		res, err = b.e.DeleteOutcome(ctx, kaizen.ForgetInput{Project: "sticky", ID: list.Items[0].ID})
		if err != nil {
			t.Fatal(err)
		}
		s := learned(t, b, "sticky").Patterns["Parallel everything"]
		if len(res.AntiPatternsRemoved) != 0 || s.Anti == "" || s.Failure != 3 || !strings.Contains(s.Anti, "3/3") {
			t.Errorf("sticky inversion after deleting one of four failures: removed %v, state %+v", res.AntiPatternsRemoved, s)
		}
	})
}

// TestDeleteOutcomeReopensTask: an outcome that ended a tracked task
// leaves it open again when it is deleted.
func TestDeleteOutcomeReopensTask(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		if _, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "claude-s1", Kind: "prompt", Text: "fix the bug"}); err != nil {
			t.Fatal(err)
		}
		res, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "claude-s1", Success: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		if task, _ := b.e.GetTask(ctx, "", "claude-s1"); task == nil || task.EndedAt == nil {
			t.Fatalf("task not ended by its outcome: %+v", task)
		}
		del, err := b.e.DeleteOutcome(ctx, kaizen.ForgetInput{ID: res.Outcome.ID})
		if err != nil || !del.TaskReopened {
			t.Fatalf("delete: %+v %v", del, err)
		}
		if task, _ := b.e.GetTask(ctx, "", "claude-s1"); task == nil || task.EndedAt != nil {
			t.Errorf("task still ended: %+v", task)
		}
	})
}

// TestForgetTurnAndMemory: a deleted turn's text leaves recall (full text
// and vectors), the signals quoting it, and the next export; a forgotten
// memory leaves recall but the turn stays.
func TestForgetTurnAndMemory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		secret := "the staging database password rotates every Tuesday at noon"
		other := "always run the linter with the repository configuration file"
		capture, err := b.e.Capture(ctx, kaizen.CaptureInput{TaskID: "task-a", Turns: []kaizen.TurnInput{
			{Role: "assistant", Content: "I set the staging password to rotate monthly.", TurnID: "x0"},
			{Role: "user", Content: "That's wrong, it should be: " + secret, TurnID: "x1"},
			{Role: "user", Content: other, TurnID: "x2"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		turn, keep := capture.Turns[1].ID, capture.Turns[2].ID
		sig, err := b.e.ExtractSignals(ctx, kaizen.SignalsInput{TaskID: "task-a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(sig.Signals) == 0 {
			t.Fatalf("no signal in the correction: %+v", sig)
		}
		recalled := func(query, id string) bool {
			t.Helper()
			rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: query, Kinds: []string{"memory"}, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range rec.Items {
				if it.RefID == id {
					return true
				}
			}
			return false
		}
		if !recalled("staging database password rotation", turn) || !recalled("linter repository configuration", keep) {
			t.Fatal("the memories are not recalled before forgetting")
		}
		if _, err := b.e.Recall(ctx, kaizen.RecallInput{Query: "staging database password", TaskID: "task-b"}); err != nil {
			t.Fatal(err)
		}
		res, err := b.e.DeleteTurn(ctx, kaizen.ForgetInput{ID: turn})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Unindexed || res.Signals == 0 || res.Recalls != 1 {
			t.Errorf("delete turn: %+v; want unindexed, signals and one recall changed", res)
		}
		if recalled("staging database password rotation", turn) {
			t.Error("the deleted turn is still recalled")
		}
		if !recalled("linter repository configuration", keep) {
			t.Error("the other memory is no longer recalled")
		}
		var out bytes.Buffer
		if _, err := b.e.Export(ctx, &out, kaizen.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "password rotates") || strings.Contains(out.String(), turn) {
			t.Error("the deleted turn's text or id is in the next export")
		}
		if !strings.Contains(out.String(), "linter with the repository") {
			t.Error("the export lost the other turn")
		}
		// Forget a memory: out of recall, the turn stays.
		mem, err := b.e.ForgetMemory(ctx, kaizen.ForgetInput{ID: keep})
		if err != nil || !mem.Unindexed {
			t.Fatalf("forget memory: %+v %v", mem, err)
		}
		if recalled("linter repository configuration", keep) {
			t.Error("the forgotten memory is still recalled")
		}
		turns, err := b.e.ListTurns(ctx, kaizen.TurnQuery{TaskID: "task-a"})
		if err != nil || turns.Total != 2 || turns.Items[1].ID != keep {
			t.Errorf("turns after forgetting: %+v %v", turns, err)
		}
		if _, err := b.e.DeleteTurn(ctx, kaizen.ForgetInput{ID: turn}); kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("deleting twice: %v", err)
		}
	})
}

// TestForgetHeuristicAndSkill: a deleted heuristic leaves recall, the
// skills that adopted it, stored recalls and the next export; an edited
// heuristic is recalled by its new text; a deleted skill leaves recall,
// its file and the export.
func TestForgetHeuristicAndSkill(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		first := submit(t, b, "task-1", lessonJSON(t, generatedLesson,
			[3]string{"verify", "before a release", "Run the migration against a copy of production first."}))
		gen, mig := first.Heuristics[0].HeuristicID, first.Heuristics[1].HeuristicID
		recall := func(query string) map[string]bool {
			t.Helper()
			rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: query, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, it := range rec.Items {
				got[it.RefID] = true
			}
			return got
		}
		if !recall("editing a generated file")[gen] {
			t.Fatal("the heuristic is not recalled before deletion")
		}
		stored, err := b.e.Recall(ctx, kaizen.RecallInput{Query: "editing a generated file"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.e.DeleteHeuristic(ctx, kaizen.ForgetInput{ID: gen})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Unindexed || res.Recalls != 1 {
			t.Errorf("delete heuristic: %+v", res)
		}
		if recall("editing a generated file")[gen] {
			t.Error("the deleted heuristic is still recalled")
		}
		r, err := b.e.GetRecall(ctx, "", stored.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Items {
			if it.RefID == gen {
				t.Error("the stored recall still lists the deleted heuristic")
			}
		}
		var out bytes.Buffer
		if _, err := b.e.Export(ctx, &out, kaizen.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), gen) || strings.Contains(out.String(), "Do not edit generated files") {
			t.Error("the deleted heuristic (its id, or its text in the task's experience) is in the next export")
		}
		if res.Lessons != 1 {
			t.Errorf("lessons removed with the heuristic: %d, want 1", res.Lessons)
		}
		if !strings.Contains(out.String(), mig) {
			t.Error("the other heuristic left the export")
		}

		// Edit: recalled by its new words, the old text kept as evidence.
		ed, err := b.e.EditHeuristic(ctx, kaizen.HeuristicEditInput{HeuristicID: mig,
			Rule: "Rehearse schema changes on a restored snapshot of the warehouse before shipping."})
		if err != nil || !strings.Contains(ed.Heuristic.Rule, "warehouse") {
			t.Fatalf("edit: %+v %v", ed, err)
		}
		if !recall("restored snapshot of the warehouse")[mig] {
			t.Error("the edited heuristic is not recalled by its new text")
		}
		d, err := b.e.GetHeuristic(ctx, "", mig)
		if err != nil || d.Heuristic.Trigger != "before a release" || d.Evidence[len(d.Evidence)-1].Action != "manual" ||
			!strings.Contains(d.Evidence[len(d.Evidence)-1].Text, "copy of production") {
			t.Errorf("after the edit: %+v %v", d, err)
		}
		if _, err := b.e.EditHeuristic(ctx, kaizen.HeuristicEditInput{HeuristicID: mig}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("an empty edit: %v", err)
		}
		if _, err := b.e.DeleteHeuristic(ctx, kaizen.ForgetInput{ID: gen}); kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("deleting twice: %v", err)
		}
	})
}
