package sqlstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// Embeddings, full-text documents and the experience version.

// encodeVector is the little-endian float32 encoding of a vector.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte, dim int) ([]float32, error) {
	if len(b) != 4*dim {
		return nil, fmt.Errorf("vector of %d bytes for dimension %d", len(b), dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// validEmbedding checks what PutEmbedding refuses.
func validEmbedding(e store.Embedding) error {
	if e.Dim <= 0 || e.Dim != len(e.Vector) {
		return fmt.Errorf("embedding of %s %s: dim %d with a vector of %d values: %w",
			e.Kind, e.RefID, e.Dim, len(e.Vector), store.ErrInvalid)
	}
	return nil
}

const embeddingCols = `project, kind, ref_id, embedder, dim, vector, updated_at`

func scanEmbedding(s scanner) (store.Embedding, error) {
	var e store.Embedding
	var vector []byte
	var updated int64
	if err := s.Scan(&e.Project, &e.Kind, &e.RefID, &e.Embedder, &e.Dim, &vector, &updated); err != nil {
		return e, err
	}
	e.UpdatedAt = fromAt(updated)
	var err error
	e.Vector, err = decodeVector(vector, e.Dim)
	return e, err
}

// bumpExperienceVersion increments the project's experience version.
func (t *Tx) bumpExperienceVersion(ctx context.Context, project string) error {
	_, err := t.exec(ctx, `INSERT INTO experience_versions (project, version) VALUES (?, 1)
		ON CONFLICT (project) DO UPDATE SET version = experience_versions.version + 1`, project)
	if err != nil {
		return fmt.Errorf("bump experience version: %w", err)
	}
	return nil
}

// PutEmbedding implements store.ExperienceStorage.
func (t *Tx) PutEmbedding(ctx context.Context, e store.Embedding) error {
	if err := validEmbedding(e); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `INSERT INTO embeddings (`+embeddingCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project, kind, ref_id) DO UPDATE SET embedder = excluded.embedder, dim = excluded.dim,
		vector = excluded.vector, updated_at = excluded.updated_at`,
		e.Project, string(e.Kind), e.RefID, e.Embedder, e.Dim, encodeVector(e.Vector), at(e.UpdatedAt)); err != nil {
		return fmt.Errorf("put embedding: %w", err)
	}
	return t.bumpExperienceVersion(ctx, e.Project)
}

// GetEmbedding implements store.ExperienceStorage.
func (t *Tx) GetEmbedding(ctx context.Context, project string, kind experience.ItemKind, refID string) (store.Embedding, error) {
	return one(ctx, t, "embedding of "+refID, scanEmbedding, `SELECT `+embeddingCols+` FROM embeddings
		WHERE project = ? AND kind = ? AND ref_id = ?`, project, string(kind), refID)
}

// EachEmbedding implements store.ExperienceStorage, streaming the rows.
func (t *Tx) EachEmbedding(ctx context.Context, project string, kind experience.ItemKind, embedder string, fn func(store.Embedding) error) error {
	return each(ctx, t, "embeddings", scanEmbedding, fn, `SELECT `+embeddingCols+` FROM embeddings
		WHERE project = ? AND kind = ? AND embedder = ? ORDER BY ref_id`, project, string(kind), embedder)
}

// StaleEmbeddings implements store.ExperienceStorage.
func (t *Tx) StaleEmbeddings(ctx context.Context, project string, kind experience.ItemKind, embedder string, dim int, limit int) ([]string, error) {
	q, args := page(`SELECT d.ref_id FROM search_docs d LEFT JOIN embeddings e
		ON e.project = d.project AND e.kind = d.kind AND e.ref_id = d.ref_id
		WHERE d.project = ? AND d.kind = ? AND (e.ref_id IS NULL OR e.embedder <> ? OR e.dim <> ?)
		ORDER BY d.ref_id`, []any{project, string(kind), embedder, dim}, limit, 0)
	return many(ctx, t, "stale embeddings", func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	}, q, args...)
}

// searchScope is the FTS5 token naming a (project, kind): letters and
// digits only, so it is one term of the unicode61 tokenizer.
func searchScope(project string, kind experience.ItemKind) string {
	sum := sha256.Sum256([]byte(project + "\x00" + string(kind)))
	return "s" + hex.EncodeToString(sum[:12])
}

// tsvectorLiteral is the tsvector input of a document's terms, each with
// its positions (1-based; PostgreSQL keeps at most 256 per lexeme and
// positions up to 16383).
func tsvectorLiteral(terms []string) string {
	positions := map[string][]int{}
	for i, term := range terms {
		if p := positions[term]; len(p) < 256 {
			positions[term] = append(p, min(i+1, 16383))
		}
	}
	lexemes := make([]string, 0, len(positions))
	for term := range positions {
		lexemes = append(lexemes, term)
	}
	sort.Strings(lexemes)
	var b strings.Builder
	for i, term := range lexemes {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteLexeme(term))
		b.WriteByte(':')
		last := 0
		for j, p := range positions[term] {
			if p == last { // positions capped at 16383 repeat
				continue
			}
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
			last = p
		}
	}
	return b.String()
}

// quoteLexeme quotes a lexeme for tsvector and tsquery input. Terms are
// letters and digits only; quotes and backslashes are escaped anyway.
func quoteLexeme(term string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(term) + "'"
}

// PutSearchDoc implements store.ExperienceStorage.
func (t *Tx) PutSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID, text string) error {
	terms := store.TextTerms(text)
	body := strings.Join(terms, " ")
	var err error
	switch t.d.FullText {
	case FTS5:
		_, err = t.exec(ctx, `INSERT INTO search_docs (project, kind, ref_id, scope, body) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, kind, ref_id) DO UPDATE SET body = excluded.body`,
			project, string(kind), refID, searchScope(project, kind), body)
	case TSVector:
		_, err = t.exec(ctx, `INSERT INTO search_docs (project, kind, ref_id, body, tsv) VALUES (?, ?, ?, ?, ?::tsvector)
			ON CONFLICT (project, kind, ref_id) DO UPDATE SET body = excluded.body, tsv = excluded.tsv`,
			project, string(kind), refID, body, tsvectorLiteral(terms))
	default:
		err = errNoFullText
	}
	if err != nil {
		return fmt.Errorf("put search document: %w", err)
	}
	return t.bumpExperienceVersion(ctx, project)
}

var errNoFullText = errors.New("sqlstore: the dialect has no full-text engine")

// DeleteSearchDoc implements store.ExperienceStorage.
func (t *Tx) DeleteSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID string) (bool, error) {
	removed := int64(0)
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
		removed += n
	}
	if removed == 0 {
		return false, nil
	}
	return true, t.bumpExperienceVersion(ctx, project)
}

func scanHit(s scanner) (store.TextHit, error) {
	var h store.TextHit
	return h, s.Scan(&h.RefID, &h.Score)
}

// SearchText implements store.ExperienceStorage. SQLite ranks with bm25()
// (negated, so higher is better; its statistics cover the whole index),
// PostgreSQL with ts_rank normalised by document length.
func (t *Tx) SearchText(ctx context.Context, project string, kind experience.ItemKind, tokens []string, limit int) ([]store.TextHit, error) {
	terms := store.QueryTerms(tokens)
	if len(terms) == 0 {
		return []store.TextHit{}, nil
	}
	quoted := make([]string, len(terms))
	var q string
	var args []any
	switch t.d.FullText {
	case FTS5:
		var err error
		if terms, err = t.rareTerms(ctx, terms); err != nil {
			return nil, err
		}
		if len(terms) == 0 {
			return []store.TextHit{}, nil
		}
		quoted = quoted[:len(terms)]
		for i, term := range terms {
			quoted[i] = `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
		}
		match := `scope : "` + searchScope(project, kind) + `" AND body : (` + strings.Join(quoted, " OR ") + `)`
		q, args = page(`SELECT d.ref_id, -bm25(search_fts, 0.0, 1.0) AS score
			FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid
			WHERE search_fts MATCH ? AND d.project = ? AND d.kind = ?
			ORDER BY score DESC, d.ref_id`, []any{match, project, string(kind)}, limit, 0)
	case TSVector:
		for i, term := range terms {
			quoted[i] = quoteLexeme(term)
		}
		query := strings.Join(quoted, " | ")
		q, args = page(`SELECT ref_id, ts_rank(tsv, ?::tsquery, 1) AS score FROM search_docs
			WHERE project = ? AND kind = ? AND tsv @@ ?::tsquery
			ORDER BY score DESC, ref_id`, []any{query, project, string(kind), query}, limit, 0)
	default:
		return nil, errNoFullText
	}
	return many(ctx, t, "search hits", scanHit, q, args...)
}

