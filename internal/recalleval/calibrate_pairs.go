package recalleval

import (
	"cmp"
	"fmt"
	"go/format"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
)

// PairFeatures is one labelled pair's merge features (experience.MergeFeatures).
type PairFeatures struct {
	ID    string
	Set   string // the file it came from, for reports
	Fold  int    // its cross-validation fold
	Label experience.MergeClass
	X     []float64
	// Scored pairs count in the selection of FitOptions (the sets whose
	// labels follow testdata/eval/README.md).
	Scored bool
	// Weight multiplies the pair's share of the training loss.
	Weight float64
	// Contradiction is experience.Contradicts of the pair: the writer
	// keeps such a pair apart whatever the classifier decides.
	Contradiction bool
}

// MergeFolds is the number of cross-validation folds of the merge
// classifier's calibration.
const MergeFolds = 6

// PairsFeatures computes the features of labelled pairs. group names each
// pair's cluster (pairs of one cluster share a fold: a topic, or the pairs
// built around one lesson); clusters go to folds in order of first
// appearance, cluster i to fold i mod MergeFolds.
func PairsFeatures(pairs []Pair, set string, scored bool, group func(Pair) string, embed experience.Embed) ([]PairFeatures, error) {
	folds := map[string]int{}
	out := make([]PairFeatures, 0, len(pairs))
	for _, p := range pairs {
		c, err := experience.ParseMergeClass(p.Label)
		if err != nil {
			return nil, fmt.Errorf("%s pair %s: %w", set, p.ID, err)
		}
		x, err := experience.MergeFeatures(p.A.MergeLesson(), p.B.MergeLesson(), embed)
		if err != nil {
			return nil, fmt.Errorf("%s pair %s: %w", set, p.ID, err)
		}
		g := group(p)
		f, ok := folds[g]
		if !ok {
			f = len(folds) % MergeFolds
			folds[g] = f
		}
		out = append(out, PairFeatures{ID: p.ID, Set: set, Fold: f, Label: c, X: x, Scored: scored, Weight: 1,
			Contradiction: experience.Contradicts(p.A.MergeLesson(), p.B.MergeLesson())})
	}
	return out, nil
}

// MergeLesson is the lesson as the heuristic writer's merge decision
// sees it.
func (l Lesson) MergeLesson() experience.MergeLesson {
	return experience.MergeLesson{Kind: experience.HeuristicKind(strings.ToLower(l.Kind)), Trigger: l.Trigger, Rule: l.Rule}
}

// FitOptions are the choices of a merge classifier fit.
type FitOptions struct {
	// Lambda is the L2 penalty on the weights (not the biases), per pair.
	Lambda float64
	// Balance weighs every class equally in the loss (each pair by the
	// inverse of its class's total weight).
	Balance bool
	// FoldCost is experience.MergeClassifier.FoldCost.
	FoldCost float64
	// Prior, when set, is the class distribution (duplicate, related,
	// unrelated) the classifier is meant for: after the fit each class's
	// bias moves by log(Prior / training share), the standard correction
	// for a training set whose classes are mixed differently from the
	// pairs the writer will see (the dev pairs are two thirds unrelated,
	// mostly from the older set; the scored sets a third).
	Prior [3]float64
}

// fitIterations, fitStep and fitTolerance fix the gradient descent: full
// batch, a constant step, at most fitIterations steps, stopping when no
// component of the gradient exceeds fitTolerance, in a fixed summation
// order, so that a fit is reproducible.
const (
	fitIterations = 3000
	fitStep       = 0.5
	fitTolerance  = 1e-10
)

