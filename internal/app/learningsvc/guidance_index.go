package learningsvc

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// guidanceBase indexes a pattern base for plan guidance so that a request
// evaluates the maturity of a few patterns, not of every one.
//
// The argument: at any instant t after the index time at (at ≥ every
// event time of an indexed record), both decayed sums of a pattern are
// their values at `at` times the same factor d = 2^(−(t−at)/half-life) ≤ 1.
// So its harmful ratio is constant after `at`, its totals only shrink, and
//
//   - its base score (h·d+1)/((h+x)·d+2) lies between ½ and its value at
//     `at`: at most max(base(at), ½);
//   - its multiplier can only fall (proven → established → candidate) as
//     the totals shrink, except that a deprecated pattern may fall back to
//     candidate (0.5); a manual state is fixed;
//   - its evidence (decayed total) is at most its value at `at`, and a
//     pattern not deprecated at `at` never becomes so (its ratio is fixed,
//     its total only falls).
//
// The ranked patterns are kept in the order of that upper bound of their
// final score, the possibly deprecated ones in the order of their evidence
// bound. A request walks each order, evaluates the patterns exactly (the
// same evaluation as before) and stops when the next bound is below the
// limit-th best exact value found: no pattern further down can enter the
// top, ties included (a pattern whose bound equals the threshold is still
// evaluated). Guidance is then built from the patterns walked, the
// patterns changed since the base (the overlay), those with events after
// `at`, the ones the task mentions and, when anti-patterns are matched by
// their source, the inverted ones — in the store's order, so the output is
// the output over every pattern.
type guidanceBase struct {
	at     time.Time
	ranked *boundOrder // non-anti, non-inverted patterns, by score bound
	excl   *boundOrder // patterns that may be deprecated, by evidence bound
	// always are evaluated on every request: records with events after at.
	always   []int32
	inverted []int32
	antis    []int32
	// mention indexes patterns by the hash of each tag and of the
	// lower-cased content (the strategies a task mentions are found by
	// either; a hash collision only adds a pattern that guidance then
	// finds not mentioned).
	mention mentionIndex
}

type bounded struct {
	pos   int32
	bound float64
}

// boundSlack absorbs floating-point differences between the index's
// arithmetic and the exact evaluation: bounds only ever err upward.
const boundSlack = 1 + 1e-9

func mentionKey(content string) uint64 {
	k := strings.TrimRight(strings.TrimSpace(content), ".。")
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return keyHash(strings.ToLower(k))
		}
	}
	// ASCII: lower-cased while hashing, as keyHash(strings.ToLower(k))
	h := uint64(fnvOffset)
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// FNV-1a, 64 bits (hash/fnv's New64a without its allocation).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func keyHash(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func (s *Service) buildGuidanceBase(rows []patternRow, at time.Time) *guidanceBase {
	mc := s.lc.Maturity
	g := &guidanceBase{at: at}
	mention := make([]mentionEntry, 0, len(rows))
	var ranked, excl []bounded
	for i := range rows {
		pos, r := int32(i), &rows[i]
		for _, t := range r.tags {
			mention = append(mention, mentionEntry{keyHash(t), pos})
		}
		if strings.TrimSpace(r.content) != "" {
			mention = append(mention, mentionEntry{mentionKey(r.content), pos})
		}
		switch {
		case r.kind == learning.KindAntiPattern:
			g.antis = append(g.antis, pos)
			continue
		case r.inverted:
			g.inverted = append(g.inverted, pos)
			continue
		case refTime(r.hRef).After(at) || refTime(r.xRef).After(at):
			g.always = append(g.always, pos)
			continue
		}
		h, x := r.helpful().At(at, mc.HalfLifeDays), r.harmful().At(at, mc.HalfLifeDays)
		var mult float64
		switch {
		case r.manual != "":
			mult = r.manual.Multiplier()
		case h*boundSlack >= mc.MinHelpful-mc.Epsilon:
			mult = 1.5
		case (h+x)*boundSlack >= mc.MinFeedback-mc.Epsilon:
			mult = 1
		default:
			mult = 0.5
		}
		if mult > 0 {
			ranked = append(ranked, bounded{pos, mult * max(learning.BaseScore(h, x), 0.5) * boundSlack})
		}
		total := h + x
		maybeDeprecated := r.manual == learning.Deprecated
		if r.manual == "" && total > 0 && total*boundSlack >= mc.MinFeedback-mc.Epsilon &&
			x/total*boundSlack > mc.DeprecationThreshold {
			maybeDeprecated = true
			// a computed deprecation may lift back to candidate later
			ranked = append(ranked, bounded{pos, 0.5 * max(learning.BaseScore(h, x), 0.5) * boundSlack})
		}
		if maybeDeprecated {
			excl = append(excl, bounded{pos, total * boundSlack})
		}
	}
	g.ranked, g.excl = newBoundOrder(ranked), newBoundOrder(excl)
	g.mention = newMentionIndex(mention)
	return g
}

