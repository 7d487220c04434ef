package learning

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ChoiceSet is an immutable set of choices prepared for repeated thompson
// rankings (RecommendSet): an id index, and the choices grouped by their
// own use counts. A project's patterns change one at a time, so a caller
// keeps a set across many requests and passes what changed since as
// dropped ids and extra choices.
type ChoiceSet struct {
	choices   []Choice
	index     map[string]int
	groups    []choiceGroup
	groupOf   []int32
	memberPos []int32   // position of a choice in its group's members
	slots     sync.Pool // *[]int32 of len(choices), every entry free (-1)
	events    atomic.Pointer[eventIndex]
	protos    protoSlots // without, with similar tasks
}

// choiceGroup is the choices with the same success and failure counts.
type choiceGroup struct {
	successes, failures int64
	members             []int32
}

// NewChoiceSet prepares cands (ids unique) for RecommendSet.
func NewChoiceSet(cands []Choice) *ChoiceSet {
	s := &ChoiceSet{choices: cands, index: make(map[string]int, len(cands)), groupOf: make([]int32, len(cands)),
		memberPos: make([]int32, len(cands))}
	byCounts := map[[2]int64]int32{}
	for i, cd := range cands {
		s.index[cd.ID] = i
		key := [2]int64{cd.Successes, cd.Failures}
		g, ok := byCounts[key]
		if !ok {
			g = int32(len(s.groups))
			byCounts[key] = g
			s.groups = append(s.groups, choiceGroup{successes: cd.Successes, failures: cd.Failures})
		}
		s.groups[g].members = append(s.groups[g].members, int32(i))
	}
	// Canonical orders (groups by counts, members by id), so a ranking
	// does not depend on how the caller's choices were split between the
	// set and the extra ones.
	slices.SortFunc(s.groups, func(a, b choiceGroup) int {
		return cmp.Or(cmp.Compare(a.successes, b.successes), cmp.Compare(a.failures, b.failures))
	})
	for g := range s.groups {
		m := s.groups[g].members
		slices.SortFunc(m, func(a, b int32) int { return strings.Compare(cands[a].ID, cands[b].ID) })
		for k, i := range m {
			s.groupOf[i], s.memberPos[i] = int32(g), int32(k)
		}
	}
	n := len(cands)
	s.slots.New = func() any {
		sl := make([]int32, n)
		for i := range sl {
			sl[i] = slotFree
		}
		return &sl
	}
	return s
}

// setScratch is the per-request working memory of RecommendSet, pooled:
// sized by the indexed outcomes and the patterns they used, it would
// otherwise be most of a request's garbage.
type setScratch struct {
	marked []int32
	local  []*Choice
	pats   [][]int
	flat   []int
	all    []setScored
	ev     evidenceScratch
	// tailDraws
	fam      []int32
	famM     []float64
	famOrder []int32
	isFam    []bool
	gs       []setGroup
	xb       []int
}

// setGroup is a group of untouched choices in a RecommendSet request.
type setGroup struct {
	proto  setScored // the posterior every member shares (cd nil)
	lnorm  float64   // cdfBound's normaliser of the flipped proto
	s, f   int64     // the counts
	g      int32     // the set's group, or -1
	n      int32     // members available
	xb     []int     // positions excluded from the set's members (sorted when sorted)
	sorted bool
	extra  []int // extra choices in the group, by id
}

type setScored struct {
	cd          *Choice
	post        Beta
	mean, score float64
	local       float64 // similar uses
	overall     float64
}

var setScratches = sync.Pool{New: func() any { return new(setScratch) }}