// FitMergeClassifier fits a multinomial logistic regression to pairs:
// features standardised by their weighted mean and standard deviation,
// weighted cross-entropy plus Lambda/2·|w|² (biases not penalised),
// minimised by full-batch gradient descent with Nesterov momentum from
// zero (fitIterations, fitStep, fitTolerance). Deterministic: the same pairs in the same order give the same
// weights.
func FitMergeClassifier(pairs []PairFeatures, opt FitOptions) (*experience.MergeClassifier, error) {
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%w: no pairs to fit", experience.ErrMergeInput)
	}
	n := len(experience.MergeFeatureNames)
	w := make([]float64, len(pairs))
	var classW [3]float64
	for i, p := range pairs {
		if len(p.X) != n {
			return nil, fmt.Errorf("%w: pair %s has %d features, want %d", experience.ErrMergeInput, p.ID, len(p.X), n)
		}
		w[i] = p.Weight
		if w[i] <= 0 || math.IsNaN(w[i]) {
			w[i] = 1
		}
		classW[p.Label] += w[i]
	}
	if opt.Balance {
		for i, p := range pairs {
			w[i] *= float64(len(pairs)) / (3 * classW[p.Label])
		}
	}
	var total float64
	for _, v := range w {
		total += v
	}
	m := &experience.MergeClassifier{Embedder: experience.OfflineMergeEmbedderID(), Features: slices.Clone(experience.MergeFeatureNames),
		Mean: make([]float64, n), Scale: make([]float64, n), FoldCost: opt.FoldCost}
	for j := range n {
		var s float64
		for i, p := range pairs {
			s += w[i] * p.X[j]
		}
		mean := s / total
		var v float64
		for i, p := range pairs {
			d := p.X[j] - mean
			v += w[i] * d * d
		}
		sd := math.Sqrt(v / total)
		if sd < 1e-9 {
			sd = 1
		}
		m.Mean[j], m.Scale[j] = mean, sd
	}
	z := make([][]float64, len(pairs))
	for i, p := range pairs {
		z[i] = make([]float64, n)
		for j := range n {
			z[i][j] = (p.X[j] - m.Mean[j]) / m.Scale[j]
		}
	}
	dim := 3 * (n + 1)
	theta, prev, look, grad := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)
	for it := 1; it <= fitIterations; it++ {
		mom := float64(it-1) / float64(it+2)
		for k := range theta {
			look[k] = theta[k] + mom*(theta[k]-prev[k])
		}
		gradient(look, z, pairs, w, total, opt.Lambda, n, grad)
		if maxAbs(grad) < fitTolerance {
			break
		}
		copy(prev, theta)
		for k := range theta {
			theta[k] = look[k] - fitStep*grad[k]
		}
	}
	for c := range 3 {
		m.Weights[c] = slices.Clone(theta[c*(n+1) : (c+1)*(n+1)])
	}
	if opt.Prior != ([3]float64{}) {
		var share [3]float64
		for i, p := range pairs {
			share[p.Label] += w[i] / total
		}
		for c := range 3 {
			if opt.Prior[c] <= 0 || share[c] <= 0 {
				return nil, fmt.Errorf("%w: prior %v with training shares %v", experience.ErrMergeInput, opt.Prior, share)
			}
			m.Weights[c][n] += math.Log(opt.Prior[c] / share[c])
		}
	}
	return m, nil
}

// ScoredPrior is the class distribution of the scored pairs (the sets
// labelled by testdata/eval/README.md's rules), for FitOptions.Prior.
func ScoredPrior(pairs []PairFeatures) [3]float64 {
	var n [3]float64
	var total float64
	for _, p := range pairs {
		if p.Scored {
			n[p.Label]++
			total++
		}
	}
	if total == 0 {
		return [3]float64{}
	}
	for c := range n {
		n[c] /= total
	}
	return n
}

func maxAbs(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m = max(m, math.Abs(x))
	}
	return m
}

// gradient writes into g the gradient of the weighted mean cross-entropy
// plus the L2 penalty at theta.
func gradient(theta []float64, z [][]float64, pairs []PairFeatures, w []float64, total, lambda float64, n int, g []float64) {
	clear(g)
	var logit, p [3]float64
	for i, x := range z {
		for c := range 3 {
			row := theta[c*(n+1) : (c+1)*(n+1)]
			s := row[n]
			for j, v := range x {
				s += row[j] * v
			}
			logit[c] = s
		}
		top := max(logit[0], logit[1], logit[2])
		var sum float64
		for c := range 3 {
			p[c] = math.Exp(logit[c] - top)
			sum += p[c]
		}
		for c := range 3 {
			d := p[c] / sum
			if experience.MergeClass(c) == pairs[i].Label {
				d--
			}
			d *= w[i] / total
			row := g[c*(n+1) : (c+1)*(n+1)]
			for j, v := range x {
				row[j] += d * v
			}
			row[n] += d
		}
	}
	for c := range 3 {
		for j := range n {
			g[c*(n+1)+j] += lambda * theta[c*(n+1)+j]
		}
	}
}

