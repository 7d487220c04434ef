package learning

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"time"
)

// Ranking policies of plan guidance (Config.Ranking).
const (
	// RankingSeed ranks by the seed's maturity: base score × the maturity
	// multiplier, anti-patterns and deprecated patterns excluded, the same
	// ranking for every task.
	RankingSeed = "seed"
	// RankingBayes ranks by the posterior mean of each pattern's success
	// rate in the task's context (similar past tasks, shrunk toward the
	// project's evidence) and suggests one pattern to explore: the most
	// uncertain one that could still be the best.
	RankingBayes = "bayes"
	// RankingThompson ranks by a draw from each pattern's posterior in the
	// task's context (Thompson sampling): strategies that could be the best
	// are tried in proportion to that chance, so learning never stops and
	// recovers when rates drift.
	RankingThompson = "thompson"
)

// Rankings lists the ranking policies.
var Rankings = []string{RankingThompson, RankingBayes, RankingSeed}

// ContextConfig tunes task-conditioned ranking (the bayes and thompson
// policies; the seed policy ignores it).
type ContextConfig struct {
	// Neighbors is the number of most similar past tasks that inform a
	// ranking (default 500).
	Neighbors int `toml:"neighbors" json:"neighbors"`
	// MinSimilarity is the least weight (see Sharpness) of a past task to
	// count as similar (default 0.01).
	MinSimilarity float64 `toml:"min_similarity" json:"min_similarity"`
	// PriorStrength is how many observations the project's overall
	// evidence is worth against similar tasks': with few similar tasks, a
	// pattern's rate is the project's. 0 (the default) estimates it from
	// the project's outcomes (autoPriorStrength: pooled where kinds of
	// task do not differ, local where they do); before there are two
	// kinds of task with evidence it is 2.
	PriorStrength float64 `toml:"prior_strength" json:"prior_strength"`
	// UseHalfLife is the number of later uses of a pattern after which a
	// use counts half (default 20; 0 disables): recent results weigh more,
	// so a strategy whose success rate drifts is re-ranked within tens of
	// tasks, not after its history decays in days.
	UseHalfLife float64 `toml:"use_half_life" json:"use_half_life"`
	// ProjectHalfLife is the number of later outcomes in the project after
	// which an outcome counts half (default 0: off). Unlike UseHalfLife it
	// ages the evidence of patterns nobody uses any more, so a pattern
	// judged bad long ago becomes uncertain again and is re-tried.
	ProjectHalfLife float64 `toml:"project_half_life" json:"project_half_life"`
	// ChangeThreshold turns on change detection per pattern (0 disables):
	// when the likelihood ratio, in nats, of a change of a pattern's
	// success rate at some past use against no change exceeds it, the
	// pattern's uses before the change count ChangeDiscount times (see
	// context_change.go).
	ChangeThreshold float64 `toml:"change_threshold" json:"change_threshold"`
	// ChangeDiscount is the factor on a pattern's uses before a detected
	// change, in [0, 1] (0 forgets them).
	ChangeDiscount float64 `toml:"change_discount" json:"change_discount"`
	// Credit is how an outcome of several patterns is shared: "blame"
	// (default) attributes it to each pattern by its likelihood under the
	// current estimates, so a good strategy paired with a bad one is not
	// marked down as much as the bad one; "equal" gives every pattern the
	// whole outcome; "and" assumes a task succeeds when all its patterns
	// work; "residual" leaves the partners' share out (credit.go); "joint"
	// fits all patterns' rates at once (credit_joint.go).
	Credit string `toml:"credit" json:"credit"`
	// CreditIterations is the number of credit-assignment steps (default
	// 1; 0 is 1): each re-shares the outcomes by the rates the previous
	// step estimated (expectation-maximisation). More steps bring a good
	// pattern's rate closer to its own when it is used with bad ones, at
	// one more pass over the indexed outcomes each; not the default, as
	// it did not measurably raise success in kaizen sim (docs/learning.md,
	// "Credit assignment"). Not used with equal credit.
	CreditIterations int `toml:"credit_iterations" json:"credit_iterations"`
	// History bounds the past outcomes kept for ranking (default 5000, the
	// newest).
	History int `toml:"history" json:"history"`
	// Sharpness is the exponent of a description's cosine similarity in
	// how much a past task counts (default 2): a task with the same
	// description counts fully, one sharing a few words barely. A past task
	// sharing a tag with the task at hand counts fully.
	Sharpness float64 `toml:"sharpness" json:"sharpness"`
	// Explore is the upper quantile that decides whether a pattern is worth
	// trying to learn more about (default 0.9).
	Explore float64 `toml:"explore" json:"explore"`
	// Avoid is the posterior mean under which a pattern with enough evidence
	// in this context is listed to avoid (default 0.35).
	Avoid float64 `toml:"avoid" json:"avoid"`
	// InferKind turns on task kinds inferred from descriptions (default
	// true): a past task of the same kind (InferKind: migration, ui, api,
	// bugfix, …) counts KindWeight (default 1) even when the two
	// descriptions share no word, and one of a different kind counts
	// CrossKind (default 0.25) times its word similarity.
	InferKind  bool    `toml:"infer_kind" json:"infer_kind"`
	KindWeight float64 `toml:"kind_weight" json:"kind_weight"`
	CrossKind  float64 `toml:"cross_kind" json:"cross_kind"`
}

