package recalleval_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/model"
)

// offlineEmbed embeds with the offline embedder at its default dimension,
// the one the shipped merge classifier is fitted for.
func offlineEmbed() experience.Embed {
	e := model.NewOfflineEmbedder(model.DefaultOfflineDimension)
	return func(texts []string) ([][]float32, error) { return e.Embed(context.Background(), texts) }
}

// oldGroup is the cluster of a pair of experience/testdata/pairs: its id
// without the last part ("en-01-dup" → "en-01").
func oldGroup(p recalleval.Pair) string {
	if i := strings.LastIndexByte(p.ID, '-'); i > 0 {
		return p.ID[:i]
	}
	return p.ID
}

// devPairSource is one file of dev pairs of the merge classifier.
type devPairSource struct {
	name   string
	pairs  []recalleval.Pair
	scored bool
	group  func(recalleval.Pair) string
}

// advPairSource reads the adversarial dev pairs of dup18 (2026-11-26),
// written before any tuning of the pass: paraphrase and EN↔ZH duplicates,
// related lessons and same-domain negatives around one lesson per topic.
// They are not in devPairSources: a classifier refitted with them folded
// three distinct lessons of testdata/eval/recall into others while
// loading them (docs/experience.md); TestRecallEval writes them through
// the writer (own/dev) and the exploration tests measure refits with them.
func advPairSource(t *testing.T) devPairSource {
	t.Helper()
	ps, err := recalleval.ReadJSONL[recalleval.Pair]("../../testdata/recall-eval/dedup-adv-dev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return devPairSource{"testdata/recall-eval/adv", ps, true, func(p recalleval.Pair) string { return p.Topic }}
}

// devPairSources reads the dev pair files (see devMergePairs).
func devPairSources(t *testing.T, oldRelated string) []devPairSource {
	t.Helper()
	read := func(path string) []recalleval.Pair {
		ps, err := recalleval.ReadJSONL[recalleval.Pair](path)
		if err != nil {
			t.Fatal(err)
		}
		var out []recalleval.Pair
		for _, p := range ps {
			if p.Split == "dev" || p.Split == "" {
				out = append(out, p)
			}
		}
		return out
	}
	var old []recalleval.Pair
	for _, p := range read("../../experience/testdata/pairs/pairs.jsonl") {
		if p.Label == "related" {
			switch oldRelated {
			case "drop":
				continue
			case "unrelated":
				p.Label = "unrelated"
			}
		}
		old = append(old, p)
	}
	return []devPairSource{
		{"experience/testdata/pairs", old, false, oldGroup},
		{"testdata/recall-eval", read("../../testdata/recall-eval/dedup-dev.jsonl"), true, func(p recalleval.Pair) string { return p.ID }},
		{"testdata/eval/dedup", read("../../testdata/eval/dedup/pairs.jsonl"), true, func(p recalleval.Pair) string { return p.Topic }},
		// Adversarial dev pairs written 2026-11-26 (before any holdout
		// error of the pass was looked at), in the holdout's areas but not
		// from its pairs: paraphrases, EN↔ZH duplicates, related lessons
		// and same-domain hard negatives built around one lesson per topic.
		{"testdata/recall-eval/extra", read("../../testdata/recall-eval/dedup-extra-dev.jsonl"), true, func(p recalleval.Pair) string { return p.Topic }},
		// Cross-language contradictions and duplicates of opposite
		// phrasing (q18, 2026-11-26), written for the contradiction veto.
		{"testdata/recall-eval/xlang", read("../../testdata/recall-eval/dedup-xlang-dev.jsonl"), true, func(p recalleval.Pair) string { return p.Topic }},
	}
}

// devMergePairs reads the dev pairs the merge classifier is fitted on:
// experience/testdata/pairs (all dev; its "related" pairs are "same area,
// different lesson", which testdata/eval/README.md calls unrelated, so
// oldRelated says what to do with them: "keep", "drop" or "unrelated"),
// and the dev splits of testdata/recall-eval and testdata/eval/dedup (the
// scored pairs); more adds other sources (advPairSource).
func devMergePairs(t *testing.T, oldRelated string, more ...devPairSource) []recalleval.PairFeatures {
	t.Helper()
	embed := offlineEmbed()
	var all []recalleval.PairFeatures
	for _, s := range append(devPairSources(t, oldRelated), more...) {
		fs, err := recalleval.PairsFeatures(s.pairs, s.name, s.scored, s.group, embed)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fs...)
	}
	recalleval.SortPairs(all)
	return all
}

