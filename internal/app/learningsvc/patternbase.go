package learningsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// patternRow is what the guidance index and the thompson choice set need
// of a pattern (issue 17): no example tasks, reason, source, timestamps or
// maturity history. A base keeps one row per pattern in one slice, its
// ids and contents substrings of one string; the full record of a pattern
// is read by key when guidance evaluates it (patternBase.record).
type patternRow struct {
	id, content string
	tags        []string
	kind        learning.PatternKind
	manual      learning.MaturityState
	inverted    bool // AntiPatternID != ""
	succ, fail  int64
	h, x        float64 // decayed sums' values
	hRef, xRef  int64   // their reference times, unix µs (noRef: none)
}

// noRef is the reference time of a decayed sum that never had an event.
const noRef = math.MinInt64

func refMicros(t time.Time) int64 {
	if t.IsZero() {
		return noRef
	}
	return t.UnixMicro()
}

func refTime(us int64) time.Time {
	if us == noRef {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

func (r *patternRow) helpful() learning.DecayedSum {
	return learning.DecayedSum{Value: r.h, Ref: refTime(r.hRef)}
}

func (r *patternRow) harmful() learning.DecayedSum {
	return learning.DecayedSum{Value: r.x, Ref: refTime(r.xRef)}
}

func rowOf(rec *store.PatternRecord) patternRow {
	p, m := &rec.Pattern, &rec.Maturity
	return patternRow{id: p.ID, content: p.Content, tags: p.Tags, kind: p.Kind, manual: m.Manual,
		inverted: p.AntiPatternID != "", succ: p.SuccessCount, fail: p.FailureCount,
		h: m.Helpful.Value, hRef: refMicros(m.Helpful.Ref), x: m.Harmful.Value, xRef: refMicros(m.Harmful.Ref)}
}

// patternBase is an immutable set of pattern rows with its id index and,
// built at the first guidance request on it, its guidance index and
// choice set.
type patternBase struct {
	rows []patternRow
	// byID lists the positions of rows in the order of their ids (an id
	// index without a map: a fifth of the memory, and a snapshot stores
	// it, so a restored base needs no sort).
	byID []int32

	gmu sync.Mutex // guards g
	g   *guidanceBase
	cmu sync.Mutex // guards cs
	cs  *choiceSet

	// full caches the records read by key (patternBase.record); a
	// record of the base at a position the overlay does not replace is
	// the same at every later version of the snapshots on this base.
	fmu  sync.Mutex
	full map[int32]*store.PatternRecord
}

// maxFullRecords bounds the records a base keeps read by key: guidance
// evaluates tens of patterns per request, mostly the same ones.
const maxFullRecords = 8192

func newPatternBase(rows []patternRow) *patternBase {
	byID := make([]int32, len(rows))
	for i := range byID {
		byID[i] = int32(i)
	}
	slices.SortFunc(byID, func(a, b int32) int { return strings.Compare(rows[a].id, rows[b].id) })
	return newPatternBaseSorted(rows, byID)
}

// newPatternBaseSorted is newPatternBase with the id order given (valid:
// a permutation of the rows' positions ordering their ids).
func newPatternBaseSorted(rows []patternRow, byID []int32) *patternBase {
	return &patternBase{rows: rows, byID: byID, full: map[int32]*store.PatternRecord{}}
}

// pos returns the position of the pattern id in the base.
func (b *patternBase) pos(id string) (int32, bool) {
	i, found := slices.BinarySearchFunc(b.byID, id, func(p int32, id string) int { return strings.Compare(b.rows[p].id, id) })
	if !found {
		return -1, false
	}
	return b.byID[i], true
}

// newPatternBaseOf is a base of full records, all of them kept (tests).
func newPatternBaseOf(recs []*store.PatternRecord) *patternBase {
	rows := make([]patternRow, len(recs))
	for i, r := range recs {
		rows[i] = rowOf(r)
	}
	b := newPatternBase(rows)
	for i, r := range recs {
		b.full[int32(i)] = r
	}
	return b
}

// record returns the full record at pos (without example tasks), read in
// tx when not cached. The caller guarantees that the pattern did not
// change since the base was built (it is not in the snapshot's overlay),
// so the record read at tx's version is the base's.
func (b *patternBase) record(ctx context.Context, tx store.Tx, project string, pos int32) (*store.PatternRecord, error) {
	b.fmu.Lock()
	r := b.full[pos]
	b.fmu.Unlock()
	if r != nil {
		return r, nil
	}
	id := b.rows[pos].id
	p, err := tx.GetPattern(ctx, project, id)
	if err != nil {
		return nil, fmt.Errorf("pattern %s of the guidance cache: %w", id, err)
	}
	p.ExampleTasks = nil // see patternCache
	m, err := tx.GetMaturity(ctx, project, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		m = learning.Maturity{Project: p.Project, PatternID: p.ID, Generation: p.Generation}
	case err != nil:
		return nil, err
	}
	r = &store.PatternRecord{Pattern: p, Maturity: m}
	b.fmu.Lock()
	if len(b.full) >= maxFullRecords {
		clear(b.full)
	}
	b.full[pos] = r
	b.fmu.Unlock()
	return r, nil
}

// rowLoader builds the rows of a base from streamed pattern ranks: ids
// and contents are appended to chunks of textChunk bytes, each row's
// strings substrings of its chunk (no buffer doubled as it grows, no copy
// at the end: a full load allocated three times its texts and rows), tags
// are interned.
type rowLoader struct {
	rows  []patternRow
	text  strings.Builder // the current chunk, never grown past its capacity
	tags  map[string]string
	kinds map[string]learning.PatternKind
}

// textChunk is the size of a chunk of pattern texts.
const textChunk = 1 << 20

func (l *rowLoader) add(r *store.PatternRank) error {
	row := patternRow{inverted: r.Inverted, succ: r.SuccessCount, fail: r.FailureCount,
		h: r.Helpful.Value, hRef: refMicros(r.Helpful.Ref), x: r.Harmful.Value, xRef: refMicros(r.Harmful.Ref)}
	var err error
	if row.tags, err = l.decodeTags(r.Tags); err != nil {
		return fmt.Errorf("tags of pattern %s: %w", r.ID, err)
	}
	row.kind = learning.PatternKind(l.intern(r.Kind))
	row.manual = learning.MaturityState(l.intern(r.Manual))
	n := len(r.ID) + len(r.Content)
	if l.text.Len()+n > l.text.Cap() {
		// A new chunk; the strings of the rows before keep the old one.
		l.text = strings.Builder{}
		l.text.Grow(max(textChunk, n))
	}
	at := l.text.Len()
	l.text.Write(r.ID)
	l.text.Write(r.Content)
	// The builder's string shares its bytes; those already written never
	// change (the chunk is not grown), so the substrings stay valid.
	all := l.text.String()
	row.id, row.content = all[at:at+len(r.ID)], all[at+len(r.ID):at+n]
	l.rows = append(l.rows, row)
	return nil
}

// intern returns a shared string for the few distinct values of kinds,
// states and tags.
func (l *rowLoader) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := l.tags[string(b)]; ok {
		return s
	}
	if l.tags == nil {
		l.tags = map[string]string{}
	}
	s := string(b)
	l.tags[s] = s
	return s
}

// decodeTags reads a stored JSON list of tags: the common lists without
// escapes directly, others with encoding/json. An empty list is nil.
func (l *rowLoader) decodeTags(b []byte) ([]string, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || string(t) == "[]" || string(t) == "null" {
		return nil, nil
	}
	if len(t) >= 4 && bytes.IndexByte(t, '\\') < 0 && bytes.HasPrefix(t, []byte(`["`)) && bytes.HasSuffix(t, []byte(`"]`)) {
		parts := bytes.Split(t[2:len(t)-2], []byte(`","`))
		out := make([]string, len(parts))
		simple := true
		for i, p := range parts {
			if bytes.IndexByte(p, '"') >= 0 {
				simple = false
				break
			}
			out[i] = l.intern(p)
		}
		if simple {
			return out, nil
		}
	}
	var out []string
	if err := json.Unmarshal(t, &out); err != nil {
		return nil, err
	}
	for i, s := range out {
		out[i] = l.intern([]byte(s))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// finish returns the rows loaded.
func (l *rowLoader) finish() []patternRow {
	rows := l.rows
	if cap(rows) > len(rows)+len(rows)/8 {
		rows = append([]patternRow(nil), rows...)
	}
	l.rows, l.text = nil, strings.Builder{}
	return rows
}

// loadRows reads every pattern of the project as rows: streamed when the
// store can (store.PatternRankReader), else from full records.
func loadRows(ctx context.Context, tx store.Tx, project string) ([]patternRow, error) {
	return loadRowsSized(ctx, tx, project, -1)
}

// loadRowsSized is loadRows with the number of patterns counted already
// (n ≥ 0) or not (n < 0).
func loadRowsSized(ctx context.Context, tx store.Tx, project string, n int64) ([]patternRow, error) {
	if rr, ok := tx.(store.PatternRankReader); ok {
		// The count sizes the rows (an index-only count; doubling a
		// slice of 100,000 rows allocated 4.7 times its final size).
		if n < 0 {
			var err error
			if n, err = tx.CountPatterns(ctx, project, store.PatternFilter{}); err != nil {
				return nil, err
			}
		}
		l := rowLoader{rows: make([]patternRow, 0, n)}
		if err := rr.EachPatternRank(ctx, project, l.add); err != nil {
			return nil, err
		}
		return l.finish(), nil
	}
	all, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{})
	if err != nil {
		return nil, err
	}
	rows := make([]patternRow, len(all))
	for i := range all {
		rows[i] = rowOf(&all[i])
	}
	return rows, nil
}

// prepareBase starts building the guidance index and the thompson choice
// set of a new base in the background, so that the request reads the
// outcome history meanwhile (the first request on a base needs all three).
func (s *Service) prepareBase(snap *cachedProject, now time.Time) {
	b := snap.base
	if b.gmu.TryLock() {
		if b.g == nil {
			go b.guidance(s, now)
		}
		b.gmu.Unlock()
	}
	if s.lc.Ranking != learning.RankingSeed && b.cmu.TryLock() {
		if b.cs == nil {
			go b.choices(s)
		}
		b.cmu.Unlock()
	}
}
