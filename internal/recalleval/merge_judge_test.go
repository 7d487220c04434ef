package recalleval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/model"
)

// openJudged opens an engine whose chat model is judge, with the merge
// judge set to mode.
func openJudged(t *testing.T, judge model.Chat, mode string) *testkit.Bundle {
	t.Helper()
	b := testkit.Open(t, "sqlite", func(c *kaizen.Config) {
		c.Chat = judge
		c.Experience.Merge.Judge = mode
	})
	if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
		t.Skipf("embedder %s", b.E.EmbedderID())
	}
	return b
}

// fixed answers every candidate with class.
func fixed(class string) *recalleval.ScriptedJudge {
	return &recalleval.ScriptedJudge{Answer: func(_ experience.MergeJudgeItem, cands []experience.MergeJudgeItem) []string {
		out := make([]string, len(cands))
		for i := range out {
			out[i] = class
		}
		return out
	}}
}

// TestWriterMergeJudgeFollowsModel: with a chat model configured (judge
// "auto", the default) the writer's decision is the model's: a related
// lesson the classifier keeps apart is appended when the model says
// related, updated when it says duplicate, created when it says
// unrelated; the model sees both lessons, as JSON data, in one call.
func TestWriterMergeJudgeFollowsModel(t *testing.T) {
	for _, c := range []struct {
		class string
		want  experience.EvidenceAction
		heurs int
	}{
		{"related", experience.EvidenceAppend, 1},
		{"duplicate", experience.EvidenceUpdated, 1},
		{"unrelated", experience.EvidenceCreated, 2},
	} {
		t.Run(c.class, func(t *testing.T) {
			judge := fixed(c.class)
			b := openJudged(t, judge, experience.MergeJudgeAuto)
			got, hs := writePair(t, b.E, "j-"+c.class, lessonClockEN, lessonFakeTimer)
			if got != c.want || len(hs) != c.heurs {
				t.Fatalf("model says %s: decision %s with %d heuristics, want %s with %d", c.class, got, len(hs), c.want, c.heurs)
			}
			reqs := judge.Requests()
			if len(reqs) != 1 { // the first lesson has nothing near it: no call
				t.Fatalf("%d model calls, want 1", len(reqs))
			}
			if st := b.E.MergeJudgeStats(); st.Calls != 1 || st.Fallbacks != 0 {
				t.Errorf("stats %+v, want 1 call and no fallback", st)
			}
			var in experience.MergeJudgeInput
			if err := json.Unmarshal([]byte(reqs[0].Messages[1].Content), &in); err != nil {
				t.Fatalf("the user message is not JSON: %v", err)
			}
			if in.NewLesson.Rule != lessonFakeTimer.Rule || len(in.Candidates) != 1 || in.Candidates[0].Rule != lessonClockEN.Rule {
				t.Errorf("prompt data %+v", in)
			}
			if strings.Contains(reqs[0].Messages[0].Content, lessonClockEN.Rule) {
				t.Error("a lesson's text is in the system prompt")
			}
		})
	}
}

// The same situation with another action (experience.OtherRule), not a
// contradiction.
var (
	lessonWrapErr = recalleval.Lesson{Lang: "en", Kind: "prefer", Trigger: "when returning an error from a lower layer in Go",
		Rule: "wrap it with %w and add what the caller was doing"}
	lessonLogErr = recalleval.Lesson{Lang: "en", Kind: "avoid", Trigger: "when returning an error from a lower layer in Go",
		Rule: "don't log the error and also return it"}
)

// TestWriterMergeJudgeVetoes: a model that calls everything a duplicate
// does not fold a contradiction (the veto) nor the same situation with
// another action (the other-rule guard); the overruled verdicts are
// counted.
func TestWriterMergeJudgeVetoes(t *testing.T) {
	if !experience.OtherRule(lessonWrapErr.MergeLesson(), lessonLogErr.MergeLesson()) ||
		experience.Contradicts(lessonWrapErr.MergeLesson(), lessonLogErr.MergeLesson()) {
		t.Fatal("the other-action pair is not kept apart by the other-rule guard alone")
	}
	judge := recalleval.AlwaysDuplicate()
	b := openJudged(t, judge, experience.MergeJudgeModel)
	for _, c := range []struct {
		name string
		a, b recalleval.Lesson
	}{
		{"opposite polarity", lessonNoForcePush, lessonForcePush},
		{"zh-en contradiction", lessonCtxFieldZH, lessonCtxFieldEN},
		{"en-zh contradiction", lessonTzEN, lessonNaiveZH},
		{"same situation, other action", lessonWrapErr, lessonLogErr},
	} {
		got, hs := writePair(t, b.E, "jv-"+c.name, c.a, c.b)
		if got != experience.EvidenceCreated || len(hs) != 2 {
			t.Errorf("%s: decision %s with %d heuristics, want created with 2", c.name, got, len(hs))
		}
	}
	if st := b.E.MergeJudgeStats(); st.Calls != 4 || st.Vetoed != 4 {
		t.Errorf("stats %+v, want 4 calls and 4 vetoed verdicts", st)
	}
}