func TestExploreMergeClassifier(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	for _, v := range []string{"keep", "drop", "unrelated"} {
		pairs := devMergePairs(t, v)
		for _, bal := range []bool{false, true} {
			for _, l := range recalleval.MergeLambdas {
				opt := recalleval.FitOptions{Lambda: l, Balance: bal, FoldCost: recalleval.FoldCost}
				cv, all, err := recalleval.CrossValidateMerge(pairs, opt)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("old related %s %+v: scored %v | all %.3f folded %d", v, opt, cv, all.Accuracy(), all.Folded)
			}
		}
	}
}

// mergeClassifierCommand regenerates experience/mergeclass_offline.go.
const mergeClassifierCommand = "KAIZEN_WRITE_MERGE_CLASSIFIER=1 go test ./internal/recalleval -run TestCalibrateMergeClassifier"

// TestCalibrateMergeClassifier fits the merge classifier of the offline
// embedder on the dev pairs and fails if the shipped one
// (experience.OfflineMergeClassifier) differs; with
// KAIZEN_WRITE_MERGE_CLASSIFIER=1 it rewrites the shipped one instead
// (after a change of the lexicon or the embedder).
func TestCalibrateMergeClassifier(t *testing.T) {
	r, err := recalleval.CalibrateMergeClassifier(devMergePairs(t, "drop"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chosen %+v; cross-validation, scored dev pairs: %v", r.Options, r.CV)
	t.Logf("cross-validation, every dev pair: %v", r.CVAll)
	t.Logf("fitted on every dev pair, training score: %v", r.Train)
	src := recalleval.MergeClassifierSource(r, mergeClassifierCommand)
	if os.Getenv("KAIZEN_WRITE_MERGE_CLASSIFIER") != "" {
		if err := os.WriteFile("../../experience/mergeclass_offline.go", []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("wrote experience/mergeclass_offline.go")
		return
	}
	got, want := r.Classifier, experience.OfflineMergeClassifier()
	if want == nil {
		t.Fatalf("no shipped classifier; run %s", mergeClassifierCommand)
	}
	if msg := sameClassifier(got, want, 1e-6); msg != "" {
		t.Errorf("the dev pairs fit a different merge classifier (%s); if the lexicon or the embedder changed, run\n\t%s", msg, mergeClassifierCommand)
	}
}

// sameClassifier describes the first difference between two classifiers
// beyond tol ("" when none).
func sameClassifier(a, b *experience.MergeClassifier, tol float64) string {
	if a.Embedder != b.Embedder || !slices.Equal(a.Features, b.Features) || a.FoldCost != b.FoldCost {
		return fmt.Sprintf("embedder %s/%s, features %v/%v, fold cost %v/%v", a.Embedder, b.Embedder, a.Features, b.Features, a.FoldCost, b.FoldCost)
	}
	near := func(what string, x, y []float64) string {
		if len(x) != len(y) {
			return what + ": lengths differ"
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > tol*max(1, math.Abs(y[i])) {
				return fmt.Sprintf("%s[%d]: %v, shipped %v", what, i, x[i], y[i])
			}
		}
		return ""
	}
	for _, d := range []string{near("mean", a.Mean, b.Mean), near("scale", a.Scale, b.Scale),
		near("weights duplicate", a.Weights[0], b.Weights[0]), near("weights related", a.Weights[1], b.Weights[1]),
		near("weights unrelated", a.Weights[2], b.Weights[2])} {
		if d != "" {
			return d
		}
	}
	return ""
}

func TestExploreAblation(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	pairs := devMergePairs(t, "drop")
	var base recalleval.PairScore
	for _, p := range pairs {
		if !p.Scored {
			continue
		}
		act := recalleval.DecideMerge(recalleval.PairSimilarity{Label: p.Label.String(), Cosine: p.X[0], SameKind: p.X[9] == 1},
			experience.OfflineMergeCalibration()[experience.OfflineMergeEmbedderID()])
		base.Add(p.Label, act)
	}
	t.Logf("thresholds 0.55/0.55 on scored dev: %v", base)
	opts := []recalleval.FitOptions{{Lambda: 0.1, FoldCost: 5}, {Lambda: 0.03, FoldCost: 5}, {Lambda: 0.01, Balance: true, FoldCost: 5}}
	for _, opt := range opts {
		cv, all, err := recalleval.CrossValidateMerge(pairs, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v all features: %v | all %.3f", opt, cv, all.Accuracy())
		for j, name := range experience.MergeFeatureNames {
			cp := make([]recalleval.PairFeatures, len(pairs))
			for i, p := range pairs {
				cp[i] = p
				cp[i].X = slices.Clone(p.X)
				cp[i].X[j] = 0
			}
			cv, all, _ := recalleval.CrossValidateMerge(cp, opt)
			t.Logf("  without %-20s gain %5.0f %v | all %.3f", name, cv.Gain(5), cv, all.Accuracy())
		}
	}
	// means per label of the scored pairs
	for c := range 3 {
		var sum []float64
		n := 0
		for _, p := range pairs {
			if p.Scored && int(p.Label) == c {
				if sum == nil {
					sum = make([]float64, len(p.X))
				}
				for j, v := range p.X {
					sum[j] += v
				}
				n++
			}
		}
		for j := range sum {
			sum[j] = math.Round(sum[j]/float64(n)*1000) / 1000
		}
		t.Logf("%s means %v", experience.MergeClasses[c], sum)
	}
}

func TestExplorePrior(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	pairs := devMergePairs(t, "drop")
	prior := recalleval.ScoredPrior(pairs)
	t.Logf("scored prior %v", prior)
	for _, pr := range []bool{false, true} {
		for _, bal := range []bool{false, true} {
			for _, fc := range []float64{5} {
				for _, l := range recalleval.MergeLambdas {
					opt := recalleval.FitOptions{Lambda: l, Balance: bal, FoldCost: fc}
					if pr {
						opt.Prior = prior
					}
					cv, all, err := recalleval.CrossValidateMerge(pairs, opt)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("prior %v bal %v fc %v l %v: gain %.0f scored %v | all %.3f folded %d", pr, bal, fc, l, cv.Gain(5), cv, all.Accuracy(), all.Folded)
				}
			}
		}
	}
}

func TestExploreAUC(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	pairs := devMergePairs(t, "drop")
	auc := func(j int, pos, neg experience.MergeClass) float64 {
		var n, s float64
		for _, a := range pairs {
			if !a.Scored || a.Label != pos {
				continue
			}
			for _, b := range pairs {
				if !b.Scored || b.Label != neg {
					continue
				}
				n++
				switch {
				case a.X[j] > b.X[j]:
					s++
				case a.X[j] == b.X[j]:
					s += 0.5
				}
			}
		}
		return s / n
	}
	for j, name := range experience.MergeFeatureNames {
		t.Logf("%-20s dup>rel %.2f dup>unr %.2f rel>unr %.2f", name, auc(j, 0, 1), auc(j, 0, 2), auc(j, 1, 2))
	}
	m := experience.OfflineMergeClassifier()
	for _, p := range pairs {
		if !p.Scored || p.Label != experience.MergeDuplicate {
			continue
		}
		act, pr, _ := m.Decide(p.X)
		if act != experience.EvidenceUpdated {
			t.Logf("missed dup %s %s cross %v cos %.2f trig %.2f rule %.2f concepts %.2f p %.2f", p.Set, p.ID, p.X[10] == 1, p.X[0], p.X[1], p.X[2], p.X[7], pr)
		}
	}
}

func TestExploreExtraFeatures(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	base := devMergePairs(t, "drop")
	variants := map[string]func(x []float64) []float64{
		"base":         func(x []float64) []float64 { return x },
		"min_cos":      func(x []float64) []float64 { return append(x, min(x[1], x[2])) },
		"min_concepts": func(x []float64) []float64 { return append(x, min(x[5], x[6])) },
		"both_min":     func(x []float64) []float64 { return append(x, min(x[1], x[2]), min(x[5], x[6])) },
		"sq":           func(x []float64) []float64 { return append(x, x[0]*x[0], x[7]*x[7]) },
		"cross_conc":   func(x []float64) []float64 { return append(x, x[10]*x[7]) },
	}
	for _, name := range []string{"base", "min_cos", "min_concepts", "both_min", "sq", "cross_conc"} {
		f := variants[name]
		pairs := make([]recalleval.PairFeatures, len(base))
		for i, p := range base {
			pairs[i] = p
			pairs[i].X = f(slices.Clone(p.X))
		}
		saved := experience.MergeFeatureNames
		experience.MergeFeatureNames = make([]string, len(pairs[0].X))
		for _, l := range []float64{0.03, 0.1, 0.3} {
			cv, all, err := recalleval.CrossValidateMerge(pairs, recalleval.FitOptions{Lambda: l, FoldCost: 5})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-13s l %v gain %.0f %v | all %.3f", name, l, cv.Gain(5), cv, all.Accuracy())
		}
		experience.MergeFeatureNames = saved
	}
}
