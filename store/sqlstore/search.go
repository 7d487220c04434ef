package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// Full-text search documents and their ranking.
//
// Matching is the dialect's (an FTS5 index on SQLite; on PostgreSQL an
// inverted index kept here, search_postings: one row per term and document,
// read through its primary key); ranking is done here, the same on both, with BM25
// over statistics the store keeps itself: the document frequency of every
// term per project and kind (search_terms) and the number and total length
// of the documents (search_stats), updated by PutSearchDoc and
// DeleteSearchDoc in the writing transaction.
//
// A search costs what it reads, whatever the index size:
//
//  1. The query's terms are looked up in search_terms, rarest first; the
//     postings of the rarest terms are read while their document
//     frequencies sum to at most PostingBudget (the rarest term always, but
//     only its newest PostingBudget documents when it alone is that common).
//     Common terms add little to BM25 anyway: their IDF is low.
//  2. The documents found are ordered by the sum of the IDFs of the terms
//     they contain (ties: the newest first) and the best rerankPool(limit)
//     are kept.
//  3. Their bodies are read and scored by BM25 over every query term
//     (k1 1.2, b 0.75); ties by ref id.
//
// When fewer documents match than the pool holds, the ranking is exact
// BM25, as the memory backend's.

// PostingBudget bounds the postings one search reads. It was 10,000; at
// 100,000 documents per kind reading them was a third of a recall.
const PostingBudget = 4_000

// rerankPool is how many documents of the first stage are scored by BM25
// for a search of limit results (all of them when limit <= 0).
func rerankPool(limit int) int {
	if limit <= 0 {
		return 0
	}
	return max(4*limit, 100)
}

// inChunk is the size of the IN lists of searches: lists are padded to a
// multiple of it, so the statement cache holds few distinct queries.
const inChunk = 32

// bodyChunk is the size of the lists of documents whose bodies a search
// reads: at least rerankPool(recallPool), so that a recall's search reads
// them in one query (four round trips to PostgreSQL before).
const bodyChunk = 128

// bodyTerms splits a stored body back into its terms.
func bodyTerms(body string) []string { return strings.Fields(body) }

// docBody returns the stored body of a document; false when there is none.
func (t *Tx) docBody(ctx context.Context, project string, kind experience.ItemKind, refID string) (string, bool, error) {
	body, err := one(ctx, t, "search document "+refID, func(s scanner) (string, error) {
		var b string
		return b, s.Scan(&b)
	}, `SELECT body FROM search_docs WHERE project = ? AND kind = ? AND ref_id = ?`, project, string(kind), refID)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	return body, err == nil, err
}

// PutSearchDoc implements store.ExperienceStorage.
func (t *Tx) PutSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID, text string) error {
	old, existed, err := t.docBody(ctx, project, kind, refID)
	if err != nil {
		return fmt.Errorf("put search document: %w", err)
	}
	terms := store.TextTerms(text)
	body := strings.Join(terms, " ")
	switch t.d.FullText {
	case FTS5:
		_, err = t.exec(ctx, `INSERT INTO search_docs (project, kind, ref_id, scope, body) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, kind, ref_id) DO UPDATE SET body = excluded.body`,
			project, string(kind), refID, searchScope(project, kind), body)
	case PostingTable:
		if t.d.Name == SQLite.Name {
			// SQLite's search_docs keeps its scope column (NOT NULL) from
			// the FTS5 era: migration 12's Down rebuilds FTS5 from it.
			_, err = t.exec(ctx, `INSERT INTO search_docs (project, kind, ref_id, scope, body) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, kind, ref_id) DO UPDATE SET body = excluded.body`,
				project, string(kind), refID, searchScope(project, kind), body)
			break
		}
		_, err = t.exec(ctx, `INSERT INTO search_docs (project, kind, ref_id, body) VALUES (?, ?, ?, ?)
			ON CONFLICT (project, kind, ref_id) DO UPDATE SET body = excluded.body`,
			project, string(kind), refID, body)
	default:
		err = errNoFullText
	}
	if err != nil {
		return fmt.Errorf("put search document: %w", err)
	}
	var was []string
	if existed {
		was = bodyTerms(old)
	}
	if err := t.adjustTerms(ctx, project, kind, refID, was, existed, terms, true); err != nil {
		return err
	}
	_, err = t.bumpExperienceVersion(ctx, project)
	return err
}

