package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
)

// The informed policies are REFERENCE learners, not product policies: they
// are given strictly more information than any real agent, to measure what
// is reachable by learning alone (issue 11). Like bandit-family they are
// told each task's family; in addition, after each task they observe every
// chosen strategy's OWN Bernoulli success, drawn from the hidden rate of
// that (family, strategy) at that task with the policy's own random stream
// (semi-bandit feedback, no shared blame). They are scored like every other
// policy, on the task's outcome drawn by the runner from the tape; the
// feedback draws are extra information, not their score. A real agent sees
// one outcome per task, shared by all the strategies it used, and does not
// know the family.
//
//	informed             Beta(1,1) per (family, strategy), Thompson sampling
//	informed-discounted  the same, a (family, strategy) posterior's counts
//	                     discounted by InformedDiscount at each of its own
//	                     observations (a sliding memory, for drifts)
//	informed-pooled      the same, each (family, strategy) prior centred on
//	                     the strategy's success in the other families,
//	                     worth InformedPool observations (shares what is
//	                     common to families; hurts when families differ)
//	informed-ucb         UCB1 per family on the same feedback (deterministic
//	                     choice; the feedback draws still use the stream)
//	informed-full        full information: after each task it observes
//	                     EVERY strategy's own draw for the task's family,
//	                     not only the chosen ones', and takes the K best
//	                     posterior means (nothing left to explore). No
//	                     learner that learns from draws of the rates, with
//	                     no prior knowledge of them, is given more; it
//	                     bounds what estimation alone can reach.
//	informed-full-discounted
//	                     the same, counts discounted by InformedDiscount
//	                     at each observation (every strategy is observed at
//	                     each task of its family, so this is a memory of
//	                     about 33 tasks of the family), to follow drifts
//
// Env.Rates is read only in Observe, for the feedback draws of the task
// just observed (its family and number); Choose never reads it.

// InformedDiscount is informed-discounted's factor per observation: an
// observation of a (family, strategy) followed by n more of the same pair
// weighs InformedDiscount^n (an effective memory of about 1/(1−0.97) ≈ 33
// observations of the pair). Only the observed strategies are discounted:
// discounting every strategy of the family at each of its tasks (the
// textbook discounted Thompson sampling) pulls the unplayed ones back to
// the Beta(1,1) prior, whose samples then keep beating the best one's
// (measured: 79 % of the oracle on task-dependent against 87 %; it chose
// the best of one clear strategy in only 70 % of the last 100 tasks).
const InformedDiscount = 0.97

// InformedPool is informed-pooled's prior weight in observations: the
// prior of a (family, strategy) is Beta(InformedPool·μ, InformedPool·(1−μ))
// with μ the strategy's posterior mean over the other families' own
// draws (Beta(1,1) pooled). 4 was picked from 2, 4, 8 and 16 (6 seeds ×
// 500 tasks, on an earlier version whose μ also counted the family's own
// draws): more helps stable-global and hurts task-dependent and
// sparse-families. Final: stable-global 92.5 % of the oracle against 87.2 %
// unpooled, task-dependent 81.4 % against 87.0 %.
const InformedPool = 4

// informed learns per (family, strategy) from per-strategy feedback.
type informed struct {
	rng   *rand.Rand
	rates func(family, task int) []float64
	// discount < 1 decays the family's counts toward the prior at each of
	// its tasks; ucb chooses by UCB1 instead of Thompson sampling.
	discount float64
	ucb      bool
	// pool > 0 centres each (family, strategy) prior on the strategy's
	// success in the other families, with pool pseudo-observations.
	pool float64
	// full observes every strategy and chooses by posterior mean.
	full bool
	// a, b are the Beta posteriors' parameters (prior 1, 1); n counts the
	// family's tasks (for UCB1's log term).
	a, b [][]float64
	n    []float64
}

// informedConfig selects a variant: no field set is plain informed.
type informedConfig struct {
	discount float64 // < 1: informed-discounted
	ucb      bool    // informed-ucb
	pool     float64 // > 0: informed-pooled
	full     bool    // informed-full
}

func newInformed(env Env, c informedConfig) *informed {
	nf, ns := len(env.World.Families), len(env.World.Strategies)
	if c.discount <= 0 {
		c.discount = 1
	}
	p := &informed{rng: env.Rand, rates: env.Rates, discount: c.discount, ucb: c.ucb, pool: c.pool, full: c.full,
		a: make([][]float64, nf), b: make([][]float64, nf), n: make([]float64, nf)}
	for f := range nf {
		p.a[f], p.b[f] = make([]float64, ns), make([]float64, ns)
		for s := range ns {
			p.a[f][s], p.b[f][s] = 1, 1
		}
	}
	return p
}

func (p *informed) Choose(_ context.Context, t Task) ([]int, error) {
	a, b := p.a[t.Family], p.b[t.Family]
	score := make([]float64, len(a))
	for s := range score {
		if p.full {
			score[s] = a[s] / (a[s] + b[s])
		} else if p.ucb {
			// UCB1 on the observations (the prior's two pseudo-counts
			// excluded); an unobserved strategy goes first.
			k := a[s] + b[s] - 2
			if k < 1e-9 {
				score[s] = math.Inf(1)
				continue
			}
			score[s] = (a[s]-1)/k + math.Sqrt(2*math.Log(max(p.n[t.Family], 1))/k)
		} else if p.pool > 0 {
			ga, gb := 0.0, 0.0
			for f := range p.a {
				if f != t.Family {
					ga, gb = ga+p.a[f][s]-1, gb+p.b[f][s]-1
				}
			}
			mu := (ga + 1) / (ga + gb + 2)
			score[s] = betaSample(p.rng, a[s]-1+p.pool*mu, b[s]-1+p.pool*(1-mu))
		} else {
			score[s] = betaSample(p.rng, a[s], b[s])
		}
	}
	return topK(score, t.K), nil
}

// Observe ignores the task's outcome and learns from each chosen
// strategy's own success, drawn from its hidden rate at the task.
func (p *informed) Observe(_ context.Context, t Task, choice []int, _ Result) error {
	f := t.Family
	a, b := p.a[f], p.b[f]
	p.n[f]++
	rates := p.rates(f, t.Number)
	if p.full {
		choice = make([]int, len(a))
		for s := range choice {
			choice[s] = s
		}
	}
	for _, s := range choice {
		if p.discount < 1 {
			a[s] = 1 + p.discount*(a[s]-1)
			b[s] = 1 + p.discount*(b[s]-1)
		}
		if p.rng.Float64() < rates[s] {
			a[s]++
		} else {
			b[s]++
		}
	}
	return nil
}

// IsReference reports whether a policy name is a reference learner given
// more information than any agent (the informed policies); reports label
// them so.
func IsReference(name string) bool {
	return name == "informed" || strings.HasPrefix(name, "informed-")
}
