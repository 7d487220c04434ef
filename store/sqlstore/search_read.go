package sqlstore

import (
	"context"
	"database/sql"
	"slices"
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
	if t.pipe != nil {
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
		if err := t.pipeline(ctx, "search statistics", head); err != nil {
			return 0, 0, nil, err
		}
		if !found {
			return 0, 0, map[string]int64{}, nil
		}
		return n, total, dfs, nil
	}
	if err := t.pipeline(ctx, "search statistics", head); err != nil {
		return 0, 0, nil, err
	}
	if !found || n <= 0 {
		return 0, 0, dfs, nil
	}
	if err := t.pipeline(ctx, "search terms", t.termDocsReads(project, kind, terms, dfs)); err != nil {
		return 0, 0, nil, err
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
	stmts := make([]Pipelined, len(reads))
	for i, r := range reads {
		inner, args := `SELECT ref_id FROM search_postings WHERE project = ? AND kind = ? AND term = ?`,
			[]any{project, string(kind), r.term}
		if r.newest {
			inner, args = inner+` ORDER BY ref_id DESC LIMIT ?`, append(args, r.limit)
		}
		stmts[i] = Pipelined{SQL: `SELECT ` + t.postingAgg() + ` FROM (` + inner + `) p`, Args: args,
			Row: func(s scanner) error {
				var list sql.NullString
				if err := s.Scan(&list); err != nil {
					return err
				}
				if list.String != "" {
					out[i] = strings.Split(list.String, postingSep)
				}
				return nil
			}}
	}
	if err := t.pipeline(ctx, "postings", stmts); err != nil {
		return nil, err
	}
	return out, nil
}