var errNoFullText = errors.New("sqlstore: the dialect has no full-text engine")

// DeleteSearchDoc implements store.ExperienceStorage.
func (t *Tx) DeleteSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID string) (bool, error) {
	old, existed, err := t.docBody(ctx, project, kind, refID)
	if err != nil {
		return false, fmt.Errorf("delete search document: %w", err)
	}
	removed := map[string]bool{}
	for _, table := range []string{"search_docs", "embeddings"} {
		res, err := t.exec(ctx, `DELETE FROM `+table+` WHERE project = ? AND kind = ? AND ref_id = ?`,
			project, string(kind), refID)
		if err != nil {
			return false, fmt.Errorf("delete search document: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("delete search document: %w", err)
		}
		removed[table] = n > 0
	}
	if existed {
		if err := t.adjustTerms(ctx, project, kind, refID, bodyTerms(old), true, nil, false); err != nil {
			return false, err
		}
	}
	if !removed["search_docs"] && !removed["embeddings"] {
		return false, nil
	}
	v, err := t.bumpExperienceVersion(ctx, project)
	if err != nil {
		return false, err
	}
	if removed["embeddings"] {
		if _, err := t.exec(ctx, `INSERT INTO embedding_removals (project, kind, ref_id, version) VALUES (?, ?, ?, ?)
			ON CONFLICT (project, kind, ref_id) DO UPDATE SET version = excluded.version`,
			project, string(kind), refID, v); err != nil {
			return false, fmt.Errorf("delete search document: %w", err)
		}
	}
	return true, nil
}

// adjustTerms updates the statistics for a document that had the terms was
// (when wasDoc) and now has the terms now (when isDoc). Only the terms whose
// presence changed are written, in sorted order (so that concurrent
// PostgreSQL writers lock shared term rows in one order).
func (t *Tx) adjustTerms(ctx context.Context, project string, kind experience.ItemKind, refID string, was []string,
	wasDoc bool, now []string, isDoc bool) error {
	delta := map[string]int64{} // -1 removed, 0 kept, +1 added
	for _, term := range was {
		delta[term] = -1
	}
	seen := map[string]bool{}
	for _, term := range now {
		if seen[term] {
			continue // a term counts once per document
		}
		seen[term] = true
		delta[term]++
	}
	changed := make([]string, 0, len(delta))
	for term, d := range delta {
		if d != 0 {
			changed = append(changed, term)
		}
	}
	slices.Sort(changed)
	var added, removed []string
	for _, term := range changed {
		if delta[term] > 0 {
			added = append(added, term)
		} else {
			removed = append(removed, term)
		}
	}
	for chunk := range slices.Chunk(added, inChunk) {
		args := make([]any, 0, 3*len(chunk))
		for _, term := range chunk {
			args = append(args, project, string(kind), term)
		}
		if _, err := t.exec(ctx, `INSERT INTO search_terms (project, kind, term, docs) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, 1), ", len(chunk)), ", ")+`
			ON CONFLICT (project, kind, term) DO UPDATE SET docs = search_terms.docs + 1`, args...); err != nil {
			return fmt.Errorf("update search terms: %w", err)
		}
		if t.d.FullText == PostingTable {
			if err := t.adjustPostings(ctx, project, kind, refID, chunk); err != nil {
				return err
			}
		}
	}
	for chunk := range slices.Chunk(removed, inChunk) {
		args := padArgs([]any{project, string(kind)}, chunk, "") // no term is empty
		for _, q := range []string{`UPDATE search_terms SET docs = docs - 1`, `DELETE FROM search_terms`} {
			cond := ` WHERE project = ? AND kind = ? AND ` + inList("term", inChunk)
			if strings.HasPrefix(q, "DELETE") {
				cond += ` AND docs <= 0`
			}
			if _, err := t.exec(ctx, q+cond, args...); err != nil {
				return fmt.Errorf("update search terms: %w", err)
			}
		}
		if t.d.FullText == PostingTable {
			if _, err := t.exec(ctx, `DELETE FROM search_postings WHERE project = ? AND kind = ? AND `+
				inList("term", inChunk)+` AND ref_id = ?`, append(args, refID)...); err != nil {
				return fmt.Errorf("update search postings: %w", err)
			}
		}
	}
	docs := int64(0)
	if isDoc && !wasDoc {
		docs = 1
	} else if wasDoc && !isDoc {
		docs = -1
	}
	length := int64(len(now) - len(was))
	if docs == 0 && length == 0 {
		return nil
	}
	if _, err := t.exec(ctx, `INSERT INTO search_stats (project, kind, docs, terms) VALUES (?, ?, ?, ?)
		ON CONFLICT (project, kind) DO UPDATE SET docs = search_stats.docs + excluded.docs,
		terms = search_stats.terms + excluded.terms`, project, string(kind), docs, length); err != nil {
		return fmt.Errorf("update search statistics: %w", err)
	}
	return nil
}

// SearchText implements store.ExperienceStorage (see the ranking above).
func (t *Tx) SearchText(ctx context.Context, project string, kind experience.ItemKind, tokens []string, limit int) ([]store.TextHit, error) {
	terms := store.QueryTerms(tokens)
	if len(terms) == 0 {
		return []store.TextHit{}, nil
	}
	n, total, dfs, err := t.searchHead(ctx, project, kind, terms)
	if err != nil {
		return nil, err
	}
	if n <= 0 || len(dfs) == 0 {
		return []store.TextHit{}, nil
	}
	found := make([]string, 0, len(dfs))
	for term := range dfs {
		found = append(found, term)
	}
	slices.SortFunc(found, func(a, b string) int { return cmp.Or(cmp.Compare(dfs[a], dfs[b]), strings.Compare(a, b)) })

	// Stage 1: IDF sums over the postings of the rarest terms; stage 2:
	// BM25 over every query term on the bodies of the best.
	scorer := newBM25(found, dfs, n, total)
	var hits []store.TextHit
	switch t.d.FullText {
	case FTS5:
		hits, err = rerank(ctx, t, scorer, limit, func(a, b int64) int { return cmp.Compare(b, a) },
			eachRead(func(r termRead) ([]int64, error) {
				match := `scope : "` + searchScope(project, kind) + `" AND body : "` + strings.ReplaceAll(r.term, `"`, `""`) + `"`
				// One row of comma-separated rowids: far cheaper than a row
				// per posting through database/sql.
				q, args := `SELECT group_concat(rowid) FROM search_fts WHERE search_fts MATCH ?`, []any{match}
				if r.newest {
					q, args = `SELECT group_concat(rowid) FROM (SELECT rowid FROM search_fts WHERE search_fts MATCH ?
						ORDER BY rowid DESC LIMIT ?)`, append(args, r.limit)
				}
				list, err := one(ctx, t, "postings", scanOne[sql.NullString], q, args...)
				if err != nil {
					return nil, err
				}
				return parseRowids(list.String)
			}),
			func(ids []int64, pad int64) (string, []any) {
				return `SELECT ref_id, body FROM search_docs WHERE ` + inList("id", bodyChunk), padArgsN(nil, ids, pad, bodyChunk)
			}, -1) // rowids are positive
	case PostingTable:
		hits, err = rerank(ctx, t, scorer, limit, func(a, b string) int { return strings.Compare(b, a) },
			func(reads []termRead) ([][]string, error) {
				return t.postingLists(ctx, project, kind, reads)
			},
			func(refs []string, pad string) (string, []any) {
				return t.seekIn("ref_id, body", "search_docs", []string{"project", "kind"}, "ref_id", bodyChunk),
					padArgsN([]any{project, string(kind)}, refs, pad, bodyChunk)
			}, "") // ref ids are never empty
	default:
		err = errNoFullText
	}
	return hits, err
}