// ExperienceVersion implements store.ExperienceStorage.
func (t *Tx) ExperienceVersion(ctx context.Context, project string) (int64, error) {
	v, err := t.count(ctx, "experience version", `SELECT version FROM experience_versions WHERE project = ?`, project)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return v, err
}

// ftsPostingBudget bounds the postings one SQLite search ranks: bm25() is
// computed for every document matching any term, so a query with common
// terms ("test", "file") would rank most of a large index. The rarest terms
// are kept while their document frequencies sum to at most this budget
// (the rarest always), which keeps a search's cost bounded whatever the
// index size; common terms add little to BM25 anyway (their IDF is low).
const ftsPostingBudget = 20_000

// rareTerms returns the terms that occur in the index, rarest first, within
// ftsPostingBudget (document frequencies over all projects and kinds, from
// the fts5vocab table).
func (t *Tx) rareTerms(ctx context.Context, terms []string) ([]string, error) {
	args := make([]any, len(terms))
	for i, term := range terms {
		args[i] = term
	}
	type df struct {
		term string
		docs int64
	}
	found, err := many(ctx, t, "term frequencies", func(s scanner) (df, error) {
		var d df
		return d, s.Scan(&d.term, &d.docs)
	}, `SELECT term, doc FROM search_vocab WHERE term IN (?`+strings.Repeat(", ?", len(terms)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].docs != found[j].docs {
			return found[i].docs < found[j].docs
		}
		return found[i].term < found[j].term
	})
	out := make([]string, 0, len(found))
	var sum int64
	for i, d := range found {
		if i > 0 && sum+d.docs > ftsPostingBudget {
			break
		}
		sum += d.docs
		out = append(out, d.term)
	}
	return out, nil
}
