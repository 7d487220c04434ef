package learning

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

// Task-conditioned evidence. A strategy excellent for migrations may be
// poor for bugfixes: plan guidance ranks strategies for the task at hand
// from the outcomes of similar past tasks (by the words of their
// descriptions and their tags), shrunk toward the project's overall
// evidence when few similar tasks exist.

// ContextEvent is one past outcome as evidence for ranking: what the task
// was, which patterns it used, and whether it succeeded.
type ContextEvent struct {
	OutcomeID string    `json:"outcome_id"`
	TaskID    string    `json:"bead_id"`
	Task      string    `json:"task,omitempty"`
	Tags      []string  `json:"tags,omitempty"`
	Patterns  []string  `json:"patterns"`
	Success   bool      `json:"success"`
	At        time.Time `json:"at"`
	// terms are the words of the event's description with their
	// frequency weight; tags its normalised tags.
	terms []indexedTerm
	tags  []string
	kind  string // InferKind(Task)
}

type contextTerm struct {
	term string
	tf   float64
}

// indexedTerm is a term of an indexed event by its id in the index's
// vocabulary.
type indexedTerm struct {
	id int32
	tf float64
}

// contextTerms are the words of a task's description: its full-text
// tokens with a log-scaled frequency, sorted by term.
func contextTerms(task string) []contextTerm {
	counts := map[string]float64{}
	for _, tok := range tokenize.Tokenize(task) {
		counts[tok]++
	}
	out := make([]contextTerm, 0, len(counts))
	for t, n := range counts {
		out = append(out, contextTerm{t, 1 + math.Log(n)})
	}
	slices.SortFunc(out, func(a, b contextTerm) int { return strings.Compare(a.term, b.term) })
	return out
}

// normTags lower-cases, trims, sorts and deduplicates tags.
func normTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ContextIndex holds the past outcomes a project's guidance learns from,
// oldest first, with the document frequency of their terms. It is built
// once and extended by Add; a reader never sees it change (Add returns a
// new index sharing the old events).
//
// Terms are interned: the vocabulary maps a term to an id, and the
// document frequencies are a slice by id, so a similarity search does
// array lookups, not string hashing, per term of every event. The
// vocabulary only grows (a term whose events left the window keeps its
// id with a zero frequency); it is shared by the versions of an index
// and guarded by a lock, since Add of a new version may run while a
// reader searches an older one.
type ContextIndex struct {
	events []ContextEvent
	df     []int32
	vocab  *vocabulary
	// stats are derived once per version, at its first search.
	statsOnce sync.Once
	stats     *indexStats
	// auto is the estimated prior strength (AutoPriorStrength).
	autoOnce sync.Once
	auto     float64
	// decay is the events' age weights at the newest event (contextEvidence).
	decay atomic.Pointer[decayBase]
}

// indexStats are what a similarity search needs of an index version: the
// idf of every term, the TF-IDF norm of every event, and the events of
// every term (postings), so that a search touches only the events that
// share a word with the task.
type indexStats struct {
	idf      []float64
	norm     []float64
	postings map[int32][]posting
	// tagged lists the events of each normalised tag, in index order.
	tagged map[string][]int32
}

// posting is an event containing a term, with the term's TF-IDF weight in it.
type posting struct {
	event int32
	w     float64
}

func (x *ContextIndex) getStats() *indexStats {
	x.statsOnce.Do(func() {
		st := &indexStats{idf: make([]float64, len(x.df)), norm: make([]float64, len(x.events)),
			postings: make(map[int32][]posting, len(x.df)), tagged: map[string][]int32{}}
		for id, df := range x.df {
			st.idf[id] = x.idf(df)
		}
		for i, e := range x.events {
			n := 0.0
			for _, t := range e.terms {
				w := t.tf * st.idf[t.id]
				n += w * w
				st.postings[t.id] = append(st.postings[t.id], posting{int32(i), w})
			}
			st.norm[i] = math.Sqrt(n)
			for _, t := range e.tags {
				st.tagged[t] = append(st.tagged[t], int32(i))
			}
		}
		x.stats = st
	})
	return x.stats
}

type vocabulary struct {
	mu  sync.RWMutex
	ids map[string]int32
}