// guidance returns the base's guidance index, built at now on first use.
func (b *patternBase) guidance(s *Service, now time.Time) *guidanceBase {
	b.gmu.Lock()
	defer b.gmu.Unlock()
	// The bounds are tight at the index time and loosen as the evidence
	// decays (every total shrinks toward nothing, every base score toward
	// ½): the index is rebuilt once it is a sixteenth of a half-life old.
	if b.g == nil || now.Sub(b.g.at).Hours()/24 > s.lc.Maturity.HalfLifeDays/16 {
		// a minute early, so that a request whose clock reads slightly
		// earlier than the one that built it is still answered
		b.g = s.buildGuidanceBase(b.rows, now.Add(-indexLead))
	}
	return b.g
}

// indexLead is how long before the request that builds it an index is
// dated.
const indexLead = time.Minute

// kthBest keeps the k largest values seen (k is a guidance limit: tens).
type kthBest struct {
	k    int
	vals []float64 // descending
}

func (t *kthBest) add(v float64) {
	if len(t.vals) == t.k && v <= t.vals[t.k-1] {
		return
	}
	i, _ := slices.BinarySearchFunc(t.vals, v, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	t.vals = slices.Insert(t.vals, i, v)
	if len(t.vals) > t.k {
		t.vals = t.vals[:t.k]
	}
}

// prunes reports whether a bound cannot reach the top: the top is full and
// the bound is below its last value.
func (t *kthBest) prunes(bound float64) bool {
	return len(t.vals) == t.k && bound < t.vals[t.k-1]
}

// guidanceViews evaluates the patterns guidance needs at now: those that
// can be among the limit best ranked or excluded, those the task mentions,
// the changed ones and the inverted ones when anti-patterns are matched by
// their source (see guidanceBase). ok is false when now precedes the
// index's time; the caller then evaluates every pattern.
func (s *Service) guidanceViews(ctx context.Context, tx store.Tx, snap *cachedProject, in PlanInput, now time.Time,
	views []learning.PatternView) (ps patternSet, ok bool, err error) {
	g := snap.base.guidance(s, now)
	if now.Before(g.at) {
		return patternSet{}, false, nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 10
	}
	base := snap.base
	rows := base.rows
	type pick struct {
		order int // base position, or len(base)+i for the i-th added pattern
		rec   *store.PatternRecord
	}
	picked := map[int]bool{}
	var picks []pick
	stale := func(pos int) bool { _, ok := snap.overlay[rows[pos].id]; return ok }
	record := func(pos int) (*store.PatternRecord, error) { return base.record(ctx, tx, in.Project, int32(pos)) }
	add := func(pos int) error {
		if !picked[pos] && !stale(pos) {
			r, err := record(pos)
			if err != nil {
				return err
			}
			picked[pos] = true
			picks = append(picks, pick{pos, r})
		}
		return nil
	}
	var antis []pick // in the store's order, as BuildGuidance reports them
	for i, id := range snap.added {
		picks = append(picks, pick{len(rows) + i, snap.overlay[id]})
	}
	for id, r := range snap.overlay {
		if pos, ok := base.pos(id); ok {
			picked[int(pos)] = true
			picks = append(picks, pick{int(pos), r})
		}
	}
	for _, p := range picks {
		if p.rec.Pattern.Kind == learning.KindAntiPattern {
			antis = append(antis, p)
		}
	}
	for _, pos := range g.antis {
		if !stale(int(pos)) {
			r, err := record(int(pos))
			if err != nil {
				return patternSet{}, false, err
			}
			antis = append(antis, pick{int(pos), r})
		}
	}
	for _, pos := range g.always {
		if err := add(int(pos)); err != nil {
			return patternSet{}, false, err
		}
	}
	if mentioned := in.MentionedStrategies(); len(mentioned) > 0 {
		for _, e := range mentioned {
			for _, k := range []string{e.Tag(), strings.ToLower(e.Label), strings.ToLower(e.LabelZH)} {
				if k == "" {
					continue
				}
				if err := g.mention.each(keyHash(k), func(pos int32) error { return add(int(pos)) }); err != nil {
					return patternSet{}, false, err
				}
			}
		}
		if len(antis) > 0 { // anti-patterns are matched by their source too
			for _, pos := range g.inverted {
				if err := add(int(pos)); err != nil {
					return patternSet{}, false, err
				}
			}
		}
	}
	ps = patternSet{views: views, reasons: map[string]string{}}
	evals := make(map[int]learning.MaturityEval, len(picks)+4*limit)
	eval := func(order int, r *store.PatternRecord) (learning.MaturityEval, error) {
		if ev, ok := evals[order]; ok {
			return ev, nil
		}
		ev, err := s.evaluate(ctx, tx, r.Maturity, now)
		if err != nil {
			return ev, err
		}
		evals[order] = ev
		return ev, nil
	}
	ranked, excluded := &kthBest{k: limit}, &kthBest{k: limit}
	consider := func(order int, r *store.PatternRecord) error {
		if r.Pattern.Kind == learning.KindAntiPattern || r.Pattern.AntiPatternID != "" {
			return nil
		}
		ev, err := eval(order, r)
		if err != nil {
			return err
		}
		if ev.Multiplier == 0 {
			excluded.add(ev.DecayedHelpful + ev.DecayedHarmful)
		} else {
			ranked.add(learning.BaseScore(ev.DecayedHelpful, ev.DecayedHarmful) * ev.Multiplier)
		}
		return nil
	}
	for _, p := range picks {
		if err := consider(p.order, p.rec); err != nil {
			return patternSet{}, false, err
		}
	}
	for _, walk := range []struct {
		order *boundOrder
		top   *kthBest
	}{{g.ranked, ranked}, {g.excl, excluded}} {
		for i := range walk.order.len() {
			b := walk.order.at(i)
			if walk.top.prunes(b.bound) {
				break
			}
			pos := int(b.pos)
			if stale(pos) {
				continue
			}
			if picked[pos] {
				continue // already counted
			}
			r, err := record(pos)
			if err != nil {
				return patternSet{}, false, err
			}
			picked[pos] = true
			picks = append(picks, pick{pos, r})
			if err := consider(pos, r); err != nil {
				return patternSet{}, false, err
			}
		}
	}
	slices.SortFunc(picks, func(a, b pick) int { return a.order - b.order })
	for _, p := range picks {
		r := p.rec
		if r.Pattern.Kind == learning.KindAntiPattern {
			continue
		}
		ev, err := eval(p.order, r)
		if err != nil {
			return patternSet{}, false, err
		}
		ps.views = append(ps.views, learning.PatternView{Pattern: &r.Pattern, Maturity: ev})
		if r.Maturity.ManualReason != "" {
			ps.reasons[r.Pattern.ID] = r.Maturity.ManualReason
		}
	}
	slices.SortFunc(antis, func(a, b pick) int { return a.order - b.order })
	for _, a := range antis {
		ps.antis = append(ps.antis, a.rec.Pattern)
	}
	return ps, true, nil
}

// choiceSet is the thompson ranking's view of a base: its choices (every
// pattern but the anti-patterns, and the seed's strategies no pattern
// carries the tag of) and how many patterns carry each strategy tag.
type choiceSet struct {
	set        *learning.ChoiceSet
	strategies map[string]int
}

// choices returns the base's choice set, built on first use.
func (b *patternBase) choices(s *Service) *choiceSet {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	if b.cs == nil {
		cs := &choiceSet{set: learning.NewChoiceSet(s.choicesOfRows(b.rows)), strategies: map[string]int{}}
		for i := range b.rows {
			countStrategies(cs.strategies, b.rows[i].kind, b.rows[i].tags, 1)
		}
		b.cs = cs
	}
	return b.cs
}

// choicesOfRows is learning.Config.ChoicesOf over rows (the views of a
// base's patterns carry no maturity, so no choice is marked deprecated).
func (s *Service) choicesOfRows(rows []patternRow) []learning.Choice {
	out := make([]learning.Choice, 0, len(rows)+len(learning.Strategies))
	known := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		if r.kind == learning.KindAntiPattern {
			continue
		}
		out = append(out, learning.Choice{ID: r.id, Content: r.content, Tags: r.tags[:len(r.tags):len(r.tags)],
			Inverted: r.inverted, Successes: r.succ, Failures: r.fail})
		for _, tag := range r.tags {
			known[tag] = true
		}
	}
	for _, st := range learning.Strategies {
		if !known[st.Tag()] {
			out = append(out, learning.Choice{ID: st.Tag(), Content: st.LabelFor(s.lc.Locale), Tags: []string{st.Tag()}})
		}
	}
	return out
}

