package sim

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

func TestParsePolicies(t *testing.T) {
	t.Parallel()
	specs, err := ParsePolicies(DefaultPolicies+", kaizen:anti_pattern.min_observations=5+maturity.half_life_days=30", KaizenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if want := []string{"random", "oracle", "bandit", "bandit-family", "kaizen", "kaizen:anti_pattern.min_observations=5+maturity.half_life_days=30"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	for _, c := range []struct{ list, msg string }{
		{"", "no policy"},
		{" , ", "no policy"},
		{"random,random", "listed twice"},
		{"greedy", "unknown policy"},
		{"kaizen:rankings=thompson", `unknown key "learning.rankings"`},
		{"kaizen:anti_pattern.min_observations=0", "anti_pattern.min_observations"},
		{"kaizen:half_life_days", "want KEY=VALUE"},
		{"kaizen:a b=1", "not a configuration key"},
		{"kaizen:half_life_days=[1]", "half_life_days"},
	} {
		_, err := ParsePolicies(c.list, KaizenOptions{})
		var pe *PolicyError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParsePolicies(%q) = %v, want a *PolicyError saying %q", c.list, err, c.msg)
		}
	}
}

// Overrides are decoded like kaizen.toml: bare words become strings,
// numbers stay numbers, dotted keys reach nested tables.
func TestLearningOverrides(t *testing.T) {
	t.Parallel()
	mutate, err := LearningOverrides("anti_pattern.min_observations=7+locale=zh+maturity.half_life_days=14.5")
	if err != nil {
		t.Fatal(err)
	}
	cfg := kaizen.DefaultConfig()
	mutate(&cfg)
	if cfg.Learning.AntiPattern.MinObservations != 7 || cfg.Learning.Locale != "zh" || cfg.Learning.Maturity.HalfLifeDays != 14.5 {
		t.Errorf("learning config after overrides: %+v", cfg.Learning)
	}
	if cfg.Learning.HalfLifeDays != 90 {
		t.Errorf("an untouched key changed: half_life_days %v", cfg.Learning.HalfLifeDays)
	}
}

func FuzzLearningOverrides(f *testing.F) {
	for _, s := range []string{"anti_pattern.min_observations=5", "locale=zh+half_life_days=3", "ranking=thompson", "a=", "=1", "x=[1,2]", "maturity.epsilon=0.5+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mutate, err := LearningOverrides(s)
		if err != nil {
			return
		}
		cfg := kaizen.DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted overrides %q give an invalid config: %v", s, err)
		}
	})
}

func TestValidChoice(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		choice []int
		ok     bool
	}{{[]int{0, 3}, true}, {[]int{0}, false}, {[]int{1, 1}, false}, {[]int{-1, 2}, false}, {[]int{0, 12}, false}} {
		if err := validChoice(c.choice, 2, 12); (err == nil) != c.ok {
			t.Errorf("validChoice(%v) = %v", c.choice, err)
		}
	}
}

func TestBetaSample(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range [][2]float64{{1, 1}, {2, 8}, {30, 3}, {0.5, 0.5}} {
		s, n := 0.0, 20000
		for range n {
			x := betaSample(rng, c[0], c[1])
			if x < 0 || x > 1 || math.IsNaN(x) {
				t.Fatalf("Beta%v sample %v", c, x)
			}
			s += x
		}
		if got, want := s/float64(n), c[0]/(c[0]+c[1]); math.Abs(got-want) > 0.01 {
			t.Errorf("Beta%v mean %.4f, want %.4f", c, got, want)
		}
	}
}

// The bandits learn: on an easy world (one strategy at 0.9, the others at
// 0.2) they end close to the oracle, the per-family one per family.
func TestBanditsLearn(t *testing.T) {
	t.Parallel()
	src := `name = "easy"
tasks = 400
strategies_per_task = 1
noise = 0
default_rate = 0.2
[[family]]
name = "a"
descriptions = ["add a column to the orders table and backfill it"]
[family.rates]
split-by-feature = 0.9
[[family]]
name = "b"
descriptions = ["add a dark mode toggle to the settings page"]
[family.rates]
sequential-order = 0.9
`
	w, err := ParseWorld("easy", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	specs, _ := ParsePolicies("random,bandit,bandit-family", KaizenOptions{})
	rep, err := Run(context.Background(), w, Options{Policies: specs, Seeds: []uint64{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	last := func(p PolicyReport) float64 { return p.Windows[len(p.Windows)-1].Mean }
	if got := last(rep.Policies[2]); got < 0.8 {
		t.Errorf("bandit-family ends at %.2f, want >= 0.8", got)
	}
	if got := last(rep.Policies[1]); got > 0.7 {
		t.Errorf("the global bandit ends at %.2f on opposite families, want it to be stuck below 0.7", got)
	}
	if got := last(rep.Policies[0]); got > 0.4 {
		t.Errorf("random ends at %.2f", got)
	}
}