// id returns the id of a term, adding it when new.
func (v *vocabulary) id(term string) int32 {
	v.mu.RLock()
	id, ok := v.ids[term]
	v.mu.RUnlock()
	if ok {
		return id
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if id, ok := v.ids[term]; ok {
		return id
	}
	id = int32(len(v.ids))
	v.ids[term] = id
	return id
}

// lookup returns the id of a known term.
func (v *vocabulary) lookup(term string) (int32, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	id, ok := v.ids[term]
	return id, ok
}

// NewContextIndex indexes events (oldest first, as given).
func NewContextIndex(events []ContextEvent) *ContextIndex {
	x := &ContextIndex{vocab: &vocabulary{ids: map[string]int32{}}}
	for _, e := range events {
		x.add(e)
	}
	return x
}

func (x *ContextIndex) add(e ContextEvent) {
	terms := contextTerms(e.Task)
	e.terms = make([]indexedTerm, len(terms))
	for i, t := range terms {
		id := x.vocab.id(t.term)
		for int(id) >= len(x.df) {
			x.df = append(x.df, 0)
		}
		x.df[id]++
		e.terms[i] = indexedTerm{id, t.tf}
	}
	e.tags, e.kind = normTags(e.Tags), InferKind(e.Task)
	x.events = append(x.events, e)
}

// Add returns an index with e appended (the receiver is unchanged). limit
// > 0 keeps only the newest limit events.
func (x *ContextIndex) Add(limit int, es ...ContextEvent) *ContextIndex {
	next := &ContextIndex{df: slices.Clone(x.df), events: slices.Clip(x.events), vocab: x.vocab}
	for _, e := range es {
		next.add(e)
	}
	for limit > 0 && len(next.events) > limit {
		for _, t := range next.events[0].terms {
			next.df[t.id]--
		}
		next.events = next.events[1:]
	}
	return next
}

// Len is the number of indexed events.
func (x *ContextIndex) Len() int { return len(x.events) }

// Events returns the indexed events, oldest first (not to be modified).
func (x *ContextIndex) Events() []ContextEvent { return x.events }

// idf is the inverse document frequency of a term of document frequency df.
func (x *ContextIndex) idf(df int32) float64 {
	return math.Log(1 + float64(len(x.events))/float64(1+df))
}

// Neighbor is a past event similar to the task at hand.
type Neighbor struct {
	Index int // in Events()
	// Similarity is how much the event counts for the task, 0..1: 1 when
	// it shares a tag with the task, else the cosine of their descriptions'
	// TF-IDF vectors raised to the sharpness (a task with the same
	// description counts fully, one sharing a few words barely), at least
	// the kind weight when both descriptions name the same task kind
	// (InferKind) and at most the cross-kind factor times the cosine when
	// they name different kinds.
	Similarity float64
}

// SimilarOptions tune Similar.
type SimilarOptions struct {
	K         int     // at most K neighbours
	MinSim    float64 // the least similarity that counts
	Sharpness float64 // exponent of the cosine
	// KindWeight is the similarity of a past task of the same inferred
	// kind (0: kinds are not used); CrossKind multiplies the cosine of a
	// past task whose inferred kind differs from the task's.
	KindWeight, CrossKind float64
	// Kind is the task's kind (named by the request or inferred by the
	// caller; "" for none).
	Kind string
}

// Similar returns the past events that count at least minSim for the task,
// best first (newer first among equals), at most k.
func (x *ContextIndex) Similar(task string, tags []string, o SimilarOptions) []Neighbor {
	k, minSim, sharpness := o.K, o.MinSim, o.Sharpness
	q := contextTerms(task)
	qtags := normTags(tags)
	qkind := o.Kind
	if (len(q) == 0 && len(qtags) == 0 && o.Kind == "") || len(x.events) == 0 || k <= 0 {
		return nil
	}
	st := x.getStats()
	// Word similarity: the dot product of the task's TF-IDF vector with
	// every event sharing one of its terms (through the postings).
	sp := similarScratches.Get().(*similarScratch)
	defer similarScratches.Put(sp)
	dots := growTo(sp.dots, len(x.events))
	sp.dots = dots
	clear(dots)
	// shared[i]: event i shares a tag with the task (through the tag lists).
	shared := growTo(sp.shared, len(x.events))
	sp.shared = shared
	clear(shared)
	for _, t := range qtags {
		for _, i := range st.tagged[t] {
			shared[i] = true
		}
	}
	qnorm := 0.0
	for _, t := range q {
		df := int32(0)
		id, known := x.vocab.lookup(t.term)
		if known && int(id) < len(x.df) {
			df = x.df[id]
		} else {
			known = false
		}
		w := t.tf * x.idf(df)
		qnorm += w * w
		if !known {
			continue
		}
		for _, p := range st.postings[id] {
			dots[p.event] += w * p.w
		}
	}
	qnorm = math.Sqrt(qnorm)
	var out []Neighbor
	for i, e := range x.events {
		s := 0.0
		if shared[i] {
			s = 1
		} else if qnorm > 0 || qkind != "" {
			if dot := dots[i]; dot > 0 && st.norm[i] > 0 && qnorm > 0 {
				s = math.Pow(min(dot/(qnorm*st.norm[i]), 1), sharpness)
			}
			switch {
			case qkind == "" || e.kind == "":
			case qkind == e.kind:
				s = max(s, o.KindWeight)
			default:
				s *= o.CrossKind
			}
		}
		if s > 0 && s >= minSim {
			out = append(out, Neighbor{Index: i, Similarity: s})
		}
	}
	// The order is total (indices differ), so ordering only the best k
	// gives the head of the full order.
	sortTopKeyed(out, k, func(n Neighbor) float64 { return n.Similarity }, func(a, b Neighbor) int {
		switch {
		case a.Similarity > b.Similarity:
			return -1
		case a.Similarity < b.Similarity:
			return 1
		}
		return b.Index - a.Index // newer first
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// similarScratch is Similar's per-call memory, pooled.
type similarScratch struct {
	dots   []float64
	shared []bool
}

var similarScratches = sync.Pool{New: func() any { return new(similarScratch) }}