// fixedPriorStrength is the prior strength before the project's outcomes
// can tell how much kinds of task differ (and the default before auto).
const fixedPriorStrength = 2

// DefaultContextConfig is the default of task-conditioned ranking.
func DefaultContextConfig() ContextConfig {
	return ContextConfig{Neighbors: 500, MinSimilarity: 0.01, PriorStrength: 0, UseHalfLife: 20, ChangeThreshold: 0, ChangeDiscount: 0.1, Credit: "blame", CreditIterations: 1,
		History: 5000, Sharpness: 2, Explore: 0.9, Avoid: 0.35, InferKind: true, KindWeight: 1, CrossKind: 0.25}
}

// validate checks the context configuration.
func (c ContextConfig) validate() error {
	switch {
	case c.Neighbors < 1:
		return &ConfigError{"context.neighbors", c.Neighbors, "must be at least 1"}
	case c.MinSimilarity < 0 || c.MinSimilarity >= 1 || math.IsNaN(c.MinSimilarity):
		return &ConfigError{"context.min_similarity", c.MinSimilarity, "must be in [0, 1)"}
	case !(c.PriorStrength >= 0) || math.IsInf(c.PriorStrength, 0):
		return &ConfigError{"context.prior_strength", c.PriorStrength, "must be >= 0 (0: estimated from the project's outcomes)"}
	case c.UseHalfLife < 0 || math.IsNaN(c.UseHalfLife) || math.IsInf(c.UseHalfLife, 0):
		return &ConfigError{"context.use_half_life", c.UseHalfLife, "must be >= 0 (0 disables)"}
	case c.ProjectHalfLife < 0 || math.IsNaN(c.ProjectHalfLife) || math.IsInf(c.ProjectHalfLife, 0):
		return &ConfigError{"context.project_half_life", c.ProjectHalfLife, "must be >= 0 (0 disables)"}
	case !(c.ChangeThreshold >= 0) || math.IsInf(c.ChangeThreshold, 0):
		return &ConfigError{"context.change_threshold", c.ChangeThreshold, "must be >= 0 (0 disables)"}
	case !(c.ChangeDiscount >= 0 && c.ChangeDiscount <= 1):
		return &ConfigError{"context.change_discount", c.ChangeDiscount, "must be in [0, 1]"}
	case !slices.Contains(Credits, c.Credit):
		return &ConfigError{"context.credit", c.Credit, `must be "blame", "equal", "and" or "residual"`}
	case c.CreditIterations < 0 || c.CreditIterations > 20:
		return &ConfigError{"context.credit_iterations", c.CreditIterations, "must be in [0, 20] (0 is 1)"}
	case c.History < 1:
		return &ConfigError{"context.history", c.History, "must be at least 1"}
	case !(c.Sharpness >= 0) || math.IsInf(c.Sharpness, 0):
		return &ConfigError{"context.sharpness", c.Sharpness, "must be >= 0"}
	case !(c.Explore > 0.5 && c.Explore < 1):
		return &ConfigError{"context.explore", c.Explore, "must be in (0.5, 1)"}
	case !(c.Avoid >= 0 && c.Avoid < 1):
		return &ConfigError{"context.avoid", c.Avoid, "must be in [0, 1)"}
	case !(c.KindWeight >= 0 && c.KindWeight <= 1):
		return &ConfigError{"context.kind_weight", c.KindWeight, "must be in [0, 1]"}
	case !(c.CrossKind >= 0 && c.CrossKind <= 1):
		return &ConfigError{"context.cross_kind", c.CrossKind, "must be in [0, 1]"}
	}
	return nil
}