// TestWriterMergeJudgeFallback: an invalid reply (not JSON, an unknown
// id, an unknown class, a missing verdict) or a failing model leaves the
// decision to the classifier (the related pair is created, as the
// classifier decides; the duplicate across languages is updated), and
// each failure is counted.
func TestWriterMergeJudgeFallback(t *testing.T) {
	for name, raw := range map[string]string{
		"not json":      "I think they are duplicates.",
		"unknown id":    `{"verdicts":[{"id":"c9","class":"related"}]}`,
		"unknown class": `{"verdicts":[{"id":"c1","class":"same"}]}`,
		"missing":       `{"verdicts":[]}`,
		"truncated":     `{"verdicts":[{"id":"c1","class":"related"}`,
	} {
		t.Run(name, func(t *testing.T) {
			judge := &recalleval.ScriptedJudge{Raw: func(experience.MergeJudgeItem, []experience.MergeJudgeItem) string { return raw }}
			b := openJudged(t, judge, experience.MergeJudgeAuto)
			if got, hs := writePair(t, b.E, "jf-rel", lessonClockEN, lessonFakeTimer); got != experience.EvidenceCreated || len(hs) != 2 {
				t.Errorf("related pair: %s with %d heuristics, want the classifier's created with 2", got, len(hs))
			}
			if got, hs := writePair(t, b.E, "jf-dup", lessonClockEN, lessonClockZH); got != experience.EvidenceUpdated || len(hs) != 1 {
				t.Errorf("duplicate pair: %s with %d heuristics, want the classifier's updated with 1", got, len(hs))
			}
			if st := b.E.MergeJudgeStats(); st.Calls != 2 || st.Fallbacks != 2 {
				t.Errorf("stats %+v, want 2 calls and 2 fallbacks", st)
			}
		})
	}
	t.Run("model error", func(t *testing.T) {
		b := openJudged(t, failingChat{}, experience.MergeJudgeAuto)
		if got, _ := writePair(t, b.E, "jf-err", lessonClockEN, lessonClockZH); got != experience.EvidenceUpdated {
			t.Errorf("duplicate pair: %s, want the classifier's updated", got)
		}
		if st := b.E.MergeJudgeStats(); st.Fallbacks != 1 {
			t.Errorf("stats %+v, want 1 fallback", st)
		}
	})
}

// failingChat is a chat model whose every call fails.
type failingChat struct{}

func (failingChat) Complete(context.Context, model.ChatRequest) (model.ChatResponse, error) {
	return model.ChatResponse{}, fmt.Errorf("scripted transport failure")
}

// TestWriterMergeJudgeSwitch: judge "classifier" never calls the model;
// without a chat model "auto" decides by the classifier; within one
// experience, a second lesson is judged against the first.
func TestWriterMergeJudgeSwitch(t *testing.T) {
	judge := fixed("related")
	b := openJudged(t, judge, experience.MergeJudgeClassifier)
	if got, _ := writePair(t, b.E, "js-off", lessonClockEN, lessonFakeTimer); got != experience.EvidenceCreated || len(judge.Requests()) != 0 {
		t.Errorf("judge classifier: %s after %d calls, want created after none", got, len(judge.Requests()))
	}
	if kaizen.DefaultConfig().Experience.Merge.Judge != experience.MergeJudgeClassifier {
		t.Error("the default judge is not the classifier (the judge is opt-in)")
	}
	// The default, and an empty value, never call the model either.
	for _, mode := range []string{"", kaizen.DefaultConfig().Experience.Merge.Judge} {
		j := fixed("related")
		d := openJudged(t, j, mode)
		if got, _ := writePair(t, d.E, "js-default", lessonClockEN, lessonFakeTimer); got != experience.EvidenceCreated || len(j.Requests()) != 0 {
			t.Errorf("judge %q: %s after %d calls, want created after none", mode, got, len(j.Requests()))
		}
	}
	nb := testkit.Open(t, "sqlite")
	if got, _ := writePair(t, nb.E, "js-none", lessonClockEN, lessonFakeTimer); got != experience.EvidenceCreated {
		t.Errorf("no chat model: %s, want the classifier's created", got)
	}

	// Two lessons in one experience: the second is judged against the
	// first, created just before in the same transaction.
	judge = fixed("duplicate")
	b = openJudged(t, judge, experience.MergeJudgeAuto)
	doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
		{"kind": "avoid", "trigger": lessonClockEN.Trigger, "rule": lessonClockEN.Rule, "why": "flaky"},
		{"kind": "avoid", "trigger": lessonClockZH.Trigger, "rule": lessonClockZH.Rule, "why": "flaky"}}})
	res, err := b.E.SubmitExtraction(context.Background(), kaizen.ExtractionSubmitInput{Project: "js-batch", TaskID: "t", Kind: "experience", Result: doc})
	if err != nil {
		t.Fatal(err)
	}
	if hs := res.Experience.Heuristics; len(hs) != 2 || hs[1].Action != experience.EvidenceUpdated || hs[1].HeuristicID != hs[0].HeuristicID {
		t.Errorf("second lesson of one experience: %+v, want it to update the first", hs)
	}
}

