package recalleval_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// TestExploreOverlap measures, by cross-validation on the dev pairs, the
// merge classifier with the overlap features
// (experience.MergeOverlapFeatures) added to the base features, one at a
// time and together (dup18, 2026-11-26).
func TestExploreOverlap(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	raw := map[string]recalleval.Pair{}
	for _, s := range append(devPairSources(t, "drop"), advPairSource(t)) {
		for _, p := range s.pairs {
			raw[s.name+"/"+p.ID] = p
		}
	}
	base := devMergePairs(t, "drop", advPairSource(t))
	extra := make([][]float64, len(base))
	for i, p := range base {
		rp := raw[p.Set+"/"+p.ID]
		extra[i] = experience.MergeOverlapFeatures(rp.A.MergeLesson(), rp.B.MergeLesson())
	}
	only := os.Getenv("KAIZEN_EXPLORE_ONLY")
	variants := []struct {
		name string
		cols []int
	}{{"base", nil}, {"+whole", []int{0}}, {"+trigger", []int{1}}, {"+rule", []int{2}}, {"+all", []int{0, 1, 2}}, {"+rule_conc", []int{3}}, {"+t*r", []int{4}}, {"+rule,t*r", []int{2, 4}}}
	for j, name := range experience.MergeOverlapFeatureNames {
		var n, sum float64
		for i, a := range base {
			for k, b := range base {
				if a.Scored && b.Scored && a.Label == experience.MergeRelated && b.Label == experience.MergeUnrelated {
					n++
					switch {
					case extra[i][j] > extra[k][j]:
						sum++
					case extra[i][j] == extra[k][j]:
						sum += 0.5
					}
				}
			}
		}
		t.Logf("AUC related > unrelated, scored dev pairs: %s %.2f", name, sum/n)
	}
	saved := experience.MergeFeatureNames
	defer func() { experience.MergeFeatureNames = saved }()
	for _, v := range variants {
		if only != "" && !strings.Contains(only, v.name) {
			continue
		}
		pairs := make([]recalleval.PairFeatures, len(base))
		for i, p := range base {
			pairs[i] = p
			pairs[i].X = slices.Clone(p.X)
			for _, c := range v.cols {
				pairs[i].X = append(pairs[i].X, extra[i][c])
			}
		}
		experience.MergeFeatureNames = make([]string, len(pairs[0].X))
		r, err := recalleval.CalibrateMergeClassifier(pairs)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-9s chosen %+v: CV scored %v gain %.0f | CV all %v", v.name, r.Options, r.CV, r.CV.Gain(recalleval.FoldCost), r.CVAll)
	}
}

// TestExploreFoldGuard lists, for the dev pairs the shipped classifier
// folds (update or append), the overlap features, to look for a guard
// that keeps same-trigger, different-rule lessons apart.
func TestExploreFoldGuard(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	m := experience.OfflineMergeClassifier()
	for _, s := range append(devPairSources(t, "drop"), advPairSource(t)) {
		fs, err := recalleval.PairsFeatures(s.pairs, s.name, s.scored, s.group, offlineEmbed())
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range s.pairs {
			act, pr, err := m.Decide(fs[i].X)
			if err != nil {
				t.Fatal(err)
			}
			if act == experience.EvidenceCreated || fs[i].Contradiction {
				continue
			}
			o := experience.MergeOverlapFeatures(p.A.MergeLesson(), p.B.MergeLesson())
			t.Logf("FOLD %-10s %-28s %-6s %-9s p %.2f cosT %.2f cosR %.2f ovlT %.2f ovlR %.2f ovlRc %.2f", p.Label, s.name, p.ID, act, pr, fs[i].X[1], fs[i].X[2], o[1], o[2], o[3])
		}
	}
}