// Choice is a pattern plan guidance may recommend: one of the choices a ranking orders.
type Choice struct {
	ID      string   `json:"id"`
	Content string   `json:"content"`
	Tags    []string `json:"tags,omitempty"`
	// Inverted marks a pattern the seed's rule turned into an
	// anti-pattern (project-wide); Deprecated one whose maturity is
	// deprecated. In this task's context it may still be good.
	Inverted   bool `json:"inverted,omitempty"`
	Deprecated bool `json:"deprecated,omitempty"`
	// Successes and Failures are the pattern's own use counts: its
	// overall evidence when none of its uses is among the indexed outcomes
	// (uses older than context.history, or recorded without an outcome).
	Successes int64 `json:"successes,omitempty"`
	Failures  int64 `json:"failures,omitempty"`
}

// Recommended is a pattern in a recommendation, with its estimated success
// rate for this task and the evidence behind it.
type Recommended struct {
	ID      string   `json:"id"`
	Content string   `json:"content"`
	Tags    []string `json:"tags,omitempty"`
	// Rate is the posterior mean success rate in this task's context, and
	// Interval its 95 % credible interval.
	Rate     float64    `json:"rate"`
	Interval [2]float64 `json:"interval"`
	// Score is what ranked it (a posterior draw under thompson, the mean
	// under bayes).
	Score float64 `json:"score"`
	// Similar and Overall are the (decayed, credited) uses behind the rate:
	// in similar past tasks and in the whole project.
	Similar float64 `json:"similar_uses"`
	Overall float64 `json:"overall_uses"`
	// Reason says why it is here, for a person.
	Reason string `json:"reason"`
}

// SimilarTask is a past task behind a recommendation.
type SimilarTask struct {
	OutcomeID  string   `json:"outcome_id"`
	TaskID     string   `json:"bead_id"`
	Task       string   `json:"task"`
	Similarity float64  `json:"similarity"`
	Success    bool     `json:"success"`
	Patterns   []string `json:"patterns"`
}

// Recommendation is the machine-usable part of plan guidance: the
// strategies to use for this task, best first, one to explore, the ones to
// avoid here, and the past tasks behind it.
type Recommendation struct {
	Ranking string `json:"ranking"`
	// Kind is the task kind inferred from the description (InferKind),
	// empty when none is clear or kinds are off (context.infer_kind).
	Kind        string        `json:"kind,omitempty"`
	Recommended []Recommended `json:"recommended"`
	// Explore is a strategy worth trying to learn more (nil when none is).
	Explore *Recommended `json:"explore,omitempty"`
	// Avoid lists the strategies likely to fail for this task (at most the
	// request's limit, like Recommended).
	Avoid        []Recommended `json:"avoid"`
	SimilarTasks []SimilarTask `json:"similar_tasks"`
}

