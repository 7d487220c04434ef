package kaizen_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// TestDemotionCountsRecallsNotVerdicts (seed 001: "连续多次召回后被判定为
// misleading"): misleading verdicts on one recall count once, verdicts on
// a lesson never recalled never demote it, and a verdict without a recall
// id is about the lesson's latest recall.
func TestDemotionCountsRecallsNotVerdicts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		write := func(task, trigger, rule string) string {
			doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
				{"kind": "avoid", "trigger": trigger, "rule": rule, "why": "it went wrong before", "evidence": "task " + task}}})
			return submit(t, b, task, doc).Heuristics[0].HeuristicID
		}
		recalled := write("t1", "when editing generated protobuf files", "change the .proto file and regenerate instead of editing pb.go")
		never := write("t2", "when a cron job runs twice", "make the job idempotent with a lock row")
		misleading := func(id, recall string) *kaizen.HeuristicActionResult {
			t.Helper()
			r, err := b.e.HeuristicFeedback(ctx, kaizen.HeuristicFeedbackInput{HeuristicID: id, RecallID: recall, Verdict: "misleading"})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		// Never recalled: five misleading verdicts, still a candidate.
		var r *kaizen.HeuristicActionResult
		for range 5 {
			r = misleading(never, "")
		}
		if r.Transition != nil || r.Heuristic.Status != experience.StatusCandidate || r.Heuristic.MisleadingStreak != 0 ||
			r.Heuristic.MisleadingCount != 5 {
			t.Fatalf("never recalled: %+v %+v", r.Heuristic, r.Transition)
		}
		recall := func() string {
			t.Helper()
			rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: "edit the generated pb.go protobuf file"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Heuristics) == 0 || rec.Heuristics[0].ID != recalled {
				t.Fatalf("recall did not inject %s: %+v", recalled, rec)
			}
			return rec.ID
		}
		// One recall, three verdicts (with and without its id): streak 1.
		first := recall()
		misleading(recalled, first)
		misleading(recalled, first)
		r = misleading(recalled, "")
		if r.Transition != nil || r.Heuristic.MisleadingStreak != 1 || r.Heuristic.MisleadingCount != 3 {
			t.Fatalf("three verdicts on one recall: %+v %+v", r.Heuristic, r.Transition)
		}
		// Two more recalls judged misleading: stale.
		misleading(recalled, recall())
		r = misleading(recalled, recall())
		if r.Transition == nil || r.Transition.To != experience.StatusStale || r.Heuristic.MisleadingStreak != 3 {
			t.Fatalf("third misleading recall: %+v %+v", r.Heuristic, r.Transition)
		}
	})
}

// TestTurnsOfOneTimestampKeepConversationOrder: a batch capture (a hook
// flushing a transcript, an import) may give many turns one timestamp;
// they must come back in conversation order, not in the order of their
// hashed ids, within one capture and across captures.
func TestTurnsOfOneTimestampKeepConversationOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		const at = "2025-03-01T08:00:00Z"
		var want []string
		capture := func(turns ...[2]string) {
			t.Helper()
			in := kaizen.CaptureInput{TaskID: "bd-batch"}
			for _, tu := range turns {
				in.Turns = append(in.Turns, kaizen.TurnInput{Role: tu[0], Content: tu[1], Time: at})
				want = append(want, tu[1])
			}
			if _, err := b.e.Capture(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		capture([2]string{"user", "Switch the installs to pnpm"}, [2]string{"assistant", "Done: npm install replaced"},
			[2]string{"user", "No, that is not what I asked. Use pnpm in CI too"}, [2]string{"assistant", "Updated the CI workflow"})
		capture([2]string{"user", "Still failing with the same error"}, [2]string{"assistant", "Pinned pnpm 9"},
			[2]string{"user", "Works now, thanks"})
		list, err := b.e.ListTurns(ctx, kaizen.TurnQuery{TaskID: "bd-batch"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tu := range list.Items {
			got = append(got, tu.Content)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("turns of one timestamp out of conversation order:\n got %q\nwant %q", got, want)
		}
		// The extraction transcript reads them in the same order.
		task, err := b.e.ExtractionRequest(ctx, kaizen.ExtractionRequestInput{TaskID: "bd-batch"})
		if err != nil {
			t.Fatal(err)
		}
		last := -1
		for _, w := range want {
			i := strings.Index(task.Transcript, w)
			if i <= last {
				t.Fatalf("transcript out of order at %q:\n%s", w, task.Transcript)
			}
			last = i
		}
	})
}

// TestTopicIsTheCosine (seed 001: "query embedding 与 heuristic embedding
// 的余弦相似度"): a recalled heuristic's topic is the cosine itself by
// default, not min(1, cos/0.35); recall.scale_topic restores that scale.
func TestTopicIsTheCosine(t *testing.T) {
	const query = "edit the generated pb.go protobuf file by hand"
	trigger, rule := "when editing generated protobuf files", "change the .proto file and regenerate instead of editing pb.go"
	topic := func(scale bool) (float64, float64) {
		b := setup(t, "sqlite", func(c *kaizen.Config) { c.Experience.Recall.ScaleTopic = scale })
		doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
			{"kind": "avoid", "trigger": trigger, "rule": rule, "why": "overwritten", "evidence": "task"}}})
		id := submit(t, b, "t1", doc).Heuristics[0].HeuristicID
		rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: query, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		vs, err := b.e.Embedder().Embed(ctx, []string{query, experience.HeuristicText(experience.KindAvoid, trigger, rule)})
		if err != nil {
			t.Fatal(err)
		}
		var dot, na, nb float64
		for i := range vs[0] {
			dot += float64(vs[0][i]) * float64(vs[1][i])
			na += float64(vs[0][i]) * float64(vs[0][i])
			nb += float64(vs[1][i]) * float64(vs[1][i])
		}
		cos := dot / math.Sqrt(na*nb)
		for _, it := range rec.Items {
			if it.RefID == id {
				return it.Topic, cos
			}
		}
		t.Fatalf("heuristic %s not considered: %+v", id, rec.Items)
		return 0, 0
	}
	got, cos := topic(false)
	if cos <= 0.35 || cos >= 0.99 {
		t.Fatalf("fixture: cosine %.3f should lie between the old saturation point 0.35 and 1", cos)
	}
	if math.Abs(got-cos) > 0.02 { // the vector index scores int8 codes
		t.Errorf("topic %.4f, want the cosine %.4f", got, cos)
	}
	if scaled, _ := topic(true); scaled != 1 {
		t.Errorf("recall.scale_topic: topic %.4f, want min(1, %.3f/update) = 1", scaled, cos)
	}
}
