package learning

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// PatternView is a pattern with its maturity evaluated at an instant. The
// pattern is referenced, not copied: views are built for every pattern of
// a project on each plan, and the patterns are not modified.
type PatternView struct {
	Pattern  *Pattern     `json:"pattern"`
	Maturity MaturityEval `json:"maturity"`
}

// MaturityLabel is the seed's bracketed status of a pattern in prompts, from
// raw evidence counts. A manual state is always shown (the peer shows
// "LIMITED DATA" even for a deprecated pattern).
func MaturityLabel(v PatternView, manualReason string) string {
	m := v.Maturity
	n := m.HelpfulCount + m.HarmfulCount
	pct := func(k int64) int64 {
		if n == 0 {
			return 0
		}
		return int64(math.Round(float64(k) / float64(n) * 100))
	}
	switch {
	case m.State == Deprecated && m.Manual:
		return fmt.Sprintf("[DEPRECATED - %s]", oneLine(manualReason))
	case m.State == Deprecated:
		return fmt.Sprintf("[DEPRECATED - %d%% harmful, avoid using]", pct(m.HarmfulCount))
	case m.State == Proven && m.Manual && n < 3:
		return "[PROVEN - promoted by validation]"
	case n < 3:
		s := "s"
		if n == 1 {
			s = ""
		}
		return fmt.Sprintf("[LIMITED DATA - %d observation%s]", n, s)
	case m.State == Candidate:
		return fmt.Sprintf("[CANDIDATE - %d observations, needs more data]", n)
	case m.State == Established:
		return fmt.Sprintf("[ESTABLISHED - %d%% helpful, %d%% harmful from %d observations]", pct(m.HelpfulCount), pct(m.HarmfulCount), n)
	default:
		return fmt.Sprintf("[PROVEN - %d%% helpful from %d observations]", pct(m.HelpfulCount), n)
	}
}