// Recommend ranks candidates for the task at hand from the indexed past
// outcomes (the bayes and thompson policies). seed makes a thompson
// ranking reproducible (the same request at the same instant draws the
// same).
func (c Config) Recommend(req GuidanceRequest, cands []Choice, x *ContextIndex, now time.Time, seed uint64) Recommendation {
	cc := c.Context
	rec := Recommendation{Ranking: c.Ranking, Recommended: []Recommended{}, Avoid: []Recommended{}, SimilarTasks: []SimilarTask{}}
	if len(cands) == 0 {
		return rec
	}
	if x == nil {
		x = NewContextIndex(nil)
	}
	events := x.Events()
	var neighbors []Neighbor
	rec.Kind, neighbors = c.similarPast(req, x)
	index := make(map[string]int, len(cands))
	for i, cd := range cands {
		index[cd.ID] = i
	}
	// Per event, once: the candidates it used.
	pats := make([][]int, len(events))
	uses := 0
	for _, e := range events {
		uses += len(e.Patterns)
	}
	flat := make([]int, 0, uses) // one array behind every event's list
	for k, e := range events {
		from := len(flat)
		for _, pid := range e.Patterns {
			if i, ok := index[pid]; ok {
				flat = append(flat, i)
			}
		}
		pats[k] = flat[from:len(flat):len(flat)]
	}
	esc := evidenceScratches.Get().(*evidenceScratch)
	defer evidenceScratches.Put(esc)
	ev, kappa := c.contextEvidence(events, pats, len(cands), neighbors, x, now, esc)
	var rng *Rand
	if c.Ranking == RankingThompson {
		rng = NewRand(seed)
	}
	type scored struct {
		i           int
		post        Beta
		mean, score float64
	}
	all := make([]scored, len(cands))
	for i, cd := range cands {
		overall := Beta{Alpha: ev[i].s + 1, Beta: ev[i].n - ev[i].s + 1}
		if ev[i].n == 0 && cd.Successes+cd.Failures > 0 {
			// none of its uses is indexed: its own counts are the evidence
			ev[i].s, ev[i].n = float64(cd.Successes), float64(cd.Successes+cd.Failures)
			overall = Beta{Alpha: ev[i].s + 1, Beta: ev[i].n - ev[i].s + 1}
		}
		post := overall
		if len(neighbors) > 0 {
			m := overall.Mean()
			post = Beta{Alpha: kappa*m + ev[i].ls, Beta: kappa*(1-m) + ev[i].ln - ev[i].ls}
		}
		sc := post.Mean()
		if rng != nil {
			sc = post.Sample(rng)
		}
		all[i] = scored{i: i, post: post, mean: post.Mean(), score: sc}
	}
	order := func(a, b scored) int { // a total order: the ids are unique
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.mean, a.mean),
			strings.Compare(cands[a.i].Content, cands[b.i].Content), strings.Compare(cands[a.i].ID, cands[b.i].ID))
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	// Only the head of the order is usually read: sort it, and the rest
	// only if the loop below gets there.
	sorted := min(len(all), 4*limit+2)
	sortTopKeyed(all, sorted, func(s scored) float64 { return s.score }, order)
	item := func(s scored, reason string) Recommended {
		cd := cands[s.i]
		return Recommended{ID: cd.ID, Content: cd.Content, Tags: cd.Tags, Rate: round4(s.post.Mean()),
			Interval: s.post.Interval95(), Score: round4(s.score), Similar: round4(ev[s.i].ln), Overall: round4(ev[s.i].n),
			Reason: reason}
	}
	best := 0.0 // the best posterior mean (all is ordered by draw under thompson)
	for _, s := range all {
		best = max(best, s.post.Mean())
	}
	// below says whether a pattern's upper quantile is under x, computing
	// the exact quantile only when the cheap bound cannot tell.
	below := func(b Beta, x float64) bool {
		return b.UpperBound(cc.Explore) < x || b.CDF(x) > cc.Explore // quantile < x ⇔ CDF(x) > p
	}
	avoid := func(s scored) bool {
		return s.post.Mean() < cc.Avoid && s.post.Evidence() >= kappa+3 && below(s.post, best)
	}
	take := func(s scored) {
		local := ev[s.i].ln
		switch {
		case avoid(s):
			if len(rec.Avoid) < limit {
				rec.Avoid = append(rec.Avoid, item(s, avoidReason(s.post, local, len(neighbors) > 0)))
			}
		case len(rec.Recommended) < limit:
			rec.Recommended = append(rec.Recommended, item(s, rankReason(cands[s.i], s.post, local, len(neighbors) > 0)))
		}
	}
	full := func() bool { return len(rec.Recommended) >= limit && len(rec.Avoid) >= limit }
	for _, s := range all[:sorted] {
		if full() {
			break
		}
		take(s)
	}
	if tail := all[sorted:]; !full() && len(tail) > 0 {
		if len(rec.Recommended) < limit {
			slices.SortFunc(tail, order)
		} else {
			// Only the ones to avoid are still wanted: order those few,
			// not the whole tail (thousands of patterns).
			var few []scored
			for _, s := range tail {
				if avoid(s) {
					few = append(few, s)
				}
			}
			slices.SortFunc(few, order)
			tail = few
		}
		for _, s := range tail {
			if full() {
				break
			}
			take(s)
		}
	}
	// Under bayes, suggest the most promising uncertain pattern outside the
	// top two: one whose upper bound exceeds the best mean.
	if c.Ranking == RankingBayes {
		top := min(2, len(all))
		// The exact quantile is computed in the order of the cheap bound,
		// until the bound cannot beat the best quantile found.
		type bounded struct {
			k  int
			ub float64
		}
		order := make([]bounded, 0, len(all)-top)
		for k := top; k < len(all); k++ {
			if ub := all[k].post.UpperBound(cc.Explore); ub > best {
				order = append(order, bounded{k, ub})
			}
		}
		slices.SortStableFunc(order, func(a, b bounded) int { return cmp.Compare(b.ub, a.ub) })
		var pick *scored
		bar := best // the upper quantile to beat
		for _, o := range order {
			if o.ub <= bar {
				break
			}
			if post := all[o.k].post; post.CDF(bar) < cc.Explore { // its quantile is above bar
				pick, bar = &all[o.k], post.Quantile(cc.Explore)
			}
		}
		if pick != nil {
			r := item(*pick, fmt.Sprintf("worth trying to learn more: its rate could be up to %.0f%% (%.0f%% quantile)",
				100*bar, 100*cc.Explore))
			rec.Explore = &r
		}
	} else if rng != nil && len(all) > 0 && all[0].post.Mean() < best-1e-12 {
		// Thompson drew a less proven pattern first: that is exploration.
		r := item(all[0], drawnFirstReason(cands[all[0].i].Inverted))
		rec.Explore = &r
	}
	rec.SimilarTasks = appendSimilarTasks(rec.SimilarTasks, neighbors, events)
	return rec
}