// PairScore counts a merge classifier's decisions.
type PairScore struct {
	Pairs int `json:"pairs"`
	Right int `json:"right"`
	// Folded counts unrelated pairs updated or appended.
	Folded int `json:"unrelated_folded"`
	// Confusion is label → decision (updated, appended, created).
	Confusion [3][3]int `json:"confusion"`
}

// Accuracy is Right / Pairs.
func (s PairScore) Accuracy() float64 {
	if s.Pairs == 0 {
		return 0
	}
	return float64(s.Right) / float64(s.Pairs)
}

// Gain is Right less foldCost per unrelated pair folded.
func (s PairScore) Gain(foldCost float64) float64 {
	return float64(s.Right) - foldCost*float64(s.Folded)
}

func (s PairScore) String() string {
	return fmt.Sprintf("%d/%d right (%.3f), %d unrelated folded; confusion (label → updated/appended/created) duplicate %v related %v unrelated %v",
		s.Right, s.Pairs, s.Accuracy(), s.Folded, s.Confusion[0], s.Confusion[1], s.Confusion[2])
}

// Add counts one decision.
func (s *PairScore) Add(label experience.MergeClass, act experience.EvidenceAction) {
	col := map[experience.EvidenceAction]int{experience.EvidenceUpdated: 0, experience.EvidenceAppend: 1, experience.EvidenceCreated: 2}[act]
	s.Pairs++
	s.Confusion[label][col]++
	if col == int(label) {
		s.Right++
	}
	if label == experience.MergeUnrelated && col != 2 {
		s.Folded++
	}
}

// ScoreMergeClassifier counts m's decisions on pairs (all of them, or the
// scored ones only).
func ScoreMergeClassifier(m *experience.MergeClassifier, pairs []PairFeatures, scoredOnly bool) (PairScore, error) {
	var s PairScore
	for _, p := range pairs {
		if scoredOnly && !p.Scored {
			continue
		}
		act, err := decidePair(m, p)
		if err != nil {
			return s, err
		}
		s.Add(p.Label, act)
	}
	return s, nil
}

// decidePair is the writer's decision on a pair: the classifier's, but
// never a fold of a contradiction.
func decidePair(m *experience.MergeClassifier, p PairFeatures) (experience.EvidenceAction, error) {
	act, _, err := m.Decide(p.X)
	if err != nil {
		return act, fmt.Errorf("pair %s: %w", p.ID, err)
	}
	if p.Contradiction {
		act = experience.EvidenceCreated
	}
	return act, nil
}

// CrossValidateMerge fits on all folds but one and scores the held-out
// fold, for each fold; it returns the pooled score of the scored pairs
// and of all pairs.
func CrossValidateMerge(pairs []PairFeatures, opt FitOptions) (scored, all PairScore, err error) {
	for f := range MergeFolds {
		var train, test []PairFeatures
		for _, p := range pairs {
			if p.Fold == f {
				test = append(test, p)
			} else {
				train = append(train, p)
			}
		}
		if len(test) == 0 {
			continue
		}
		m, err := FitMergeClassifier(train, opt)
		if err != nil {
			return scored, all, err
		}
		for _, p := range test {
			act, err := decidePair(m, p)
			if err != nil {
				return scored, all, err
			}
			all.Add(p.Label, act)
			if p.Scored {
				scored.Add(p.Label, act)
			}
		}
	}
	return scored, all, nil
}

// MergeLambdas is the grid of L2 penalties CalibrateMergeClassifier
// searches.
var MergeLambdas = []float64{0.003, 0.01, 0.03, 0.1, 0.3, 1}

// MergeCalibrationResult is what CalibrateMergeClassifier chose and
// measured.
type MergeCalibrationResult struct {
	Options    FitOptions
	Classifier *experience.MergeClassifier
	// CV is the pooled cross-validation score of the scored pairs at the
	// chosen options; CVAll of every pair.
	CV, CVAll PairScore
	// Train is the fitted classifier's score on every pair.
	Train PairScore
}