// postingSep separates the ref ids of one aggregated postings row (ids
// are one line of printable text).
const postingSep = "\x1f"

// postingAgg aggregates the ref_id column of a postings query into one
// postingSep-separated string.
func (t *Tx) postingAgg() string {
	if t.d.Name == "postgres" {
		return `string_agg(ref_id, chr(31))`
	}
	return `group_concat(ref_id, char(31))`
}

// bm25 scores documents for one search.
type bm25 struct {
	terms []string // the query terms found in the index, rarest first
	idf   map[string]float64
	df    map[string]int64
	avgdl float64
}

func newBM25(terms []string, df map[string]int64, n, total int64) *bm25 {
	b := &bm25{terms: terms, idf: map[string]float64{}, df: df, avgdl: float64(total) / float64(n)}
	for _, term := range terms {
		b.idf[term] = store.BM25IDF(float64(n), float64(df[term]))
	}
	return b
}

// score is the BM25 score of a document body, summed over the terms in one
// order (so equal documents score equal).
func (b *bm25) score(body string) float64 {
	words := bodyTerms(body)
	tf := map[string]int{}
	for _, w := range words {
		if _, ok := b.idf[w]; ok {
			tf[w]++
		}
	}
	score := 0.0
	for _, term := range b.terms {
		if f := tf[term]; f > 0 {
			score += store.BM25Term(b.idf[term], float64(f), float64(len(words)), b.avgdl)
		}
	}
	return score
}