// eventIndex maps the patterns of x's events to the set's choices (-1
// for none), once per index (an index is immutable: a new outcome makes a
// new one), with the local numbering of a request that drops no choice
// and adds none (see RecommendSet).
func (s *ChoiceSet) eventIndex(x *ContextIndex) *eventIndex {
	if c := s.events.Load(); c != nil && c.x == x {
		return c
	}
	idx := make([][]int32, len(x.events))
	uses := 0
	for _, e := range x.events {
		uses += len(e.Patterns)
	}
	flat := make([]int32, 0, uses)
	c := &eventIndex{x: x, idx: idx, local: make([][]int, len(x.events)), num: map[int32]int{}, unknown: map[string]bool{}}
	lflat := make([]int, 0, uses)
	for k, e := range x.events {
		from, lfrom := len(flat), len(lflat)
		for _, pid := range e.Patterns {
			i, ok := s.index[pid]
			if !ok {
				i = -1
				c.unknown[pid] = true
			} else {
				n, seen := c.num[int32(i)]
				if !seen {
					n = len(c.uniq)
					c.num[int32(i)] = n
					c.uniq = append(c.uniq, int32(i))
					c.choices = append(c.choices, &s.choices[i])
				}
				lflat = append(lflat, n)
			}
			flat = append(flat, int32(i))
		}
		idx[k] = flat[from:len(flat):len(flat)]
		c.local[k] = lflat[lfrom:len(lflat):len(lflat)]
	}
	// The member positions the used choices take from their groups, by
	// group, sorted.
	c.xbOff = make([]int32, len(s.groups)+1)
	for _, i := range c.uniq {
		c.xbOff[s.groupOf[i]+1]++
	}
	for g := range s.groups {
		c.xbOff[g+1] += c.xbOff[g]
	}
	c.xbFlat = make([]int, len(c.uniq))
	next := slices.Clone(c.xbOff[:len(s.groups)])
	for _, i := range c.uniq {
		g := s.groupOf[i]
		c.xbFlat[next[g]] = int(s.memberPos[i])
		next[g]++
	}
	for g := range s.groups {
		slices.Sort(c.xbFlat[c.xbOff[g]:c.xbOff[g+1]])
	}
	s.events.Store(c)
	return c
}

type eventIndex struct {
	x   *ContextIndex
	idx [][]int32
	// Without dropped or extra choices: local[k] are the local numbers of
	// event k's patterns, uniq the set's choices by local number (choices
	// their addresses), num the local number of a set index, unknown the
	// ids events used that are not in the set.
	local   [][]int
	uniq    []int32
	choices []*Choice
	num     map[int32]int
	unknown map[string]bool
	// xbFlat[xbOff[g]:xbOff[g+1]] are the positions in group g's members
	// of the used choices, sorted.
	xbOff  []int32
	xbFlat []int
}

// plain reports whether a request dropping dropped and adding extra
// numbers its local choices as one that drops and adds none: none of them
// is used by an indexed outcome.
func (c *eventIndex) plain(s *ChoiceSet, dropped map[string]bool, extra []Choice) bool {
	used := func(id string) bool {
		if i, ok := s.index[id]; ok {
			_, u := c.num[int32(i)]
			return u
		}
		return c.unknown[id]
	}
	for id := range dropped {
		if used(id) {
			return false
		}
	}
	for _, cd := range extra {
		if used(cd.ID) {
			return false
		}
	}
	return true
}

// Len is the number of choices in the set.
func (s *ChoiceSet) Len() int { return len(s.choices) }

// Choice returns the choice with id.
func (s *ChoiceSet) Choice(id string) (Choice, bool) {
	i, ok := s.index[id]
	if !ok {
		return Choice{}, false
	}
	return s.choices[i], true
}

const (
	slotFree    = -1 // in a group, not drawn yet
	slotDropped = -2 // replaced or removed by the caller
	slotTaken   = -3 // drawn from its group in this request
)

