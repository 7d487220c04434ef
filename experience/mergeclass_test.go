package experience

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/kaizenhq/kaizen/model"
)

func offlineEmbed() Embed {
	e := model.NewOfflineEmbedder(model.DefaultOfflineDimension)
	return func(texts []string) ([][]float32, error) { return e.Embed(context.Background(), texts) }
}

func TestMergeFeaturesBadInput(t *testing.T) {
	ok := MergeLesson{Kind: KindAvoid, Trigger: "when a test is flaky", Rule: "do not add sleeps"}
	for name, c := range map[string]struct {
		a, b  MergeLesson
		embed Embed
	}{
		"empty first":  {MergeLesson{Kind: KindAvoid, Trigger: "  ", Rule: "\n"}, ok, offlineEmbed()},
		"empty second": {ok, MergeLesson{Kind: KindAvoid}, offlineEmbed()},
		"no embedder":  {ok, ok, nil},
		"NaN vector": {ok, ok, func(texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = []float32{float32(math.NaN()), 0}
			}
			return out, nil
		}},
		"too few vectors": {ok, ok, func([]string) ([][]float32, error) { return [][]float32{{1}}, nil }},
		"ragged vectors": {ok, ok, func(texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = make([]float32, 1+i%2)
			}
			return out, nil
		}},
	} {
		if _, err := MergeFeatures(c.a, c.b, c.embed); !errors.Is(err, ErrMergeInput) {
			t.Errorf("%s: err %v, want ErrMergeInput", name, err)
		}
	}
	boom := errors.New("embedder down")
	if _, err := MergeFeatures(ok, ok, func([]string) ([][]float32, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("embedder failure: %v", err)
	}
	// One blank part is allowed: it is dissimilar to everything.
	x, err := MergeFeatures(MergeLesson{Kind: KindAvoid, Rule: "do not add sleeps"}, ok, offlineEmbed())
	if err != nil || len(x) != len(MergeFeatureNames) || x[1] != 0 {
		t.Errorf("blank trigger: %v %v", x, err)
	}
}

func TestMergeFeaturesIdentical(t *testing.T) {
	a := MergeLesson{Kind: KindAvoid, Trigger: "when a flaky test fails intermittently", Rule: "do not add sleep calls; find the race"}
	x, err := MergeFeatures(a, a, offlineEmbed())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cos_whole", "cos_trigger", "cos_rule", "concepts_trigger", "concepts_rule", "concepts_whole", "words_whole", "same_kind", "length_ratio"} {
		if v := x[slices.Index(MergeFeatureNames, f)]; math.Abs(v-1) > 1e-6 {
			t.Errorf("%s of a lesson with itself = %v, want 1", f, v)
		}
	}
	for _, f := range []string{"cross_language", "negation_differs", "opposites"} {
		if v := x[slices.Index(MergeFeatureNames, f)]; v != 0 {
			t.Errorf("%s of a lesson with itself = %v, want 0", f, v)
		}
	}
	zh := MergeLesson{Kind: KindAvoid, Trigger: "测试偶尔失败的时候", Rule: "不要靠加 sleep 让它通过，要找出竞态"}
	x, err = MergeFeatures(a, zh, offlineEmbed())
	if err != nil {
		t.Fatal(err)
	}
	if x[slices.Index(MergeFeatureNames, "cross_language")] != 1 {
		t.Errorf("English vs Chinese: cross_language %v", x)
	}
}

func TestOfflineMergeClassifierValid(t *testing.T) {
	m := OfflineMergeClassifier()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Features, MergeFeatureNames) {
		t.Errorf("shipped features %v, MergeFeatureNames %v: regenerate (docs/experience.md)", m.Features, MergeFeatureNames)
	}
	if MergeClassifierFor(OfflineMergeEmbedderID()) == nil || MergeClassifierFor("ollama:bge-m3@1024") != nil {
		t.Error("MergeClassifierFor: the offline embedder has a classifier, others none")
	}
	cfg := DefaultConfig()
	if cfg.Merge.Classifier(OfflineMergeEmbedderID()) == nil {
		t.Error("the default config does not use the classifier for the offline embedder")
	}
	cfg.Merge.Method = MergeByThreshold
	if cfg.Merge.Classifier(OfflineMergeEmbedderID()) != nil {
		t.Error("method threshold still uses the classifier")
	}
	cfg.Merge.Method = "vibes"
	if err := cfg.Validate(); err == nil {
		t.Error("unknown merge method accepted")
	}
}