// CalibrateMergeClassifier chooses the fit options by cross-validation
// over no prior correction or the scored pairs' class mix (FitOptions.Prior)
// × balance off/on × MergeLambdas, by the most right decisions less
// FoldCost per unrelated pair folded among the scored pairs (ties go to the
// earlier grid point: no prior correction, balance off, the smaller
// penalty), then fits the
// chosen options on every pair. The grid, the folds and the fit are
// fixed, so the result is reproducible.
func CalibrateMergeClassifier(pairs []PairFeatures) (*MergeCalibrationResult, error) {
	var best *MergeCalibrationResult
	for _, prior := range [][3]float64{{}, ScoredPrior(pairs)} {
		for _, bal := range []bool{false, true} {
			for _, l := range MergeLambdas {
				opt := FitOptions{Lambda: l, Balance: bal, FoldCost: FoldCost, Prior: prior}
				cv, all, err := CrossValidateMerge(pairs, opt)
				if err != nil {
					return nil, err
				}
				if best == nil || cv.Gain(FoldCost) > best.CV.Gain(FoldCost)+1e-9 {
					best = &MergeCalibrationResult{Options: opt, CV: cv, CVAll: all}
				}
			}
		}
	}
	m, err := FitMergeClassifier(pairs, best.Options)
	if err != nil {
		return nil, err
	}
	best.Classifier = m
	if best.Train, err = ScoreMergeClassifier(m, pairs, false); err != nil {
		return nil, err
	}
	return best, nil
}

// SortPairs orders pairs by set, then id, so that a fit does not depend
// on the order the files were read in.
func SortPairs(pairs []PairFeatures) {
	slices.SortStableFunc(pairs, func(a, b PairFeatures) int {
		return cmp.Or(strings.Compare(a.Set, b.Set), strings.Compare(a.ID, b.ID))
	})
}

// MergeClassifierSource is the Go source of experience/mergeclass_offline.go
// for a calibration result: OfflineMergeClassifier returning its
// classifier, with the numbers it was chosen by in the comment.
func MergeClassifierSource(r *MergeCalibrationResult, command string) string {
	m := r.Classifier
	var b strings.Builder
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	list := func(xs []float64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = f(x)
		}
		return "[]float64{" + strings.Join(parts, ", ") + "}"
	}
	fmt.Fprintf(&b, "// Code generated by %s; DO NOT EDIT.\n\npackage experience\n\n", command)
	fmt.Fprintf(&b, "// OfflineMergeClassifier returns the merge classifier of the offline\n"+
		"// embedder (%s), fitted by internal/recalleval.CalibrateMergeClassifier on\n"+
		"// the dev pairs: lambda %v, balanced classes %v, prior correction %v, fold cost %v.\n"+
		"// Cross-validation (%d folds) on the scored dev pairs: %d/%d right, %d\n"+
		"// unrelated folded; on every dev pair %d/%d, %d folded. Regenerate with\n//\n//\t%s\n",
		m.Embedder, r.Options.Lambda, r.Options.Balance, r.Options.Prior != ([3]float64{}), r.Options.FoldCost, MergeFolds, r.CV.Right, r.CV.Pairs, r.CV.Folded,
		r.CVAll.Right, r.CVAll.Pairs, r.CVAll.Folded, command)
	fmt.Fprintf(&b, "func OfflineMergeClassifier() *MergeClassifier {\n\treturn &MergeClassifier{\n")
	fmt.Fprintf(&b, "\t\tEmbedder: OfflineMergeEmbedderID(),\n")
	fmt.Fprintf(&b, "\t\tFeatures: []string{%q", m.Features[0])
	for _, s := range m.Features[1:] {
		fmt.Fprintf(&b, ", %q", s)
	}
	fmt.Fprintf(&b, "},\n\t\tMean:     %s,\n\t\tScale:    %s,\n\t\tWeights: [3][]float64{\n", list(m.Mean), list(m.Scale))
	for c, row := range m.Weights {
		fmt.Fprintf(&b, "\t\t\t%s, // %s\n", list(row), experience.MergeClasses[c])
	}
	fmt.Fprintf(&b, "\t\t},\n\t\tFoldCost: %s,\n\t}\n}\n", f(m.FoldCost))
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return b.String() // the test that writes it fails on gofmt
	}
	return string(src)
}
