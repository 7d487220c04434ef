package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Policy chooses the strategies of each task and learns from the results.
// A run calls Choose then Observe for every task in order, from one
// goroutine.
type Policy interface {
	// Choose returns Task.K distinct strategy indexes.
	Choose(ctx context.Context, t Task) ([]int, error)
	// Observe reports the result of the choice.
	Observe(ctx context.Context, t Task, choice []int, r Result) error
}

// Env is what a policy is built with for one run (one seed).
type Env struct {
	World *World
	Seed  uint64
	// Rand is the policy's own random stream, derived from the seed and
	// the policy's name: the same policy on the same seed draws the same.
	Rand *rand.Rand
	// Clock is the simulated clock; the runner sets it to the task's
	// start before Choose and to the report time before Observe.
	Clock *Clock
	// Rates returns the hidden rates of a family at a task number. Only
	// the oracle may use it, and the informed reference learners for
	// their per-strategy feedback draws (informed.go).
	Rates func(family, task int) []float64
}

// PolicySpec names a policy and builds it for a run.
type PolicySpec struct {
	Name string
	New  func(ctx context.Context, env Env) (Policy, error)
}

// Clock is a simulated clock safe for concurrent reads.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// DefaultPolicies are the policies `kaizen sim` runs by default.
const DefaultPolicies = "random,oracle,bandit,bandit-family,kaizen"

// PolicyError is an invalid policy list.
type PolicyError struct {
	Spec    string
	Message string
}

// Error renders the policy and what is wrong with it.
func (e *PolicyError) Error() string {
	if e.Spec == "" {
		return "policies: " + e.Message
	}
	return fmt.Sprintf("policy %q: %s", e.Spec, e.Message)
}

// ParsePolicies reads a comma-separated policy list:
//
//	random          uniform choice
//	oracle          the best K strategies of the task's family, from the hidden rates
//	bandit          Beta-Bernoulli Thompson sampling over strategies, one posterior
//	bandit-family   the same, one posterior per task family
//	informed        REFERENCE, not a product policy: told the family and each
//	                chosen strategy's own success (drawn from the hidden
//	                rate), Thompson sampling per (family, strategy)
//	informed-discounted
//	                the same, a strategy's counts discounted by 0.97 at each
//	                of its observations in the family (follows drifts)
//	informed-pooled the same, each family's prior centred on the other
//	                families' results (4 pseudo-observations)
//	informed-ucb    the same feedback, UCB1 per family
//	informed-full   REFERENCE: observes every strategy's own success at each
//	                task, not only the chosen ones' (full information)
//	informed-full-discounted
//	                the same, counts discounted by 0.97 per observation
//	kaizen          the real engine with its default configuration
//	kaizen+tags     the same, the agent also tagging each task with its family
//	kaizen:KEY=VALUE[+KEY=VALUE…]
//	                the engine with [learning] keys set (TOML values; a bare
//	                word is a string), e.g. kaizen:anti_pattern.min_observations=5
//
// opts configures the kaizen policies (store, guidance reader).
func ParsePolicies(list string, opts KaizenOptions) ([]PolicySpec, error) {
	var out []PolicySpec
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, &PolicyError{Spec: name, Message: "is listed twice"}
		}
		seen[name] = true
		spec, err := policyByName(name, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	if len(out) == 0 {
		return nil, &PolicyError{Message: "no policy given (e.g. " + DefaultPolicies + ")"}
	}
	return out, nil
}

func policyByName(name string, opts KaizenOptions) (PolicySpec, error) {
	switch name {
	case "random":
		return PolicySpec{Name: name, New: newRandom}, nil
	case "oracle":
		return PolicySpec{Name: name, New: newOracle}, nil
	case "bandit":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) { return newThompson(env, false), nil }}, nil
	case "bandit-family":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) { return newThompson(env, true), nil }}, nil
	case "informed":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) { return newInformed(env, informedConfig{}), nil }}, nil
	case "informed-discounted":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) {
			return newInformed(env, informedConfig{discount: InformedDiscount}), nil
		}}, nil
	case "informed-pooled":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) {
			return newInformed(env, informedConfig{pool: InformedPool}), nil
		}}, nil
	case "informed-full":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) {
			return newInformed(env, informedConfig{full: true}), nil
		}}, nil
	case "informed-full-discounted":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) {
			return newInformed(env, informedConfig{full: true, discount: InformedDiscount}), nil
		}}, nil
	case "informed-ucb":
		return PolicySpec{Name: name, New: func(_ context.Context, env Env) (Policy, error) {
			return newInformed(env, informedConfig{ucb: true}), nil
		}}, nil
	case "kaizen":
		return KaizenPolicy(name, opts), nil
	case "kaizen+tags":
		o := opts
		o.Tags = true
		return KaizenPolicy(name, o), nil
	}
	if rest, ok := strings.CutPrefix(name, "kaizen+tags:"); ok {
		mutate, err := LearningOverrides(rest)
		if err != nil {
			return PolicySpec{}, &PolicyError{Spec: name, Message: err.Error()}
		}
		o := opts
		o.Configure, o.Tags = chain(opts.Configure, mutate), true
		return KaizenPolicy(name, o), nil
	}
	if rest, ok := strings.CutPrefix(name, "kaizen:"); ok {
		mutate, err := LearningOverrides(rest)
		if err != nil {
			return PolicySpec{}, &PolicyError{Spec: name, Message: err.Error()}
		}
		o := opts
		o.Configure = chain(opts.Configure, mutate)
		return KaizenPolicy(name, o), nil
	}
	return PolicySpec{}, &PolicyError{Spec: name, Message: "unknown policy (random, oracle, bandit, bandit-family, informed, informed-discounted, informed-pooled, informed-ucb, informed-full, informed-full-discounted, kaizen, kaizen+tags, kaizen:KEY=VALUE, kaizen+tags:KEY=VALUE)"}
}