func rankReason(cd Choice, b Beta, local float64, contextual bool) string {
	var parts []string
	if contextual && local > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% success in %.1f similar uses", 100*b.Mean(), local))
	} else {
		parts = append(parts, fmt.Sprintf("%.0f%% estimated success", 100*b.Mean()))
	}
	switch {
	case cd.Inverted && contextual && local > 0:
		parts = append(parts, "an anti-pattern project-wide, but not for tasks like this one")
	case cd.Inverted:
		parts = append(parts, "an anti-pattern project-wide")
	}
	return strings.Join(parts, "; ")
}

func avoidReason(b Beta, local float64, contextual bool) string {
	if contextual && local > 0 {
		return fmt.Sprintf("%.0f%% success in %.1f similar uses", 100*b.Mean(), local)
	}
	return fmt.Sprintf("%.0f%% estimated success", 100*b.Mean())
}

// RequestSeed derives the seed of a thompson ranking from the request and
// the instant, so that a request is reproducible and two requests differ
// (the project is left out: two projects in the same state answer the same
// request alike).
func RequestSeed(req GuidanceRequest, now time.Time) uint64 {
	h := fnv.New64a()
	h.Write([]byte(req.Task + "\x00" + req.TaskID + "\x00" + strings.Join(req.Tags, ",")))
	return h.Sum64() ^ uint64(now.UnixNano())
}

