package recalleval_test

import (
	"context"
	"slices"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// devPairsOf reads the dev pairs of a file.
func devPairsOf(t *testing.T, path string) []recalleval.Pair {
	t.Helper()
	ps, err := recalleval.ReadJSONL[recalleval.Pair](path)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ps, func(p recalleval.Pair) bool { return p.Split != "dev" })
}

// extraDedupDev holds the adversarial dev pairs written for the second
// pass of the merge classifier (docs/experience.md).
const extraDedupDev = "../../testdata/recall-eval/dedup-extra-dev.jsonl"

// xlangDedupDev holds the cross-language contradictions and duplicates of
// opposite phrasing written for the contradiction veto (q18).
const xlangDedupDev = "../../testdata/recall-eval/dedup-xlang-dev.jsonl"

// knownFolded are the dev pairs labelled unrelated that the writer still
// folds with the shipped classifier (docs/experience.md, "The merge
// classifier"). There were two, P209, a contradiction ("npm ci rather than
// npm install" vs "npm install"), and P215, twins whose rules are opposite
// ("conclude with git commit" vs "do not create a commit yourself"); the
// contradiction veto (experience.Contradicts) keeps both apart. Any
// unrelated pair folded fails.
var knownFolded []string

// TestWriterMergeClassifier writes the dev pairs of both labelled sets
// through the real writer (the default configuration: the merge
// classifier for the offline embedder): no unrelated pair is folded
// beyond knownFolded, every contradiction is kept apart, and
// cross-language duplicates are merged.
func TestWriterMergeClassifier(t *testing.T) {
	ctx := context.Background()
	b := testkit.Open(t, "sqlite")
	if b.E.EmbedderID() != experience.OfflineMergeEmbedderID() {
		t.Skipf("embedder %s", b.E.EmbedderID())
	}
	var pairs []recalleval.Pair
	for _, s := range sets {
		pairs = append(pairs, devPairsOf(t, s.pairs["dev"])...)
	}
	extra := append(devPairsOf(t, extraDedupDev), devPairsOf(t, xlangDedupDev)...)
	r, err := recalleval.EvalDedup(ctx, b.E, "w-", append(slices.Clone(pairs), extra...))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dev pairs through the writer: %d/%d right, %d unrelated folded; %v", r.Correct, r.Pairs, r.UnrelatedFolded, r.Confusion)
	for _, p := range extra {
		if act := r.Decisions[p.ID]; p.Label == "unrelated" && act != experience.EvidenceCreated {
			t.Errorf("unrelated pair %s (hard negative %v) was %s", p.ID, p.HardNegative, act)
		}
	}
	crossDup, crossMerged := 0, 0
	for _, p := range pairs {
		act := r.Decisions[p.ID]
		switch {
		case p.Label == "unrelated" && act != experience.EvidenceCreated && !slices.Contains(knownFolded, p.ID):
			t.Errorf("unrelated pair %s (hard negative %v) was %s", p.ID, p.HardNegative, act)
		case p.Label == "duplicate" && p.CrossLanguage:
			crossDup++
			if act == experience.EvidenceUpdated {
				crossMerged++
			}
		}
	}
	// The cross-language duplicates of the sets (English lesson, Chinese
	// restatement or the reverse): all are merged with the shipped fit.
	t.Logf("cross-language duplicates merged: %d of %d", crossMerged, crossDup)
	if crossDup == 0 || crossMerged < crossDup {
		t.Errorf("cross-language duplicates merged: %d of %d", crossMerged, crossDup)
	}
	for _, id := range []string{"D001", "D005", "P004", "P148"} {
		if act := r.Decisions[id]; act != experience.EvidenceUpdated {
			t.Errorf("cross-language duplicate %s was %s, want updated", id, act)
		}
	}
}

// TestWriterMergeThresholdMethod checks that merge.method = "threshold"
// keeps the cosine thresholds: every dev pair's decision is DecideMerge of
// the cosine of the two heuristic texts (appending only within a kind).
func TestWriterMergeThresholdMethod(t *testing.T) {
	ctx := context.Background()
	b := testkit.Open(t, "sqlite", func(c *kaizen.Config) { c.Experience.Merge.Method = experience.MergeByThreshold })
	pairs := devPairsOf(t, "../../testdata/eval/dedup/pairs.jsonl")
	r, err := recalleval.EvalDedup(ctx, b.E, "t-", pairs)
	if err != nil {
		t.Fatal(err)
	}
	th := kaizen.DefaultConfig().Experience.Merge.For(b.E.EmbedderID())
	for _, p := range pairs {
		v, err := b.E.Embedder().Embed(ctx, []string{
			experience.HeuristicText(experience.HeuristicKind(p.A.Kind), p.A.Trigger, p.A.Rule),
			experience.HeuristicText(experience.HeuristicKind(p.B.Kind), p.B.Trigger, p.B.Rule)})
		if err != nil {
			t.Fatal(err)
		}
		var cos float64
		for i := range v[0] {
			cos += float64(v[0][i]) * float64(v[1][i])
		}
		want := recalleval.DecideMerge(recalleval.PairSimilarity{Label: p.Label, Cosine: cos, SameKind: p.A.Kind == p.B.Kind}, th)
		if want == experience.EvidenceUpdated && experience.Contradicts(p.A.MergeLesson(), p.B.MergeLesson()) {
			want = experience.EvidenceCreated // the veto applies to the thresholds too
		}
		if got := r.Decisions[p.ID]; got != want {
			t.Errorf("pair %s: cosine %.4f, writer %s, thresholds %s", p.ID, cos, got, want)
		}
	}
}

// TestWriterKeepsDistinctLessons loads the 86 lessons of testdata/eval
// (distinct lessons by construction, several in tight neighbourhoods:
// seven about migrations, two about deadlocks, two about lock files…)
// through the writer: none may be folded into another. With the cosine
// thresholds three were (L021, L037 and L046 into L016).
func TestWriterKeepsDistinctLessons(t *testing.T) {
	b := testkit.Open(t, "sqlite")
	lessons, err := recalleval.ReadJSONL[recalleval.Lesson]("../../testdata/eval/recall/lessons.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := recalleval.Load(context.Background(), b.E, "eval", lessons)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, l := range lessons {
		if f, ok := first[ids[l.ID]]; ok {
			t.Errorf("lesson %s was folded into %s", l.ID, f)
		} else {
			first[ids[l.ID]] = l.ID
		}
	}
}