// FormatPatternsWithMaturity renders patterns grouped by state in the order
// proven, established, candidate, deprecated. Anti-patterns are left out
// (see FormatAntiPatterns). It returns "" when there is nothing to show.
func FormatPatternsWithMaturity(views []PatternView) string {
	sections := []struct {
		state MaturityState
		title string
	}{
		{Proven, "### Proven patterns (prefer these)"},
		{Established, "### Established patterns"},
		{Candidate, "### Candidate patterns (limited evidence)"},
		{Deprecated, "### Deprecated patterns (do not use)"},
	}
	var b strings.Builder
	for _, s := range sections {
		var lines []string
		for _, v := range views {
			if v.Pattern.Kind == KindAntiPattern || v.Maturity.State != s.state {
				continue
			}
			lines = append(lines, fmt.Sprintf("- %s %s", oneLine(v.Pattern.Content), MaturityLabel(v, "")))
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "%s\n\n%s\n\n", s.title, strings.Join(lines, "\n"))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "## Pattern Maturity\n\n" + strings.TrimRight(b.String(), "\n") + "\n"
}

// FormatAntiPatterns renders anti-patterns for a decomposition prompt, or ""
// when there are none.
func FormatAntiPatterns(antis []Pattern) string {
	var lines []string
	for _, p := range antis {
		if p.Kind == KindAntiPattern {
			lines = append(lines, "- "+oneLine(p.Content))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "## Anti-Patterns to Avoid\n\nBased on past failures, avoid these decomposition strategies:\n\n" +
		strings.Join(lines, "\n") + "\n"
}

// RankedPattern is a pattern's place in plan guidance with every number
// that placed it there.
type RankedPattern struct {
	ID             string        `json:"id"`
	Content        string        `json:"content"`
	Label          string        `json:"label"`
	State          MaturityState `json:"state"`
	Manual         bool          `json:"manual"`
	BaseScore      float64       `json:"base_score"`
	Multiplier     float64       `json:"multiplier"`
	FinalScore     float64       `json:"final_score"`
	DecayedHelpful float64       `json:"decayed_helpful"`
	DecayedHarmful float64       `json:"decayed_harmful"`
	HelpfulCount   int64         `json:"helpful_count"`
	HarmfulCount   int64         `json:"harmful_count"`
	NeutralCount   int64         `json:"neutral_count"`
	SuccessCount   int64         `json:"success_count"`
	FailureCount   int64         `json:"failure_count"`
	SuccessRate    float64       `json:"success_rate"`
	SuccessCI95    [2]float64    `json:"success_ci95"`
	Mentioned      bool          `json:"mentioned"`
	Tags           []string      `json:"tags"`
}

// BaseScore is the Beta(1,1) posterior mean of decayed helpful against
// decayed harmful evidence: 0.5 with no evidence, approaching the helpful
// share as evidence accumulates, and lower for patterns whose evidence has
// decayed away.
func BaseScore(decayedHelpful, decayedHarmful float64) float64 {
	return (decayedHelpful + 1) / (decayedHelpful + decayedHarmful + 2)
}

// Wilson95 is the Wilson score interval of k successes in n trials at 95 %
// confidence; [0, 1] when n is 0.
func Wilson95(k, n int64) [2]float64 {
	if n <= 0 {
		return [2]float64{0, 1}
	}
	const z = 1.959963984540054
	fn, p := float64(n), float64(k)/float64(n)
	den := 1 + z*z/fn
	center := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return [2]float64{max(0, center-half), min(1, center+half)}
}

// Rank scores one pattern view.
func Rank(v PatternView, manualReason string) RankedPattern {
	m, p := v.Maturity, v.Pattern
	if p == nil {
		p = &Pattern{}
	}
	r := RankedPattern{
		ID: p.ID, Content: p.Content, Label: MaturityLabel(v, manualReason),
		State: m.State, Manual: m.Manual,
		BaseScore: BaseScore(m.DecayedHelpful, m.DecayedHarmful), Multiplier: m.Multiplier,
		DecayedHelpful: m.DecayedHelpful, DecayedHarmful: m.DecayedHarmful,
		HelpfulCount: m.HelpfulCount, HarmfulCount: m.HarmfulCount, NeutralCount: m.NeutralCount,
		SuccessCount: p.SuccessCount, FailureCount: p.FailureCount,
		SuccessCI95: Wilson95(p.SuccessCount, p.Observations()),
		Tags:        p.Tags,
	}
	r.FinalScore = float64(r.BaseScore * r.Multiplier)
	if n := p.Observations(); n > 0 {
		r.SuccessRate = float64(p.SuccessCount) / float64(n)
	}
	return r
}

// GuidanceRequest is what a planner asks for.
type GuidanceRequest struct {
	Project string `json:"project"`
	// Task describes the task or the planned decomposition; strategies it
	// mentions are flagged, and warnings raised for anti-patterns.
	Task string `json:"task,omitempty"`
	// TaskID selects the open errors to include.
	TaskID string `json:"bead_id,omitempty"`
	// Tags say what kind of task it is (e.g. "migration", "bugfix"): past
	// tasks with the same tags weigh most in the ranking.
	Tags []string `json:"tags,omitempty"`
	// Kind is the kind of task (one of TaskKinds); empty: inferred from
	// Task (InferKind). Past tasks of the same kind count as similar.
	Kind string `json:"kind,omitempty"`
	// Limit bounds the ranked patterns (default 10).
	Limit int `json:"limit,omitempty"`
	// Mentioned, when not nil, holds ExtractPatterns(Task), extracted once
	// by a caller that needed it before building guidance (the guidance
	// index finds the mentioned patterns with it); nil: BuildGuidance
	// extracts it.
	Mentioned []Extracted `json:"-"`
}

// MentionedStrategies is ExtractPatterns(req.Task), taken from
// req.Mentioned when the caller already extracted it.
func (req GuidanceRequest) MentionedStrategies() []Extracted {
	if req.Mentioned != nil || req.Task == "" {
		return req.Mentioned
	}
	return ExtractPatterns(req.Task)
}

// AntiPatternView is an anti-pattern in guidance.
type AntiPatternView struct {
	ID           string `json:"id"`
	Content      string `json:"content"`
	Reason       string `json:"reason"`
	SourceID     string `json:"source_id"`
	SuccessCount int64  `json:"success_count"`
	FailureCount int64  `json:"failure_count"`
	Mentioned    bool   `json:"mentioned"`
}

// Guidance is the structured plan guidance of the learning system.
type Guidance struct {
	Project      string            `json:"project"`
	Task         string            `json:"task,omitempty"`
	TaskID       string            `json:"bead_id,omitempty"`
	At           time.Time         `json:"at"`
	Patterns     []RankedPattern   `json:"patterns"`
	Excluded     []RankedPattern   `json:"excluded"`
	AntiPatterns []AntiPatternView `json:"anti_patterns"`
	Mentioned    []Extracted       `json:"mentioned_strategies"`
	Warnings     []string          `json:"warnings"`
	Criteria     []CriterionWeight `json:"criteria"`
	OpenErrors   []ErrorEntry      `json:"open_errors"`
	ErrorContext string            `json:"error_context,omitempty"`
	// Sections holds extra markdown sections contributed by other
	// subsystems (heuristics, skills), rendered after the patterns.
	Sections []GuidanceSection `json:"sections,omitempty"`
	// Recommendation is the machine-usable advice for this task: the
	// strategies to use, best first, with their estimated rates and
	// intervals, one to explore, the ones to avoid here, and the similar
	// past tasks behind them (its fields appear at the top level in JSON).
	Recommendation
}

// GuidanceSection is a titled markdown block added to guidance.
type GuidanceSection struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// BuildGuidance ranks the pattern views and assembles guidance. views holds
// the non-anti patterns with their maturity; antis the anti-patterns;
// manualReasons maps pattern id to the reason of a manual state.
//
// Patterns, excluded patterns and anti-patterns are each capped at the
// request's limit (best first; anti-patterns mentioned by the task first),
// and only those are fully materialised, so guidance stays fast with tens
// of thousands of patterns.
func (c Config) BuildGuidance(req GuidanceRequest, views []PatternView, manualReasons map[string]string,
	antis []Pattern, criteria []CriterionWeight, openErrors []ErrorEntry, now time.Time) Guidance {
	g := Guidance{Project: req.Project, Task: req.Task, TaskID: req.TaskID, At: now,
		Patterns: []RankedPattern{}, Excluded: []RankedPattern{}, AntiPatterns: []AntiPatternView{},
		Mentioned: []Extracted{}, Warnings: []string{}, Criteria: criteria, OpenErrors: openErrors}
	if g.Criteria == nil {
		g.Criteria = []CriterionWeight{}
	}
	if g.OpenErrors == nil {
		g.OpenErrors = []ErrorEntry{}
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	if req.Task != "" {
		g.Mentioned = nil // a task that names no strategy: none (null)
		if m := req.MentionedStrategies(); len(m) > 0 {
			g.Mentioned = m
		}
	}
	mentioned := newMentionMatcher(g.Mentioned)

	type candidate struct {
		i               int
		final, evidence float64
	}
	order := func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.final, a.final), cmp.Compare(b.evidence, a.evidence),
			strings.Compare(views[a.i].Pattern.Content, views[b.i].Pattern.Content))
	}
	ranked, excluded := newTopK(limit, order), newTopK(limit, order)
	for i, v := range views {
		if v.Pattern.Kind == KindAntiPattern || v.Pattern.AntiPatternID != "" {
			continue // inverted patterns are shown through their anti-pattern
		}
		m := v.Maturity
		cand := candidate{i: i, final: float64(BaseScore(m.DecayedHelpful, m.DecayedHarmful) * m.Multiplier),
			evidence: m.DecayedHelpful + m.DecayedHarmful}
		if m.Multiplier == 0 {
			excluded.add(cand)
			if mentioned.match(v.Pattern) {
				label := MaturityLabel(v, manualReasons[v.Pattern.ID])
				g.Warnings = append(g.Warnings, fmt.Sprintf("Your plan uses %q, which is deprecated %s.", v.Pattern.Content, label))
			}
			continue
		}
		ranked.add(cand)
	}
	for _, cand := range ranked.best {
		r := Rank(views[cand.i], manualReasons[views[cand.i].Pattern.ID])
		r.Mentioned = mentioned.match(views[cand.i].Pattern)
		g.Patterns = append(g.Patterns, r)
	}
	for _, cand := range excluded.best {
		r := Rank(views[cand.i], manualReasons[views[cand.i].Pattern.ID])
		r.Mentioned = mentioned.match(views[cand.i].Pattern)
		g.Excluded = append(g.Excluded, r)
	}

	var sources map[string]*Pattern // only needed to match anti-patterns by their source
	if mentioned.any() && len(antis) > 0 {
		sources = map[string]*Pattern{}
		for _, v := range views {
			if v.Pattern.AntiPatternID != "" {
				sources[v.Pattern.ID] = v.Pattern
			}
		}
	}
	top := newTopK(limit, func(a, b AntiPatternView) int {
		return cmp.Or(-cmp.Compare(b2i(a.Mentioned), b2i(b.Mentioned)), cmp.Compare(b.FailureCount, a.FailureCount),
			strings.Compare(a.Content, b.Content))
	})
	for i := range antis {
		a := &antis[i]
		av := AntiPatternView{ID: a.ID, Content: a.Content, Reason: a.Reason, SourceID: a.SourceID,
			SuccessCount: a.SuccessCount, FailureCount: a.FailureCount, Mentioned: mentioned.match(a)}
		if src, ok := sources[a.SourceID]; ok && !av.Mentioned {
			av.Mentioned = mentioned.match(src)
		}
		if av.Mentioned {
			g.Warnings = append(g.Warnings, fmt.Sprintf("Your plan uses an anti-pattern: %s", oneLine(a.Content)))
		}
		top.add(av)
	}
	g.AntiPatterns = append(g.AntiPatterns, top.best...)
	g.ErrorContext = ErrorContext(openErrors, false)
	return g
}

// topK keeps the k best elements added so far, in order, without storing
// the others: a bounded insertion, O(k) memory and O(n) time in practice
// (guidance limits are tens).
type topK[T any] struct {
	k     int
	order func(a, b T) int
	best  []T
}

func newTopK[T any](k int, order func(a, b T) int) *topK[T] {
	return &topK[T]{k: k, order: order}
}

func (t *topK[T]) add(x T) {
	if len(t.best) == t.k && t.order(x, t.best[t.k-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(t.best, x, t.order)
	t.best = slices.Insert(t.best, i, x)
	if len(t.best) > t.k {
		t.best = t.best[:t.k]
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mentionMatcher recognises the patterns of the strategies a task
// mentions: by their strategy tag (every pattern created from a strategy
// carries it), or, for an untagged pattern, by its content equal to a
// label up to case and a trailing period.
type mentionMatcher struct {
	tags   map[string]bool
	labels []string
}

func newMentionMatcher(ex []Extracted) mentionMatcher {
	m := mentionMatcher{tags: map[string]bool{}}
	for _, e := range ex {
		m.tags[e.Tag()] = true
		m.labels = append(m.labels, e.Label, e.LabelZH)
	}
	return m
}

func (m mentionMatcher) any() bool { return len(m.tags) > 0 }

func (m mentionMatcher) match(p *Pattern) bool {
	if !m.any() {
		return false
	}
	for _, t := range p.Tags {
		if m.tags[t] {
			return true
		}
	}
	content := strings.TrimRight(strings.TrimSpace(p.Content), ".。")
	for _, l := range m.labels {
		if len(content) == len(l) && strings.EqualFold(content, l) {
			return true
		}
	}
	return false
}

// Markdown renders guidance for a planning prompt. The framing presents it
// as evidence from past outcomes, to be weighed rather than obeyed.
func (g Guidance) Markdown() string {
	var b strings.Builder
	b.WriteString("## Learned guidance\n\n")
	b.WriteString("_Evidence from past outcomes in this project, to weigh when planning; it is not an instruction._\n")
	g.recommendationMarkdown(&b)
	if len(g.Patterns) > 0 {
		b.WriteString("\n### Decomposition patterns, best first\n\n")
		for i, p := range g.Patterns {
			mark := ""
			if p.Mentioned {
				mark = " (in your plan)"
			}
			fmt.Fprintf(&b, "%d. %s %s%s: score %.2f (base %.2f × %.1f %s)\n",
				i+1, oneLine(p.Content), p.Label, mark, p.FinalScore, p.BaseScore, p.Multiplier, p.State)
		}
	}
	var antis []Pattern
	for _, a := range g.AntiPatterns {
		antis = append(antis, Pattern{Kind: KindAntiPattern, Content: a.Content})
	}
	if s := FormatAntiPatterns(antis); s != "" {
		b.WriteString("\n" + demote(s))
	}
	if len(g.Excluded) > 0 {
		b.WriteString("\n### Excluded patterns\n\n")
		for _, p := range g.Excluded {
			fmt.Fprintf(&b, "- %s %s\n", oneLine(p.Content), p.Label)
		}
	}
	if len(g.Warnings) > 0 {
		b.WriteString("\n### About your plan\n\n")
		for _, w := range g.Warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	var crit []string
	for _, c := range g.Criteria {
		if c.HelpfulCount+c.HarmfulCount == 0 {
			continue
		}
		note := ""
		if c.Deprecated {
			note = " (deprecated: too often harmful)"
		}
		crit = append(crit, fmt.Sprintf("- %s: weight %.2f%s", c.Criterion, c.Weight, note))
	}
	if len(crit) > 0 && criteriaInform(g.Criteria) {
		b.WriteString("\n### Evaluation criteria weights\n\n" + strings.Join(crit, "\n") + "\n")
	}
	for _, s := range g.Sections {
		if strings.TrimSpace(s.Body) != "" {
			fmt.Fprintf(&b, "\n### %s\n\n%s\n", s.Title, strings.TrimRight(s.Body, "\n"))
		}
	}
	if g.ErrorContext != "" {
		b.WriteString("\n" + demote(g.ErrorContext))
	}
	if len(g.Patterns) == 0 && len(g.AntiPatterns) == 0 && len(g.Excluded) == 0 && g.ErrorContext == "" && len(g.Sections) == 0 {
		b.WriteString("\nNo learned patterns yet for this project: record outcomes to build them.\n")
	}
	return b.String()
}

// criteriaInform reports whether criterion weights say anything a planner
// can use: not when every criterion with evidence has the same weight
// (every outcome judged them alike, so they rank nothing).
func criteriaInform(cs []CriterionWeight) bool {
	first, seen := 0.0, false
	for _, c := range cs {
		if c.HelpfulCount+c.HarmfulCount == 0 {
			continue
		}
		w := math.Round(c.Weight*100) / 100
		if !seen {
			first, seen = w, true
		} else if w != first {
			return true
		}
	}
	return false
}

// RecommendationMarkdown is the "Recommended for this task" section alone
// (empty under the seed ranking or before any evidence), for a prompt that
// gets the ranking without the rest of the guidance.
func (g Guidance) RecommendationMarkdown() string {
	var b strings.Builder
	g.recommendationMarkdown(&b)
	return b.String()
}

// recommendationMarkdown renders a task-conditioned recommendation: the
// strategies for this task with their estimated rates and intervals, the
// one worth exploring, those to avoid here, and what it is based on.
func (g Guidance) recommendationMarkdown(b *strings.Builder) {
	if g.Ranking == "" || g.Ranking == RankingSeed || !slices.ContainsFunc(g.Recommended, func(r Recommended) bool {
		return r.Similar > 0 || r.Overall > 0
	}) {
		return // nothing learned yet: no evidence to show
	}
	b.WriteString("\n### Recommended for this task\n\n")
	if g.Kind != "" {
		fmt.Fprintf(b, "Task kind (inferred from the description): %s.\n", g.Kind)
	}
	switch n := len(g.SimilarTasks); {
	case n == 0:
		b.WriteString("No similar past task yet: the rates are the project's overall evidence.\n\n")
	default:
		fmt.Fprintf(b, "Based on %d similar past task(s), e.g. %q, and the project's overall evidence.\n\n",
			n, oneLine(g.SimilarTasks[0].Task))
	}
	// The lines are for a reader: the strategies with evidence, by their
	// estimated rate (the JSON keeps the ranking's order, a draw under
	// thompson); those more likely to fail than not join the ones to avoid.
	var good, bad []Recommended
	for _, r := range g.Recommended {
		switch {
		case r.Similar == 0 && r.Overall == 0:
			continue // no evidence at all: not worth a line
		case r.Rate < 0.5:
			bad = append(bad, r)
		default:
			good = append(good, r)
		}
	}
	slices.SortStableFunc(good, func(a, b Recommended) int { return cmp.Compare(b.Rate, a.Rate) })
	for i, r := range good[:min(len(good), 5)] {
		fmt.Fprintf(b, "%d. %s: %s (95%% interval %.0f–%.0f%%)\n", i+1, oneLine(r.Content),
			r.Reason, 100*r.Interval[0], 100*r.Interval[1])
	}
	if g.Explore != nil {
		fmt.Fprintf(b, "\nWorth trying to learn more: %s (%s).\n", oneLine(g.Explore.Content), g.Explore.Reason)
	}
	var names []string
	seen := map[string]bool{}
	for _, a := range append(slices.Clone(g.Avoid), bad...) {
		if !seen[a.ID] && (g.Explore == nil || g.Explore.ID != a.ID) {
			seen[a.ID] = true
			names = append(names, fmt.Sprintf("%s (%.0f%%)", oneLine(a.Content), 100*a.Rate))
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(b, "\nLikely to fail for tasks like this one: %s.\n", strings.Join(names, "; "))
	}
}

// demote moves every markdown heading of s one level down, so a block
// written as a document fits under the guidance's own heading.
func demote(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			lines[i] = "#" + l
		}
	}
	return strings.Join(lines, "\n")
}