// termRead is a read of a term's postings: only the newest limit
// documents when newest.
type termRead struct {
	term   string
	limit  int
	newest bool
	// also, with newest: the term's documents that contain any of these
	// (rarer) terms are read too, whatever their age (postingReads).
	also []string
}

// eachRead reads the postings of several terms one at a time.
func eachRead[K any](one func(termRead) ([]K, error)) func([]termRead) ([][]K, error) {
	return func(reads []termRead) ([][]K, error) {
		out := make([][]K, len(reads))
		for i, r := range reads {
			if len(r.also) > 0 { // read the term's every posting instead
				r = termRead{term: r.term, limit: PostingBudget}
			}
			keys, err := one(r)
			if err != nil {
				return nil, err
			}
			out[i] = keys
		}
		return out, nil
	}
}

// firstStage reads the postings of the rarest terms (postingReads) and
// returns the best rerankPool(limit) documents by the sum of the IDFs of
// the terms read they contain, ties newest first (order).
func firstStage[K comparable](b *bm25, limit int, order func(a, b K) int, postings func([]termRead) ([][]K, error)) ([]K, error) {
	coarse := make(map[K]float64, PostingBudget) // sized once: it holds up to the budget
	reads := postingReads(b, limit)
	lists, err := postings(reads)
	if err != nil {
		return nil, err
	}
	for i, keys := range lists {
		for _, k := range keys {
			coarse[k] += b.idf[reads[i].term]
		}
	}
	return best(coarse, rerankPool(limit), order), nil
}

// postingReads are the postings a search of limit results reads: the
// rarest terms' while their document frequencies sum to at most
// PostingBudget (the rarest always, only its newest PostingBudget
// documents when it alone has more).
func postingReads(b *bm25, limit int) []termRead {
	read := int64(0)
	var reads []termRead
	for i, term := range b.terms {
		df := b.df[term]
		if i > 0 && read+df > PostingBudget {
			break
		}
		read += df
		reads = append(reads, termRead{term: term, limit: PostingBudget, newest: df > PostingBudget})
	}
	if pool := rerankPool(limit); len(reads) == 1 && pool > 0 && b.df[reads[0].term] > int64(pool) {
		// One term read: every document found has the same first-stage
		// score (the term's IDF), so the pool kept is its newest documents
		// whatever the others; only those are read. At 100,000 documents
		// the rarest term of most queries has ~4,000, and reading them
		// was most of a recall on PostgreSQL before the first VACUUM
		// (every posting's heap tuple visited).
		reads[0].limit, reads[0].newest = pool, true
	}
	if pool := rerankPool(limit); len(reads) > 1 && pool > 0 && len(reads)-1 <= inChunk {
		// Rarer terms, then a common one (a rare name and a common word):
		// the common term's documents without a rarer term all score its
		// IDF, the least, so only its newest pool of them can be kept;
		// they are among its newest pool + (the rarer terms' documents),
		// and its documents with a rarer term are looked up by key. Done
		// when that reads fewer postings than the whole list.
		last := &reads[len(reads)-1]
		rarer := int64(0)
		for _, r := range reads[:len(reads)-1] {
			rarer += b.df[r.term]
		}
		if 2*rarer+int64(pool) < b.df[last.term] {
			last.limit, last.newest = pool+int(rarer), true
			for _, r := range reads[:len(reads)-1] {
				last.also = append(last.also, r.term)
			}
		}
	}
	return reads
}