// mergeJudgeDevPairs is every labelled dev pair of the writer's
// measurements (TestWriterMergeClassifier's and the adversarial ones).
func mergeJudgeDevPairs(t *testing.T) []recalleval.Pair {
	var pairs []recalleval.Pair
	for _, s := range sets {
		pairs = append(pairs, devPairsOf(t, s.pairs["dev"])...)
		for _, f := range s.extraPairs {
			pairs = append(pairs, devPairsOf(t, f)...)
		}
	}
	return append(pairs, append(devPairsOf(t, extraDedupDev), devPairsOf(t, xlangDedupDev)...)...)
}

// mergeJudgeHoldoutPairs is the holdout pairs of the independent set and
// of fresh2.
func mergeJudgeHoldoutPairs(t *testing.T) map[string][]recalleval.Pair {
	out := map[string][]recalleval.Pair{}
	for _, s := range []evalSet{sets[1], fresh2} {
		ps, err := recalleval.ReadJSONL[recalleval.Pair](s.pairs["holdout"])
		if err != nil {
			t.Fatal(err)
		}
		out[s.name] = slices.DeleteFunc(ps, func(p recalleval.Pair) bool { return p.Split != "holdout" })
	}
	return out
}

// TestMeasureMergeJudge measures the writer with scripted judges on the
// dev pairs (docs/BENCHMARKS.md, "Merge judge"): the classifier alone,
// an oracle judge answering with the labels (the ceiling the candidate
// retrieval allows), oracles erring on 10 % and 20 % of their verdicts,
// and a judge that calls everything a duplicate. KAIZEN_MERGE_JUDGE_EVAL=1
// runs it; =holdout runs the oracle once on the holdout pairs instead.
func TestMeasureMergeJudge(t *testing.T) {
	mode := os.Getenv("KAIZEN_MERGE_JUDGE_EVAL")
	if mode == "" {
		t.Skip("measurement: KAIZEN_MERGE_JUDGE_EVAL=1 (dev) or =holdout")
	}
	ctx := context.Background()
	run := func(name string, pairs []recalleval.Pair, judge model.Chat, seen func(recalleval.Pair) bool) {
		b := testkit.Open(t, "sqlite", func(c *kaizen.Config) {
			c.Chat = judge
			if judge != nil {
				c.Experience.Merge.Judge = experience.MergeJudgeAuto
			}
		})
		r, err := recalleval.EvalDedup(ctx, b.E, "m-", pairs)
		if err != nil {
			t.Fatal(err)
		}
		st := b.E.MergeJudgeStats()
		line := fmt.Sprintf("%-22s %3d/%3d = %.3f  unrelated folded %d  calls %d fallbacks %d vetoed %d  confusion %v",
			name, r.Correct, r.Pairs, r.Accuracy, r.UnrelatedFolded, st.Calls, st.Fallbacks, st.Vetoed, r.Confusion)
		if seen != nil {
			n, byLabel := 0, map[string]int{}
			for _, p := range pairs {
				if seen(p) {
					n++
				} else {
					byLabel[p.Label]++
				}
			}
			line += fmt.Sprintf("  counterpart shown %d/%d (not shown by label %v)", n, len(pairs), byLabel)
		}
		t.Log(line)
		var folded []string
		for _, w := range r.Wrong {
			if strings.Contains(w, ":unrelated→") {
				folded = append(folded, w)
			}
		}
		if len(folded) > 0 {
			t.Logf("  unrelated folded: %v", folded)
		}
		if os.Getenv("KAIZEN_MERGE_JUDGE_WRONG") != "" {
			t.Logf("  wrong: %v", r.Wrong)
		}
	}
	if mode == "holdout" {
		for name, pairs := range mergeJudgeHoldoutPairs(t) {
			run("classifier "+name, pairs, nil, nil)
			o := recalleval.NewOracleJudge(pairs, 0)
			run("oracle "+name, pairs, o, o.Seen)
		}
		return
	}
	pairs := mergeJudgeDevPairs(t)
	run("classifier", pairs, nil, nil)
	for _, pct := range []uint32{0, 10, 20} {
		o := recalleval.NewOracleJudge(pairs, pct)
		run(fmt.Sprintf("oracle err %d%%", pct), pairs, o, o.Seen)
	}
	run("always duplicate", pairs, recalleval.AlwaysDuplicate(), nil)
}