func TestMergeClassifierBadInput(t *testing.T) {
	m := OfflineMergeClassifier()
	x := make([]float64, len(m.Features))
	if _, _, err := m.Decide(x[:3]); !errors.Is(err, ErrMergeInput) {
		t.Errorf("short vector: %v", err)
	}
	x[0] = math.NaN()
	if act, _, err := m.Decide(x); !errors.Is(err, ErrMergeInput) || act != EvidenceCreated {
		t.Errorf("NaN feature: %v %v", act, err)
	}
	x[0] = math.Inf(1)
	if _, err := m.Probabilities(x); !errors.Is(err, ErrMergeInput) {
		t.Errorf("infinite feature: %v", err)
	}
	bad := *m
	bad.Scale = slices.Clone(m.Scale)
	bad.Scale[2] = 0
	if err := bad.Validate(); !errors.Is(err, ErrMergeInput) {
		t.Errorf("zero scale: %v", err)
	}
	bad = *m
	bad.Weights[1] = m.Weights[1][:4]
	if err := bad.Validate(); !errors.Is(err, ErrMergeInput) {
		t.Errorf("short row: %v", err)
	}
	if _, err := bad.Probabilities(make([]float64, len(m.Features))); !errors.Is(err, ErrMergeInput) {
		t.Errorf("short row, probabilities: %v", err)
	}
	var nilClf *MergeClassifier
	if err := nilClf.Validate(); !errors.Is(err, ErrMergeInput) {
		t.Errorf("nil classifier: %v", err)
	}
	if _, err := ParseMergeClass("similar"); !errors.Is(err, ErrMergeInput) {
		t.Errorf("unknown label: %v", err)
	}
}

// TestMergeClassifierCosts checks the decision of least expected cost on a
// one-feature classifier whose logits are set directly.
func TestMergeClassifierCosts(t *testing.T) {
	m := &MergeClassifier{Features: []string{"x"}, Mean: []float64{0}, Scale: []float64{1}, FoldCost: 5,
		Weights: [3][]float64{{1, 0}, {0, 0}, {-1, 0}}}
	for _, c := range []struct {
		x    float64
		want EvidenceAction
	}{
		{5, EvidenceUpdated}, // P(dup) ≈ 0.99
		{0, EvidenceCreated}, // 1/3 each: folding costs 2, creating 2/3
		{-5, EvidenceCreated},
	} {
		act, p, err := m.Decide([]float64{c.x})
		if err != nil || act != c.want {
			t.Errorf("x=%v: %v %v %v, want %v", c.x, act, p, err, c.want)
		}
		if s := p[0] + p[1] + p[2]; math.Abs(s-1) > 1e-12 {
			t.Errorf("x=%v: probabilities sum to %v", c.x, s)
		}
	}
	// A related pair with no unrelated mass appends.
	m.Weights = [3][]float64{{0, 0}, {0, 5}, {0, -20}}
	if act, p, _ := m.Decide([]float64{0}); act != EvidenceAppend {
		t.Errorf("related: %v %v", act, p)
	}
	// Without a fold cost, the most probable class wins.
	m.FoldCost = 1
	m.Weights = [3][]float64{{0, 1}, {0, 0}, {0, 0.9}}
	if act, _, _ := m.Decide([]float64{0}); act != EvidenceUpdated {
		t.Errorf("fold cost 1: %v", act)
	}
}

func BenchmarkMergeDecide(b *testing.B) {
	a := MergeLesson{Kind: KindAvoid, Trigger: "when adding automatic retries to an HTTP client", Rule: "do not retry POST requests that are not idempotent unless the request carries an idempotency key"}
	c := MergeLesson{Kind: KindAvoid, Trigger: "在给 HTTP 客户端加自动重试时", Rule: "不要对非幂等的 POST 请求盲目重试，除非带上幂等键"}
	embed, m := offlineEmbed(), OfflineMergeClassifier()
	for b.Loop() {
		x, err := MergeFeatures(a, c, embed)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.Decide(x); err != nil {
			b.Fatal(err)
		}
	}
}