// rerank runs both stages over documents keyed by K (rowids or ref ids):
// postings(reads) reads the terms' documents, every term's in the order
// of reads (the terms to read depend on the document frequencies alone,
// so they are known before any is read and can go out together), order
// ranks keys newest first, and bodies builds the query of the ref ids and
// bodies of at most bodyChunk keys, padded with pad.
func rerank[K comparable](ctx context.Context, t *Tx, b *bm25, limit int, order func(a, b K) int,
	postings func([]termRead) ([][]K, error), bodies func([]K, K) (string, []any), pad K) ([]store.TextHit, error) {
	cands, err := firstStage(b, limit, order, postings)
	if err != nil {
		return nil, err
	}
	hits := make([]store.TextHit, 0, len(cands))
	for chunk := range slices.Chunk(cands, bodyChunk) {
		q, args := bodies(chunk, pad)
		err := each(ctx, t, "search documents", func(s scanner) ([2]string, error) {
			var d [2]string
			return d, s.Scan(&d[0], &d[1])
		}, func(d [2]string) error {
			hits = append(hits, store.TextHit{RefID: d[0], Score: b.score(d[1])})
			return nil
		}, q, args...)
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(hits, func(a, b store.TextHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.RefID, b.RefID))
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// best returns the keys of m, best first (highest value, ties by order),
// at most n of them (all when n <= 0), selecting with a bounded heap rather
// than sorting them all. The values are copied next to their keys first:
// comparing through map lookups was most of the selection's cost.
func best[K comparable](m map[K]float64, n int, order func(a, b K) int) []K {
	type scored struct {
		k K
		s float64
	}
	better := func(x, y scored) int { return cmp.Or(cmp.Compare(y.s, x.s), order(x.k, y.k)) }
	keys := func(in []scored) []K {
		slices.SortFunc(in, better)
		out := make([]K, len(in))
		for i, e := range in {
			out[i] = e.k
		}
		return out
	}
	if n <= 0 || len(m) <= n {
		all := make([]scored, 0, len(m))
		for k, v := range m {
			all = append(all, scored{k, v})
		}
		return keys(all)
	}
	// heap[0] is the worst of the n best so far.
	heap := make([]scored, 0, n)
	worse := func(i, j int) bool { return better(heap[i], heap[j]) > 0 }
	down := func(i int) {
		for {
			l, w := 2*i+1, i
			if l < len(heap) && worse(l, w) {
				w = l
			}
			if r := l + 1; r < len(heap) && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			heap[i], heap[w] = heap[w], heap[i]
			i = w
		}
	}
	for k, v := range m {
		e := scored{k, v}
		if len(heap) < n {
			heap = append(heap, e)
			for i := len(heap) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(i, p) {
					break
				}
				heap[i], heap[p] = heap[p], heap[i]
				i = p
			}
			continue
		}
		if better(e, heap[0]) < 0 {
			heap[0] = e
			down(0)
		}
	}
	return keys(heap)
}

// scanOne scans a single column.
func scanOne[T any](s scanner) (T, error) {
	var v T
	return v, s.Scan(&v)
}

// padArgs appends the values of chunk (at most inChunk) to args, padded
// with pad, a value that matches nothing, to inChunk values: the IN lists
// of a query then always have inChunk items.
func padArgs[T any](args []any, chunk []T, pad T) []any { return padArgsN(args, chunk, pad, inChunk) }

// padArgsN is padArgs to n values.
func padArgsN[T any](args []any, chunk []T, pad T, n int) []any {
	for i := range n {
		if i < len(chunk) {
			args = append(args, chunk[i])
		} else {
			args = append(args, pad)
		}
	}
	return args
}

// searchStatistics are the full-text statistics: "project\x00kind" →
// documents and total length, "project\x00kind\x00term" → documents.
type searchStatistics struct {
	scopes map[string][2]int64
	terms  map[string]int64
	// postings counts the rows of search_postings per term key (stored
	// statistics of the PostingTable engine only).
	postings map[string]int64
}

// computeSearchStatistics computes the statistics from the documents.
func computeSearchStatistics(ctx context.Context, t *Tx) (searchStatistics, error) {
	st := searchStatistics{scopes: map[string][2]int64{}, terms: map[string]int64{}}
	err := each(ctx, t, "search documents", func(s scanner) ([3]string, error) {
		var r [3]string
		return r, s.Scan(&r[0], &r[1], &r[2])
	}, func(r [3]string) error {
		scope := r[0] + "\x00" + r[1]
		terms := bodyTerms(r[2])
		v := st.scopes[scope]
		st.scopes[scope] = [2]int64{v[0] + 1, v[1] + int64(len(terms))}
		seen := map[string]bool{}
		for _, term := range terms {
			if !seen[term] {
				seen[term] = true
				st.terms[scope+"\x00"+term]++
			}
		}
		return nil
	}, `SELECT project, kind, body FROM search_docs`)
	return st, err
}

// storedSearchStatistics reads the statistics the store keeps.
func storedSearchStatistics(ctx context.Context, t *Tx) (searchStatistics, error) {
	st := searchStatistics{scopes: map[string][2]int64{}, terms: map[string]int64{}}
	err := each(ctx, t, "search statistics", func(s scanner) (struct{}, error) {
		var p, k string
		var v [2]int64
		if err := s.Scan(&p, &k, &v[0], &v[1]); err != nil {
			return struct{}{}, err
		}
		st.scopes[p+"\x00"+k] = v
		return struct{}{}, nil
	}, func(struct{}) error { return nil }, `SELECT project, kind, docs, terms FROM search_stats`)
	if err != nil {
		return st, err
	}
	err = each(ctx, t, "search terms", func(s scanner) (struct{}, error) {
		var p, k, term string
		var docs int64
		if err := s.Scan(&p, &k, &term, &docs); err != nil {
			return struct{}{}, err
		}
		st.terms[p+"\x00"+k+"\x00"+term] = docs
		return struct{}{}, nil
	}, func(struct{}) error { return nil }, `SELECT project, kind, term, docs FROM search_terms`)
	if err != nil || t.d.FullText != PostingTable {
		return st, err
	}
	st.postings = map[string]int64{}
	err = each(ctx, t, "search postings", func(s scanner) (struct{}, error) {
		var p, k, term string
		var docs int64
		if err := s.Scan(&p, &k, &term, &docs); err != nil {
			return struct{}{}, err
		}
		st.postings[p+"\x00"+k+"\x00"+term] = docs
		return struct{}{}, nil
	}, func(struct{}) error { return nil }, `SELECT project, kind, term, count(*) FROM search_postings GROUP BY project, kind, term`)
	return st, err
}

// BackfillSearchTerms computes the full-text statistics (search_terms,
// search_stats) from the stored documents, replacing what they held: the
// data migration that introduced them, and a repair.
func BackfillSearchTerms(ctx context.Context, tx *sql.Tx, d Dialect) error {
	t := NewTx(tx, d, nil)
	st, err := computeSearchStatistics(ctx, t)
	if err != nil {
		return err
	}
	for _, table := range []string{"search_terms", "search_stats"} {
		if _, err := t.exec(ctx, `DELETE FROM `+table); err != nil {
			return fmt.Errorf("backfill %s: %w", table, err)
		}
	}
	for scope, v := range st.scopes {
		p, k, _ := strings.Cut(scope, "\x00")
		if _, err := t.exec(ctx, `INSERT INTO search_stats (project, kind, docs, terms) VALUES (?, ?, ?, ?)`,
			p, k, v[0], v[1]); err != nil {
			return fmt.Errorf("backfill search statistics: %w", err)
		}
	}
	for key, docs := range st.terms {
		parts := strings.SplitN(key, "\x00", 3)
		if _, err := t.exec(ctx, `INSERT INTO search_terms (project, kind, term, docs) VALUES (?, ?, ?, ?)`,
			parts[0], parts[1], parts[2], docs); err != nil {
			return fmt.Errorf("backfill search terms: %w", err)
		}
	}
	if d.FullText != PostingTable {
		return nil
	}
	if _, err := t.exec(ctx, `DELETE FROM search_postings`); err != nil {
		return fmt.Errorf("backfill search postings: %w", err)
	}
	// Read first: the transaction's connection cannot write while it reads.
	docs, err := many(ctx, t, "search documents", func(s scanner) ([4]string, error) {
		var r [4]string
		return r, s.Scan(&r[0], &r[1], &r[2], &r[3])
	}, `SELECT project, kind, ref_id, body FROM search_docs`)
	if err != nil {
		return err
	}
	for _, r := range docs {
		if err := t.adjustPostings(ctx, r[0], experience.ItemKind(r[1]), r[2], bodyTerms(r[3])); err != nil {
			return err
		}
	}
	return nil
}

// adjustPostings adds the postings of a document's terms.
func (t *Tx) adjustPostings(ctx context.Context, project string, kind experience.ItemKind, refID string, terms []string) error {
	unique := slices.Compact(slices.Sorted(slices.Values(terms)))
	for chunk := range slices.Chunk(unique, inChunk) {
		args := make([]any, 0, 4*len(chunk))
		for _, term := range chunk {
			args = append(args, project, string(kind), term, refID)
		}
		if _, err := t.exec(ctx, `INSERT INTO search_postings (project, kind, term, ref_id) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", len(chunk)), ", ")+` ON CONFLICT DO NOTHING`, args...); err != nil {
			return fmt.Errorf("search postings: %w", err)
		}
	}
	return nil
}

// CheckSearchStatistics compares the statistics the store keeps with
// those computed from the documents, in one read transaction, and
// describes the first differences (nil when they agree). A disagreement
// is repaired by BackfillSearchTerms.
func CheckSearchStatistics(ctx context.Context, db *sql.DB, d Dialect) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	t := NewTx(tx, d, nil)
	want, err := computeSearchStatistics(ctx, t)
	if err != nil {
		return err
	}
	got, err := storedSearchStatistics(ctx, t)
	if err != nil {
		return err
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(union(want.scopes, got.scopes))) {
		if want.scopes[k] != got.scopes[k] {
			diffs = append(diffs, fmt.Sprintf("%q: documents and length %v, stored %v", k, want.scopes[k], got.scopes[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(union(want.terms, got.terms))) {
		if want.terms[k] != got.terms[k] {
			diffs = append(diffs, fmt.Sprintf("%q: %d documents, stored %d", k, want.terms[k], got.terms[k]))
		}
	}
	if got.postings != nil {
		for _, k := range slices.Sorted(maps.Keys(union(want.terms, got.postings))) {
			if want.terms[k] != got.postings[k] {
				diffs = append(diffs, fmt.Sprintf("%q: %d documents, %d postings", k, want.terms[k], got.postings[k]))
			}
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("full-text statistics differ from the documents in %d places: %s", len(diffs),
			strings.Join(diffs[:min(len(diffs), 10)], "; "))
	}
	return nil
}

// union is the set of keys of two maps.
func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// BackfillMigration is the version of the Go migration that runs
// BackfillSearchTerms, after the SQL migration creating the tables.
const BackfillMigration = 6

// BackfillMigrationFunc is the Go migration's body for a dialect.
func BackfillMigrationFunc(d Dialect) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error { return BackfillSearchTerms(ctx, tx, d) }
}

// parseRowids parses group_concat's comma-separated rowids.
func parseRowids(list string) ([]int64, error) {
	if list == "" {
		return nil, nil
	}
	out := make([]int64, 0, strings.Count(list, ",")+1)
	for f := range strings.SplitSeq(list, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("postings: bad rowid %q: %w", f, err)
		}
		out = append(out, id)
	}
	return out, nil
}