// policyRand is a policy's own stream: the seed and the policy's name.
func policyRand(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// validChoice checks a policy's choice.
func validChoice(choice []int, k, n int) error {
	if len(choice) != k {
		return fmt.Errorf("chose %d strategies, want %d", len(choice), k)
	}
	for i, s := range choice {
		if s < 0 || s >= n {
			return fmt.Errorf("chose strategy index %d, want 0..%d", s, n-1)
		}
		if slices.Contains(choice[:i], s) {
			return fmt.Errorf("chose strategy %d twice", s)
		}
	}
	return nil
}

// randomPolicy chooses K strategies uniformly.
type randomPolicy struct {
	rng *rand.Rand
	n   int
}

func newRandom(_ context.Context, env Env) (Policy, error) {
	return &randomPolicy{rng: env.Rand, n: len(env.World.Strategies)}, nil
}

func (p *randomPolicy) Choose(_ context.Context, t Task) ([]int, error) {
	return p.rng.Perm(p.n)[:t.K], nil
}

func (p *randomPolicy) Observe(context.Context, Task, []int, Result) error { return nil }

// oraclePolicy knows the hidden rates, drifts included, and takes the K
// best of the task's family.
type oraclePolicy struct {
	rates func(family, task int) []float64
}

func newOracle(_ context.Context, env Env) (Policy, error) {
	return &oraclePolicy{rates: env.Rates}, nil
}

func (p *oraclePolicy) Choose(_ context.Context, t Task) ([]int, error) {
	return topK(p.rates(t.Family, t.Number), t.K), nil
}

func (p *oraclePolicy) Observe(context.Context, Task, []int, Result) error { return nil }

// thompson is Beta-Bernoulli Thompson sampling: each strategy has a
// Beta(1+successes, 1+failures) posterior over the task success it takes
// part in (one per family when perFamily); a task samples every posterior
// and uses the K highest samples.
type thompson struct {
	rng       *rand.Rand
	perFamily bool
	a, b      [][]float64 // [context][strategy]
}

func newThompson(env Env, perFamily bool) *thompson {
	contexts := 1
	if perFamily {
		contexts = len(env.World.Families)
	}
	p := &thompson{rng: env.Rand, perFamily: perFamily, a: make([][]float64, contexts), b: make([][]float64, contexts)}
	for c := range contexts {
		p.a[c], p.b[c] = make([]float64, len(env.World.Strategies)), make([]float64, len(env.World.Strategies))
		for s := range p.a[c] {
			p.a[c][s], p.b[c][s] = 1, 1
		}
	}
	return p
}

func (p *thompson) context(t Task) int {
	if p.perFamily {
		return t.Family
	}
	return 0
}

func (p *thompson) Choose(_ context.Context, t Task) ([]int, error) {
	c := p.context(t)
	samples := make([]float64, len(p.a[c]))
	for s := range samples {
		samples[s] = betaSample(p.rng, p.a[c][s], p.b[c][s])
	}
	return topK(samples, t.K), nil
}

func (p *thompson) Observe(_ context.Context, t Task, choice []int, r Result) error {
	c := p.context(t)
	for _, s := range choice {
		if r.Success {
			p.a[c][s]++
		} else {
			p.b[c][s]++
		}
	}
	return nil
}

// betaSample draws from Beta(a, b) as X/(X+Y) with X ~ Gamma(a), Y ~ Gamma(b).
func betaSample(rng *rand.Rand, a, b float64) float64 {
	x, y := gammaSample(rng, a), gammaSample(rng, b)
	return x / (x + y)
}

// gammaSample draws from Gamma(shape, 1) (Marsaglia and Tsang; shape < 1
// by boosting).
func gammaSample(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaSample(rng, shape+1) * math.Pow(open01(rng.Float64()), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := open01(rng.Float64())
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