func countStrategies(counts map[string]int, kind learning.PatternKind, tags []string, delta int) {
	if kind == learning.KindAntiPattern || len(tags) == 0 {
		return
	}
	for _, tag := range strategyTags() {
		if slices.Contains(tags, tag) {
			counts[tag] += delta
		}
	}
}

// strategyTags are the tags of learning.Strategies.
var strategyTags = sync.OnceValue(func() []string {
	tags := make([]string, len(learning.Strategies))
	for i, st := range learning.Strategies {
		tags[i] = st.Tag()
	}
	return tags
})

// recommend is the task-conditioned recommendation over the snapshot's
// patterns: the base's choice set, with the patterns changed since
// replaced (learning.RecommendSet).
func (s *Service) recommend(snap *cachedProject, in PlanInput, idx *learning.ContextIndex, now time.Time) learning.Recommendation {
	cs := snap.base.choices(s)
	var dropped map[string]bool
	var extra []learning.Choice
	if len(snap.overlay) > 0 {
		dropped = map[string]bool{}
		counts := maps.Clone(cs.strategies)
		var views []learning.PatternView
		for id, r := range snap.overlay {
			if pos, ok := snap.base.pos(id); ok {
				dropped[id] = true
				countStrategies(counts, snap.base.rows[pos].kind, snap.base.rows[pos].tags, -1)
			}
			countStrategies(counts, r.Pattern.Kind, r.Pattern.Tags, 1)
			views = append(views, learning.PatternView{Pattern: &r.Pattern})
		}
		for _, c := range s.lc.ChoicesOf(views) {
			if _, ok := snap.overlay[c.ID]; ok {
				extra = append(extra, c)
			}
		}
		for _, st := range learning.Strategies {
			tag := st.Tag()
			_, inSet := cs.set.Choice(tag)
			inSet = inSet && cs.strategies[tag] == 0 // the set's choice is the strategy's own
			switch {
			case inSet && counts[tag] > 0:
				dropped[tag] = true
			case !inSet && counts[tag] == 0:
				extra = append(extra, learning.Choice{ID: tag, Content: st.LabelFor(s.lc.Locale), Tags: []string{tag}})
			}
		}
	}
	return s.lc.RecommendSet(in, cs.set, dropped, extra, idx, now, learning.RequestSeed(in, now))
}
