package recalleval_test

import (
	"os"
	"testing"

	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// TestExploreFoldMargin cross-validates the fold cost (the classifier's
// margin against folding) with and without the contradiction veto.
func TestExploreFoldMargin(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	pairs := devMergePairs(t, "drop")
	flag := map[string]int{}
	for _, p := range pairs {
		if p.Contradiction {
			flag[p.Label.String()]++
		}
	}
	t.Logf("contradictions flagged by label: %v", flag)
	for _, veto := range []bool{false, true} {
		ps := make([]recalleval.PairFeatures, len(pairs))
		copy(ps, pairs)
		if !veto {
			for i := range ps {
				ps[i].Contradiction = false
			}
		}
		for _, fc := range []float64{5, 8} {
			for _, l := range []float64{0.1} {
				opt := recalleval.FitOptions{Lambda: l, FoldCost: fc}
				cv, all, err := recalleval.CrossValidateMerge(ps, opt)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("veto %v fc %v l %v: scored %v | all %.3f folded %d dup %v", veto, fc, l, cv, all.Accuracy(), all.Folded, all.Confusion[0])
			}
		}
	}
}