// excerptLine cuts s to at most n runes on one line.
func excerptLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ChoicesOf are the patterns a task-conditioned ranking orders: every
// pattern but the anti-patterns themselves; an inverted or deprecated
// pattern stays a choice (it may be good for tasks like this one) and says
// so.
func (c Config) ChoicesOf(views []PatternView) []Choice {
	out := make([]Choice, 0, len(views)+len(Strategies))
	known := map[string]bool{}
	for _, v := range views {
		if v.Pattern.Kind == KindAntiPattern {
			continue
		}
		out = append(out, Choice{ID: v.Pattern.ID, Content: v.Pattern.Content, Tags: v.Pattern.Tags,
			Inverted: v.Pattern.AntiPatternID != "", Deprecated: v.Maturity.State == Deprecated,
			Successes: v.Pattern.SuccessCount, Failures: v.Pattern.FailureCount})
		for _, tag := range v.Pattern.Tags {
			known[tag] = true
		}
	}
	for _, st := range Strategies {
		if !known[st.Tag()] {
			out = append(out, Choice{ID: st.Tag(), Content: st.LabelFor(c.Locale), Tags: []string{st.Tag()}})
		}
	}
	return out
}

// Contextualize attaches a task-conditioned recommendation to guidance.
// A project-wide judgement (an anti-pattern, a deprecated pattern) is
// lifted for this task only on evidence from similar tasks: when the
// ranking recommends the pattern from similar past uses, it is one of the
// ranked choices (its reason says it is an anti-pattern project-wide);
// without such evidence the seed's judgement stands and is shown as the
// seed states it. The anti-pattern records themselves are unchanged.
func (g *Guidance) Contextualize(rec Recommendation) {
	g.Recommendation = rec
	lifted := map[string]bool{}
	for _, r := range rec.Recommended {
		if r.Similar > 0 {
			lifted[r.ID] = true
		}
	}
	if rec.Explore != nil {
		lifted[rec.Explore.ID] = true // suggested for a re-test
	}
	g.AntiPatterns = slices.DeleteFunc(g.AntiPatterns, func(a AntiPatternView) bool { return lifted[a.SourceID] && !a.Mentioned })
	g.Excluded = slices.DeleteFunc(g.Excluded, func(p RankedPattern) bool { return lifted[p.ID] && !p.Mentioned })
}

// SeedRecommendation is the recommendation of the seed ranking: the ranked
// patterns in the seed's order (their rate is the seed's base score, their
// interval the Wilson interval of their success count), and the
// anti-patterns' sources and deprecated patterns to avoid.
func SeedRecommendation(g Guidance) Recommendation {
	rec := Recommendation{Ranking: RankingSeed, Recommended: []Recommended{}, Avoid: []Recommended{}, SimilarTasks: []SimilarTask{}}
	for _, p := range g.Patterns {
		rec.Recommended = append(rec.Recommended, Recommended{ID: p.ID, Content: p.Content, Tags: p.Tags,
			Rate: round4(p.BaseScore), Interval: p.SuccessCI95, Score: round4(p.FinalScore),
			Overall: round4(p.DecayedHelpful + p.DecayedHarmful), Reason: p.Label})
	}
	for _, a := range g.AntiPatterns {
		rec.Avoid = append(rec.Avoid, Recommended{ID: a.SourceID, Content: a.Content, Reason: a.Reason})
	}
	for _, p := range g.Excluded {
		rec.Avoid = append(rec.Avoid, Recommended{ID: p.ID, Content: p.Content, Tags: p.Tags, Reason: p.Label,
			Interval: p.SuccessCI95})
	}
	return rec
}
