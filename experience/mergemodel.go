package experience

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kaizenhq/kaizen/model"
)

// MergeClass is a label of a pair of lessons: what the second lesson is to
// the first.
type MergeClass int

// The classes, in the order of MergeClassifier.Weights.
const (
	MergeDuplicate MergeClass = iota // the same lesson: update
	MergeRelated                     // supports or refines it: append
	MergeUnrelated                   // a different lesson: create
)

// MergeClasses names the classes in order.
var MergeClasses = []string{"duplicate", "related", "unrelated"}

func (c MergeClass) String() string {
	if c < 0 || int(c) >= len(MergeClasses) {
		return "MergeClass(" + strconv.Itoa(int(c)) + ")"
	}
	return MergeClasses[c]
}

// ParseMergeClass returns the class of a label.
func ParseMergeClass(label string) (MergeClass, error) {
	for i, c := range MergeClasses {
		if c == label {
			return MergeClass(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown label %q (want duplicate, related or unrelated)", ErrMergeInput, label)
}

// MergeClassifier is a multinomial logistic regression over the
// standardised features of MergeFeatures, with a cost-sensitive decision.
type MergeClassifier struct {
	// Embedder is the embedder id the features were computed with.
	Embedder string `json:"embedder"`
	// Features names the features, MergeFeatureNames when it was fitted.
	Features []string `json:"features"`
	// Mean and Scale standardise each feature: (x - Mean) / Scale.
	Mean  []float64 `json:"mean"`
	Scale []float64 `json:"scale"`
	// Weights holds one row per class (MergeClasses order): a weight per
	// standardised feature, then the bias.
	Weights [3][]float64 `json:"weights"`
	// FoldCost is the cost of folding an unrelated lesson into another
	// (update or append), in units of one wrong decision of another kind.
	FoldCost float64 `json:"fold_cost"`
}

// Validate checks the shapes and that every number is finite.
func (m *MergeClassifier) Validate() error {
	if m == nil {
		return fmt.Errorf("%w: no classifier", ErrMergeInput)
	}
	n := len(m.Features)
	if n == 0 || len(m.Mean) != n || len(m.Scale) != n {
		return fmt.Errorf("%w: classifier with %d features, %d means, %d scales", ErrMergeInput, n, len(m.Mean), len(m.Scale))
	}
	for c, row := range m.Weights {
		if len(row) != n+1 {
			return fmt.Errorf("%w: classifier row %s has %d weights, want %d", ErrMergeInput, MergeClasses[c], len(row), n+1)
		}
		for _, w := range row {
			if !finite(w) {
				return fmt.Errorf("%w: classifier weight not finite", ErrMergeInput)
			}
		}
	}
	for i := range n {
		if !finite(m.Mean[i]) || !finite(m.Scale[i]) || m.Scale[i] <= 0 {
			return fmt.Errorf("%w: classifier feature %s: mean %v, scale %v", ErrMergeInput, m.Features[i], m.Mean[i], m.Scale[i])
		}
	}
	if !finite(m.FoldCost) || m.FoldCost < 0 {
		return fmt.Errorf("%w: fold cost %v", ErrMergeInput, m.FoldCost)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Probabilities returns P(duplicate), P(related), P(unrelated) for a
// feature vector; a vector of the wrong length or with a value that is not
// finite is an ErrMergeInput.
func (m *MergeClassifier) Probabilities(x []float64) ([3]float64, error) {
	var p [3]float64
	if len(x) != len(m.Features) || len(m.Mean) != len(x) || len(m.Scale) != len(x) {
		return p, fmt.Errorf("%w: %d features, the classifier has %d", ErrMergeInput, len(x), len(m.Features))
	}
	for _, v := range x {
		if !finite(v) {
			return p, fmt.Errorf("%w: a feature is not finite", ErrMergeInput)
		}
	}
	var z [3]float64
	for c := range z {
		row := m.Weights[c]
		if len(row) != len(x)+1 {
			return p, fmt.Errorf("%w: classifier row %s has %d weights", ErrMergeInput, MergeClasses[c], len(row))
		}
		s := row[len(x)]
		for i, v := range x {
			s += row[i] * ((v - m.Mean[i]) / m.Scale[i])
		}
		z[c] = s
	}
	top := max(z[0], z[1], z[2])
	var sum float64
	for c := range z {
		p[c] = math.Exp(z[c] - top)
		sum += p[c]
	}
	for c := range p {
		p[c] /= sum
	}
	return p, nil
}

// ActionCosts returns the expected cost of updating, appending and
// creating for class probabilities p: a wrong decision costs 1, folding
// an unrelated lesson (update or append) FoldCost.
func (m *MergeClassifier) ActionCosts(p [3]float64) (update, appendTo, create float64) {
	fold := m.FoldCost * p[MergeUnrelated]
	return p[MergeRelated] + fold, p[MergeDuplicate] + fold, p[MergeDuplicate] + p[MergeRelated]
}

// Decide returns the action of least expected cost for a feature vector
// (ties go to create, then append), with the class probabilities.
func (m *MergeClassifier) Decide(x []float64) (EvidenceAction, [3]float64, error) {
	p, err := m.Probabilities(x)
	if err != nil {
		return EvidenceCreated, p, err
	}
	u, a, c := m.ActionCosts(p)
	switch {
	case c <= u && c <= a:
		return EvidenceCreated, p, nil
	case a <= u:
		return EvidenceAppend, p, nil
	}
	return EvidenceUpdated, p, nil
}

// OfflineMergeEmbedderID is the embedder the shipped merge classifier was
// fitted for: the offline embedder at its default dimension.
func OfflineMergeEmbedderID() string {
	return model.OfflineEmbedderName + "@" + strconv.Itoa(model.DefaultOfflineDimension)
}

// The merge methods of MergeThresholds.Method ("" is MergeByClassifier).
const (
	MergeByClassifier = "classifier"
	MergeByThreshold  = "threshold"
)

// MergeMethods lists the valid values of MergeThresholds.Method.
var MergeMethods = []string{"", MergeByClassifier, MergeByThreshold}

// Classifier returns the merge classifier the writer uses with an
// embedder, or nil when it decides by the thresholds (method "threshold",
// or no classifier shipped for that embedder).
func (m MergeThresholds) Classifier(embedder string) *MergeClassifier {
	if m.Method == MergeByThreshold {
		return nil
	}
	return MergeClassifierFor(embedder)
}

// MergeClassifierFor returns the shipped merge classifier fitted for an
// embedder id, or nil: there is one for the offline embedder at its
// default dimension (OfflineMergeClassifier).
func MergeClassifierFor(embedder string) *MergeClassifier {
	if embedder == OfflineMergeEmbedderID() {
		return OfflineMergeClassifier()
	}
	return nil
}
