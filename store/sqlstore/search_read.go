package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
)

// A search's reads in few round trips (readtx.go): the statistics, the
// terms' document frequencies (and, in a read snapshot, the experience
// version the vector index asks next) in one pipeline, then the postings
// of every term to read in another. Without a pipeliner (SQLite, or a
// database/sql transaction) the same statements run one by one, as
// before: the statistics first, nothing more when the kind has no
// documents.

// searchHead reads the documents and total length of a project's kind and
// the document frequencies of the terms that occur in them (n <= 0: no
// documents).
func (t *Tx) searchHead(ctx context.Context, project string, kind experience.ItemKind, terms []string) (n, total int64, dfs map[string]int64, err error) {
	found := false
	stats := Pipelined{SQL: `SELECT docs, terms FROM search_stats WHERE project = ? AND kind = ?`,
		Args: []any{project, string(kind)}, Row: func(s scanner) error {
			found = true
			return s.Scan(&n, &total)
		}}
	dfs = map[string]int64{}
	head := []Pipelined{stats}
	if t.pipe != nil { // the terms (and the version) ride along
		if _, ok := t.cachedVersion(project); !ok && t.conn.snapshot {
			var v int64
			head = append(head, Pipelined{SQL: versionQuery, Args: []any{project}, Row: func(s scanner) error { return s.Scan(&v) }})
			defer func() {
				if err == nil {
					t.keepVersion(project, v) // no row: 0
				}
			}()
		}
		head = append(head, t.termDocsReads(project, kind, terms, dfs)...)
	}
	if err := t.pipeline(ctx, "search statistics", head); err != nil {
		return 0, 0, nil, err
	}
	if !found || n <= 0 {
		return 0, 0, map[string]int64{}, nil
	}
	if t.pipe == nil {
		if err := t.pipeline(ctx, "search terms", t.termDocsReads(project, kind, terms, dfs)); err != nil {
			return 0, 0, nil, err
		}
	}
	return n, total, dfs, nil
}

// termDocsReads reads into dfs the document frequencies of the terms that
// occur in the project's documents of the kind.
func (t *Tx) termDocsReads(project string, kind experience.ItemKind, terms []string, dfs map[string]int64) []Pipelined {
	var out []Pipelined
	q := t.seekIn("term, docs", "search_terms", []string{"project", "kind"}, "term", inChunk)
	for chunk := range slices.Chunk(terms, inChunk) {
		out = append(out, Pipelined{SQL: q, Args: padArgs([]any{project, string(kind)}, chunk, ""), // no term is empty
			Row: func(s scanner) error {
				var term string
				var docs int64
				if err := s.Scan(&term, &docs); err != nil {
					return err
				}
				dfs[term] = docs
				return nil
			}})
	}
	return out
}

// postingLists reads the postings of the terms of reads (PostingTable), in
// one pipeline when the transaction has a pipeliner: one row of
// separated ref ids per term (a row per posting through database/sql cost
// most of a search).
func (t *Tx) postingLists(ctx context.Context, project string, kind experience.ItemKind, reads []termRead) ([][]string, error) {
	out := make([][]string, len(reads))
	var stmts []Pipelined
	split := func(into *[]string) func(s scanner) error {
		return func(s scanner) error {
			var list sql.NullString
			if err := s.Scan(&list); err != nil {
				return err
			}
			if list.String != "" {
				*into = append(*into, strings.Split(list.String, postingSep)...)
			}
			return nil
		}
	}
	for i, r := range reads {
		inner, args := `SELECT ref_id FROM search_postings WHERE project = ? AND kind = ? AND term = ?`,
			[]any{project, string(kind), r.term}
		if r.newest {
			inner, args = inner+` ORDER BY ref_id DESC LIMIT ?`, append(args, r.limit)
		}
		stmts = append(stmts, Pipelined{SQL: `SELECT ` + t.postingAgg() + ` FROM (` + inner + `) p`, Args: args, Row: split(&out[i])})
		if len(r.also) > 0 {
			stmts = append(stmts, t.postingsWithin(project, kind, r, split(&out[i])))
		}
	}
	if err := t.pipeline(ctx, "postings", stmts); err != nil {
		return nil, err
	}
	for i, r := range reads {
		if len(r.also) > 0 { // the newest and those with a rarer term may meet
			out[i] = slices.Compact(slices.Sorted(slices.Values(out[i])))
		}
	}
	return out, nil
}

// postingsWithin reads the documents of r.term that contain one of r.also
// (at most inChunk terms): every such document of the rarer terms looked
// up by key in r.term's postings (on PostgreSQL a lateral seek per
// document, so the plan cannot read r.term's postings instead, whatever
// the statistics).
func (t *Tx) postingsWithin(project string, kind experience.ItemKind, r termRead, row func(scanner) error) Pipelined {
	args := padArgs([]any{project, string(kind)}, r.also, "") // no term is empty
	if t.d.Name == Postgres.Name {
		return Pipelined{SQL: PostingsWithin(t.d), Args: append(args, project, string(kind), r.term), Row: row}
	}
	return Pipelined{SQL: PostingsWithin(t.d), Args: append([]any{project, string(kind), r.term}, args...), Row: row}
}

// PostingsWithin is postingsWithin's query for a dialect. On PostgreSQL
// its arguments are the project, the kind, inChunk rarer terms, then the
// project, the kind and the term; elsewhere the project, the kind and the
// term first.
func PostingsWithin(d Dialect) string {
	if d.Name == Postgres.Name {
		// Numbered placeholders: the rarer terms' seeks (seekIn) take
		// $1…$(2+inChunk), the common term's follow.
		n := 2 + inChunk
		rarer := (&Tx{d: d}).seekIn("ref_id", "search_postings", []string{"project", "kind"}, "term", inChunk)
		return `SELECT string_agg(s.ref_id, chr(31)) FROM (SELECT DISTINCT ref_id FROM (` + rarer + `) r) s
			CROSS JOIN LATERAL (SELECT 1 FROM search_postings b WHERE b.project = $` + strconv.Itoa(n+1) + ` AND b.kind = $` +
			strconv.Itoa(n+2) + ` AND b.term = $` + strconv.Itoa(n+3) + ` AND b.ref_id = s.ref_id OFFSET 0) x`
	}
	rarer := `SELECT ref_id FROM search_postings WHERE project = ? AND kind = ? AND ` + inList("term", inChunk)
	return `SELECT group_concat(ref_id, char(31)) FROM search_postings WHERE project = ? AND kind = ? AND term = ? AND ref_id IN (` + rarer + `)`
}