// RecommendSet is Recommend over the choices of set, minus the ids in
// dropped, plus extra (ids unique across both), for the thompson policy;
// other policies are answered by Recommend over the materialised choices.
//
// Its cost does not grow with the number of choices, and its output has
// the distribution of Recommend's. The argument: Recommend draws one
// number from each choice's posterior, independently, and reads the
// order. A choice that none of the indexed outcomes used has a posterior
// that depends only on its own success and failure counts (Choice.
// Successes, Failures), so the choices of a group with the same counts
// draw independent, identically distributed numbers. For such a group of
// n, the largest draws are generated directly, best first, from the
// uniform order statistics (the largest of n uniforms is V^(1/n), the next
// the previous times V^(1/(n−1)), …, with V uniform) mapped through the
// posterior's quantile function, which is increasing; and since the group
// is exchangeable, the choice that gets each draw is picked uniformly
// among the group's choices not yet drawn. A group stops generating as
// soon as its next draw cannot enter the list it belongs to (the
// recommended or the avoided, each kept to the limit): every later draw of
// the group is lower still. That comparison needs the posterior's tail
// probability at the current threshold (one CDF evaluation), not the
// quantile. The choices that outcomes used, and the extra ones, are drawn
// one by one as in Recommend, except those only tasks unlike this one used,
// which get a draw only when it can enter the list (tailDraws, see
// thompson_draw.go). Only the draws are from a different stream
// of the same seeded generator, so a request is still reproducible, and
// the quantile is computed to about 1e-12 (the draw is exact up to that
// rounding). TestRecommendSetSameDistribution and
// TestRecommendSetSameDistributionManyUsed compare the two over many seeds.
func (c Config) RecommendSet(req GuidanceRequest, set *ChoiceSet, dropped map[string]bool, extra []Choice,
	x *ContextIndex, now time.Time, seed uint64) Recommendation {
	if c.Ranking != RankingThompson {
		cands := make([]Choice, 0, len(set.choices)+len(extra))
		for _, cd := range set.choices {
			if !dropped[cd.ID] {
				cands = append(cands, cd)
			}
		}
		return c.Recommend(req, append(cands, extra...), x, now, seed)
	}
	cc := c.Context
	rec := Recommendation{Ranking: c.Ranking, Recommended: []Recommended{}, Avoid: []Recommended{}, SimilarTasks: []SimilarTask{}}
	if x == nil {
		x = NewContextIndex(nil)
	}
	slotsp := set.slots.Get().(*[]int32)
	slots := *slotsp
	sc := setScratches.Get().(*setScratch)
	marked := sc.marked[:0] // slots to free before pooling
	defer func() {
		for _, i := range marked {
			slots[i] = slotFree
		}
		set.slots.Put(slotsp)
		clear(sc.local) // drop the references before pooling
		clear(sc.all)
		sc.marked = marked
		setScratches.Put(sc)
	}()
	live := len(set.choices) + len(extra)
	for id := range dropped {
		if i, ok := set.index[id]; ok && slots[i] == slotFree {
			slots[i] = slotDropped
			marked = append(marked, int32(i))
			live--
		}
	}
	if live == 0 {
		return rec
	}
	// Local choices: those outcomes used, in the order of first use (the
	// set's and the extra ones alike); the others are drawn by groups.
	local := sc.local[:0]
	defer func() { sc.local = local }()
	extraIdx := make(map[string]int, len(extra))
	extraLocal := make([]int, len(extra))
	for j, cd := range extra {
		extraIdx[cd.ID] = j
		extraLocal[j] = -1
	}
	// setIdx[k][j] is the set's index of event k's j-th pattern (-1: none).
	ei := set.eventIndex(x)
	setIdx := ei.idx
	localOf := func(k, j int) (int, bool) {
		i := int(setIdx[k][j])
		if i < 0 || slots[i] == slotDropped {
			if len(extra) == 0 {
				return 0, false
			}
			j, ok := extraIdx[x.events[k].Patterns[j]]
			if !ok {
				return 0, false
			}
			if extraLocal[j] < 0 {
				extraLocal[j] = len(local)
				local = append(local, &extra[j])
			}
			return extraLocal[j], true
		}
		switch s := slots[i]; {
		case s >= 0:
			return int(s), true
		case s == slotDropped:
			return 0, false
		}
		slots[i] = int32(len(local))
		marked = append(marked, int32(i))
		local = append(local, &set.choices[i])
		return len(local) - 1, true
	}
	events := x.Events()
	var neighbors []Neighbor
	rec.Kind, neighbors = c.similarPast(req, x)
	var pats [][]int
	nDropped := len(marked)
	plain := ei.plain(set, dropped, extra)
	if plain {
		// The numbering cached with the index: the same as localOf's.
		pats = ei.local
		local = append(local, ei.choices...)
		marked = append(marked, ei.uniq...)
	} else {
		pats = growTo(sc.pats, len(events))
		sc.pats = pats
		uses := 0
		for _, e := range events {
			uses += len(e.Patterns)
		}
		flat := growTo(sc.flat, uses)[:0]
		for k, e := range events {
			from := len(flat)
			for j := range e.Patterns {
				if i, ok := localOf(k, j); ok {
					flat = append(flat, i)
				}
			}
			pats[k] = flat[from:len(flat):len(flat)]
		}
		sc.flat = flat
	}
	ev, kappa := c.contextEvidence(events, pats, len(local), neighbors, x, now, &sc.ev)
	type scored = setScored
	mk := func(cd *Choice, e evidence) scored { return scoreChoice(cd, e, kappa, len(neighbors) > 0) }
	// Groups of untouched choices, by their counts: the set's members
	// (ordered by id) without the used and dropped ones, and the extra
	// choices outcomes did not use. The set's groups come first, in their
	// order (by counts), then the groups of extra choices alone.
	pc := set.protoState(kappa, len(neighbors) > 0)
	gs := growTo(sc.gs, len(set.groups))
	if plain { // the used choices' positions, cached with the index
		for g, gr := range set.groups {
			xb := ei.xbFlat[ei.xbOff[g]:ei.xbOff[g+1]:ei.xbOff[g+1]]
			gs[g] = setGroup{s: gr.successes, f: gr.failures, g: int32(g), n: int32(len(gr.members) - len(xb)), xb: xb, sorted: true}
		}
		for _, i := range marked[:nDropped] {
			st := &gs[set.groupOf[i]]
			st.n--
			at := int(set.memberPos[i])
			st.xb = slices.Insert(slices.Clip(st.xb), sort.SearchInts(st.xb, at), at) // a copy
		}
	} else {
		for g, gr := range set.groups {
			gs[g] = setGroup{s: gr.successes, f: gr.failures, g: int32(g), n: int32(len(gr.members))}
		}
		// The excluded positions of each group, carved from one array.
		for _, i := range marked {
			gs[set.groupOf[i]].n--
		}
		xbFlat := growTo(sc.xb, len(marked))
		sc.xb = xbFlat
		at := 0
		for g := range gs {
			if nx := len(set.groups[g].members) - int(gs[g].n); nx > 0 {
				gs[g].xb = xbFlat[at : at : at+nx]
				at += nx
			}
		}
		for _, i := range marked {
			st := &gs[set.groupOf[i]]
			st.xb = append(st.xb, int(set.memberPos[i]))
		}
	}
	sorted := true
	for j, cd := range extra {
		if extraLocal[j] >= 0 {
			continue
		}
		k, ok := slices.BinarySearchFunc(set.groups, [2]int64{cd.Successes, cd.Failures}, func(gr choiceGroup, key [2]int64) int {
			return cmp.Or(cmp.Compare(gr.successes, key[0]), cmp.Compare(gr.failures, key[1]))
		})
		if !ok {
			k = slices.IndexFunc(gs[len(set.groups):], func(st setGroup) bool { return st.s == cd.Successes && st.f == cd.Failures })
			if k < 0 {
				k = len(gs)
				gs = append(gs, setGroup{s: cd.Successes, f: cd.Failures, g: -1})
				sorted = false
			} else {
				k += len(set.groups)
			}
		}
		gs[k].extra = append(gs[k].extra, j)
		gs[k].n++
	}
	sc.gs = gs
	if !sorted {
		slices.SortStableFunc(gs, func(a, b setGroup) int { return cmp.Or(cmp.Compare(a.s, b.s), cmp.Compare(a.f, b.f)) })
	}
	for k := range gs {
		if len(gs[k].extra) > 1 {
			slices.SortFunc(gs[k].extra, func(a, b int) int { return strings.Compare(extra[a].ID, extra[b].ID) })
		}
	}
	best := 0.0
	all := growTo(sc.all, len(local))
	sc.all = all
	for j := range local {
		all[j] = mk(local[j], ev[j])
		best = max(best, all[j].mean)
	}
	for k := range gs {
		if gs[k].n > 0 {
			if g := gs[k].g; g >= 0 {
				gs[k].proto, gs[k].lnorm = pc.protos[g], pc.lnorm[g]
			} else {
				gs[k].proto = mk(&Choice{Successes: gs[k].s, Failures: gs[k].f}, evidence{})
				gs[k].lnorm = flipLnorm(gs[k].proto.post)
			}
			best = max(best, gs[k].proto.mean)
		}
	}
	below := func(b Beta, x float64) bool {
		return b.UpperBound(cc.Explore) < x || b.CDF(x) > cc.Explore
	}
	avoid := func(s scored) bool {
		return s.post.Mean() < cc.Avoid && s.post.Evidence() >= kappa+3 && below(s.post, best)
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 10
	}
	order := func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.mean, a.mean),
			strings.Compare(a.cd.Content, b.cd.Content), strings.Compare(a.cd.ID, b.cd.ID))
	}
	rng := NewRand(seed)
	// The two lists, each the best limit by draw so far, in order.
	var lists [2][]scored // 0: recommended, 1: avoid
	listOf := func(s scored) int {
		if avoid(s) {
			return 1
		}
		return 0
	}
	// The family of local choices none of the similar tasks used (see
	// tailDraws): drawn after the others when those fill the recommended
	// list, else drawn one by one like them.
	fam, famM := sc.fam[:0], sc.famM[:0]
	inList0 := 0
	for j := range all {
		e := ev[j]
		if len(neighbors) > 0 && e.ln == 0 && e.ls == 0 && listOf(all[j]) == 0 {
			fam = append(fam, int32(j))
			m := all[j].post.Alpha / kappa // the overall mean: post = Beta(κm, κ(1−m))
			famM = append(famM, m)
			continue
		}
		if listOf(all[j]) == 0 {
			inList0++
		}
	}
	sc.fam, sc.famM = fam, famM
	thin := len(fam) > 0 && inList0 >= limit && kappa > 0
	if !thin {
		fam = fam[:0]
	}
	isFam := growTo(sc.isFam, len(all))
	sc.isFam = isFam
	clear(isFam)
	for _, j := range fam {
		isFam[j] = true
	}
	{ // the drawn one by one: select each list's head on the draws
		var parts [2][]int32
		for j := range all {
			if isFam[j] {
				continue
			}
			all[j].score = all[j].post.sampleFast(rng)
			l := listOf(all[j])
			parts[l] = append(parts[l], int32(j))
		}
		for l := range parts {
			m := min(limit, len(parts[l]))
			sortTopKeyed(parts[l], m, func(j int32) float64 { return all[j].score },
				func(a, b int32) int { return order(all[a], all[b]) })
			for _, j := range parts[l][:m] {
				lists[l] = append(lists[l], all[j])
			}
		}
	}
	push := func(l int, s scored) {
		i, _ := slices.BinarySearchFunc(lists[l], s, order)
		lists[l] = slices.Insert(lists[l], i, s)
		if len(lists[l]) > limit {
			lists[l] = lists[l][:limit]
		}
	}
	threshold := func(l int) float64 { // the limit-th best draw of list l, or -1
		if len(lists[l]) < limit {
			return -1
		}
		return lists[l][limit-1].score
	}
	if thin {
		tailDraws(rng, all, fam, famM, kappa, sc, func() float64 { return threshold(0) }, func(s scored) { push(0, s) })
	}
	boundTau, logX, log1mX := -1.0, 0.0, 0.0 // logs of 1 − τ for cdfBound
	for k := range gs {
		st := &gs[k]
		if st.n <= 0 {
			continue
		}
		proto := st.proto
		l := listOf(proto)
		sortedXB := st.sorted
		var members []int32
		if st.g >= 0 {
			members = set.groups[st.g].members
		}
		// upper tails: P(draw > x) = CDF of Beta(β, α) at 1 − x
		flip := Beta{Alpha: proto.post.Beta, Beta: proto.post.Alpha}
		logU := 0.0
		for left := int(st.n); left > 0; left-- {
			tau := threshold(l)
			v := rng.Float64()
			for v == 0 {
				v = rng.Float64()
			}
			logU += math.Log(v) / float64(left)
			tail := -math.Expm1(logU) // P(draw > this order statistic)
			if tau >= 0 {
				if tau != boundTau {
					boundTau, logX, log1mX = tau, math.Log1p(-tau), math.Log(tau)
				}
				if tail >= cdfBound(flip, st.lnorm, logX, log1mX) || tail >= flip.CDF(1-tau) {
					break // this draw, and every later one of the group, is at most tau
				}
			}
			s := proto
			s.score = 1 - flip.quantileFine(tail)
			// the member that gets it: uniform among those not drawn, by
			// rank in id order
			r := min(left-1, int(rng.Float64()*float64(left)))
			if !sortedXB { // only the groups that place a draw need it
				slices.Sort(st.xb)
				sortedXB = true
			}
			if fromSet, at := nthAvailable(members, st.xb, st.extra, r, func(i int32) string { return set.choices[i].ID },
				func(j int) string { return extra[j].ID }); fromSet {
				s.cd = &set.choices[members[at]]
				st.xb = slices.Insert(st.xb, sort.SearchInts(st.xb, at), at)
			} else {
				s.cd = &extra[st.extra[at]]
				st.extra = slices.Delete(st.extra, at, at+1)
			}
			push(l, s)
		}
	}
	for l := range lists {
		slices.SortFunc(lists[l], order)
		lists[l] = lists[l][:min(limit, len(lists[l]))]
	}
	item := func(s scored, reason string) Recommended {
		cd := s.cd
		return Recommended{ID: cd.ID, Content: cd.Content, Tags: cd.Tags, Rate: round4(s.post.Mean()),
			Interval: s.post.Interval95(), Score: round4(s.score), Similar: round4(s.local), Overall: round4(s.overall),
			Reason: reason}
	}
	for _, s := range lists[0] {
		rec.Recommended = append(rec.Recommended, item(s, rankReason(*s.cd, s.post, s.local, len(neighbors) > 0)))
	}
	for _, s := range lists[1] {
		rec.Avoid = append(rec.Avoid, item(s, avoidReason(s.post, s.local, len(neighbors) > 0)))
	}
	var top *scored
	for l := range lists {
		if len(lists[l]) > 0 && (top == nil || order(lists[l][0], *top) < 0) {
			top = &lists[l][0]
		}
	}
	if top != nil && top.post.Mean() < best-1e-12 {
		r := item(*top, drawnFirstReason(top.cd.Inverted))
		rec.Explore = &r
	}
	rec.SimilarTasks = appendSimilarTasks(rec.SimilarTasks, neighbors, events)
	return rec
}

