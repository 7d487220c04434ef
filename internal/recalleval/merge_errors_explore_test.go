package recalleval_test

import (
	"os"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// TestExploreMergeCVErrors prints the duplicate and unrelated dev pairs
// the shipped fit options get wrong under cross-validation (each pair
// decided by the classifier fitted without its fold), with their texts,
// for the error analysis of docs/experience.md ("Heuristic writer
// decisions"). KAIZEN_EXPLORE=1 runs it.
func TestExploreMergeCVErrors(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	pairs := devMergePairs(t, "drop")
	texts := map[string]recalleval.Pair{}
	for _, f := range []string{"../../testdata/recall-eval/dedup-dev.jsonl", "../../testdata/eval/dedup/pairs.jsonl", extraDedupDev} {
		for _, p := range devPairsOf(t, f) {
			texts[p.ID] = p
		}
	}
	opt := recalleval.FitOptions{Lambda: 0.1, FoldCost: 5}
	for f := range recalleval.MergeFolds {
		var train []recalleval.PairFeatures
		for _, p := range pairs {
			if p.Fold != f {
				train = append(train, p)
			}
		}
		m, _ := recalleval.FitMergeClassifier(train, opt)
		for _, p := range pairs {
			if p.Fold != f || !p.Scored || p.Label == experience.MergeRelated {
				continue
			}
			act, pr, _ := m.Decide(p.X)
			if p.Contradiction {
				act = experience.EvidenceCreated
			}
			if recalleval.Right(p.Label.String(), act) {
				continue
			}
			q := texts[p.ID]
			t.Logf("%s %s→%s p=%.2f cos %.2f trig %.2f rule %.2f cT %.2f cR %.2f cross %v\n   A %s | %s | %s\n   B %s | %s | %s", p.ID, p.Label, act, pr, p.X[0], p.X[1], p.X[2], p.X[5], p.X[6], q.CrossLanguage,
				q.A.Kind, q.A.Trigger, q.A.Rule, q.B.Kind, q.B.Trigger, q.B.Rule)
		}
	}
}