// quantileFine is Quantile to about 1e-12 relative: bisection to 1e-3,
// then Newton steps on the CDF kept inside the bracket; in the far lower tail (a quantile under
// 1e-4, where the bisection's absolute precision is no precision at all),
// Newton steps on log CDF against log y, from the tail's asymptote
// F(y) ≈ y^α / (α·B(α, β)).
func (b Beta) quantileFine(p float64) float64 {
	if p <= 0 || p >= 1 {
		return b.Quantile(p)
	}
	lb := lbeta(b.Alpha, b.Beta)
	logDensity := func(q float64) float64 { return (b.Alpha-1)*math.Log(q) + (b.Beta-1)*math.Log1p(-q) - lb }
	lp := math.Log(p)
	// logNewton: Newton steps on log CDF against log y from t.
	logNewton := func(t float64) (float64, bool) {
		for range 50 {
			y := math.Exp(t)
			if y <= 0 || y >= 1 {
				return math.Exp(t), false
			}
			f := b.cdfLB(y, lb)
			if !(f > 0) {
				return math.Exp(t), false
			}
			// d log F / d log y = density·y / F
			g := math.Exp(logDensity(y)+t) / f
			if !(g > 0) || math.IsInf(g, 0) {
				return math.Exp(t), false
			}
			step := (math.Log(f) - lp) / g
			t -= max(-5, min(5, step))
			if math.Abs(step) < 1e-12 {
				return math.Exp(t), true
			}
		}
		return math.Exp(t), false
	}
	t := (lp + math.Log(b.Alpha) + lb) / b.Alpha // log y at the tail's asymptote
	if t < math.Log(1e-5) {                      // far in the lower tail: no bisection
		if y, ok := logNewton(t); ok && y <= 1e-4 {
			return y
		}
	}
	// Bisection to 1e-3, then Newton steps kept inside the bracket.
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-3 {
		mid := (lo + hi) / 2
		if b.cdfLB(mid, lb) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	q := (lo + hi) / 2
	for range 40 {
		f := b.cdfLB(q, lb) - p
		if f < 0 {
			lo = q
		} else {
			hi = q
		}
		next := (lo + hi) / 2
		if d := math.Exp(logDensity(q)); d > 0 && !math.IsInf(d, 0) {
			if n := q - f/d; n > lo && n < hi {
				next = n
			}
		}
		step := next - q
		q = next
		if math.Abs(step) < 1e-14*q || hi-lo < 1e-15*q {
			break
		}
	}
	if q > 1e-4 {
		return q
	}
	if t > math.Log(1e-4) {
		t = math.Log(q + 1e-300)
	}
	y, _ := logNewton(t)
	return y
}

// cdfLB is CDF given lb = lbeta(α, β) (quantileFine evaluates it many
// times for one distribution).
func (b Beta) cdfLB(x, lb float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	a, c := b.Alpha, b.Beta
	front := math.Exp(-lb + a*math.Log(x) + c*math.Log1p(-x))
	if x < (a+1)/(a+c+2) {
		return front * betaCF(a, c, x) / a
	}
	return 1 - front*betaCF(c, a, 1-x)/c
}

// nthAvailable finds the r-th (from 0) of the available members of a
// group in id order: members (the set's, by id) without the positions in
// xb (sorted), merged with extra (by id). It returns whether it is one of
// members (and its position there) or of extra (its index in extra).
// Its cost is in the excluded and extra ones, not in the members.
func nthAvailable(members []int32, xb []int, extra []int, r int, memberID func(int32) string, extraID func(int) string) (bool, int) {
	excludedIn := func(lo, hi int) int { return sort.SearchInts(xb, hi) - sort.SearchInts(xb, lo) }
	nth := func(lo, t int) int { // the t-th available position from lo
		p := lo + t
		for _, x := range xb[sort.SearchInts(xb, lo):] {
			if x > p {
				break
			}
			p++
		}
		return p
	}
	pos, cnt := 0, 0
	for e, j := range extra {
		id := extraID(j)
		q := sort.Search(len(members), func(k int) bool { return memberID(members[k]) >= id })
		if avail := q - pos - excludedIn(pos, q); cnt+avail > r {
			return true, nth(pos, r-cnt)
		} else {
			cnt += avail
		}
		pos = q
		if cnt == r {
			return false, e
		}
		cnt++
	}
	return true, nth(pos, r-cnt)
}

// growTo returns s with length n, reusing its array when it is large
// enough (the contents are not cleared).
func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// sampleFast is Sample with the shape-below-one boost computed as
// exp(log u / a) rather than u^(1/a) (the same number up to rounding, a
// third of the cost); the generator is used in the same way.
func (b Beta) sampleFast(r *Rand) float64 {
	x, y := r.gammaFast(b.Alpha), r.gammaFast(b.Beta)
	if x+y == 0 {
		return b.Mean()
	}
	return x / (x + y)
}

func (r *Rand) gammaFast(shape float64) float64 {
	if shape <= 0 || shape >= 1 {
		return r.gamma(shape)
	}
	u := r.Float64()
	for u == 0 {
		u = r.Float64()
	}
	return r.gamma(shape+1) * math.Exp(math.Log(u)/shape)
}
