package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// searchDoc is an indexed document: its term frequencies and length.
type searchDoc struct {
	tf     map[string]int
	length int
}

func itemKey(kind experience.ItemKind, refID string) string { return string(kind) + "\x00" + refID }

func postingKey(kind experience.ItemKind, term string) string { return string(kind) + "\x00" + term }

// setInt64 sets *p and records how to restore it.
func setInt64(u *undoLog, p *int64, v int64) {
	old := *p
	*p = v
	u.push(func() { *p = old })
}

func cloneEmbedding(e store.Embedding) store.Embedding {
	e.Vector = list(e.Vector)
	e.UpdatedAt = wall(e.UpdatedAt)
	return e
}

// PutEmbedding implements store.ExperienceStorage.
func (t *tx) PutEmbedding(ctx context.Context, e store.Embedding) error {
	if e.Dim <= 0 || e.Dim != len(e.Vector) {
		return fmt.Errorf("embedding of %s %s: dim %d with a vector of %d values: %w",
			e.Kind, e.RefID, e.Dim, len(e.Vector), store.ErrInvalid)
	}
	x, err := t.expWrite(ctx, e.Project)
	if err != nil {
		return err
	}
	key := itemKey(e.Kind, e.RefID)
	put(t.undo, x.embeddings, key, stored(e, cloneEmbedding))
	setInt64(t.undo, &x.version, x.version+1)
	put(t.undo, x.embVersions, key, x.version)
	if _, ok := x.removals[key]; ok {
		remove(t.undo, x.removals, key)
	}
	return nil
}

// EmbeddingChanges implements store.ExperienceStorage.
func (t *tx) EmbeddingChanges(ctx context.Context, project string, kind experience.ItemKind, since int64,
	fn func(store.Embedding) error) ([]string, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []string{}, err
	}
	byVersion := func(versions map[string]int64) []string {
		var keys []string
		for key, v := range versions {
			if v > since && strings.HasPrefix(key, string(kind)+"\x00") {
				keys = append(keys, key)
			}
		}
		slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(versions[a], versions[b]), strings.Compare(a, b)) })
		return keys
	}
	for _, key := range byVersion(x.embVersions) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := fn(cloneEmbedding(*x.embeddings[key])); err != nil {
			return nil, err
		}
	}
	removed := []string{}
	for _, key := range byVersion(x.removals) {
		removed = append(removed, strings.TrimPrefix(key, string(kind)+"\x00"))
	}
	return removed, nil
}

// GetEmbedding implements store.ExperienceStorage.
func (t *tx) GetEmbedding(ctx context.Context, project string, kind experience.ItemKind, refID string) (store.Embedding, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return store.Embedding{}, err
	}
	if x != nil {
		if e, ok := x.embeddings[itemKey(kind, refID)]; ok {
			return cloneEmbedding(*e), nil
		}
	}
	return store.Embedding{}, notFound("embedding of", project, string(kind)+" "+refID)
}

// EachEmbedding implements store.ExperienceStorage.
func (t *tx) EachEmbedding(ctx context.Context, project string, kind experience.ItemKind, embedder string, fn func(store.Embedding) error) error {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return err
	}
	found := sorted(selectAll(x.embeddings, func(e *store.Embedding) bool {
		return e.Kind == kind && e.Embedder == embedder
	}), func(a, b *store.Embedding) int { return strings.Compare(a.RefID, b.RefID) })
	return each(ctx, found, cloneEmbedding, fn)
}

// StaleEmbeddings implements store.ExperienceStorage.
func (t *tx) StaleEmbeddings(ctx context.Context, project string, kind experience.ItemKind, embedder string, dim int, limit int) ([]string, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []string{}, err
	}
	out := []string{}
	prefix := string(kind) + "\x00"
	for key := range x.docs {
		refID, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		if e := x.embeddings[key]; e == nil || e.Embedder != embedder || e.Dim != dim {
			out = append(out, refID)
		}
	}
	slices.Sort(out)
	return page(out, limit, 0), nil
}

// PutSearchDoc implements store.ExperienceStorage.
func (t *tx) PutSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID, text string) error {
	x, err := t.expWrite(ctx, project)
	if err != nil {
		return err
	}
	x.unindex(t.undo, kind, refID)
	terms := store.TextTerms(text)
	doc := &searchDoc{tf: map[string]int{}, length: len(terms)}
	for _, term := range terms {
		doc.tf[term]++
	}
	put(t.undo, x.docs, itemKey(kind, refID), doc)
	for term := range doc.tf {
		x.postings.add(t.undo, postingKey(kind, term), refID)
	}
	put(t.undo, x.docTerms, kind, x.docTerms[kind]+int64(doc.length))
	put(t.undo, x.docCount, kind, x.docCount[kind]+1)
	setInt64(t.undo, &x.version, x.version+1)
	return nil
}

// unindex removes a document from the index; false when it was not there.
func (x *experienceData) unindex(u *undoLog, kind experience.ItemKind, refID string) bool {
	key := itemKey(kind, refID)
	doc, ok := x.docs[key]
	if !ok {
		return false
	}
	for term := range doc.tf {
		x.postings.remove(u, postingKey(kind, term), refID)
	}
	remove(u, x.docs, key)
	put(u, x.docTerms, kind, x.docTerms[kind]-int64(doc.length))
	put(u, x.docCount, kind, x.docCount[kind]-1)
	return true
}

// DeleteSearchDoc implements store.ExperienceStorage.
func (t *tx) DeleteSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID string) (bool, error) {
	x, err := t.expExisting(ctx, project)
	if err != nil || x == nil {
		return false, err
	}
	removed := x.unindex(t.undo, kind, refID)
	key := itemKey(kind, refID)
	_, embedded := x.embeddings[key]
	if embedded {
		remove(t.undo, x.embeddings, key)
		remove(t.undo, x.embVersions, key)
		removed = true
	}
	if removed {
		setInt64(t.undo, &x.version, x.version+1)
	}
	if embedded {
		put(t.undo, x.removals, key, x.version)
	}
	return removed, nil
}

// SearchText implements store.ExperienceStorage with Okapi BM25 (k1 1.2,
// b 0.75) over the project's documents of the kind.
func (t *tx) SearchText(ctx context.Context, project string, kind experience.ItemKind, tokens []string, limit int) ([]store.TextHit, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []store.TextHit{}, err
	}
	n := float64(x.docCount[kind])
	if n == 0 {
		return []store.TextHit{}, nil
	}
	avgdl := float64(x.docTerms[kind]) / n
	scores := map[string]float64{}
	for _, term := range store.QueryTerms(tokens) {
		refs := x.postings[postingKey(kind, term)]
		if len(refs) == 0 {
			continue
		}
		df := float64(len(refs))
		idf := store.BM25IDF(n, df)
		for refID := range refs {
			doc := x.docs[itemKey(kind, refID)]
			scores[refID] += store.BM25Term(idf, float64(doc.tf[term]), float64(doc.length), avgdl)
		}
	}
	hits := make([]store.TextHit, 0, len(scores))
	for refID, score := range scores {
		hits = append(hits, store.TextHit{RefID: refID, Score: score})
	}
	slices.SortFunc(hits, func(a, b store.TextHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.RefID, b.RefID))
	})
	return page(hits, limit, 0), nil
}

// StoreID implements store.ExperienceStorage.
func (t *tx) StoreID(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return t.s.id, nil
}

// ExperienceVersion implements store.ExperienceStorage.
func (t *tx) ExperienceVersion(ctx context.Context, project string) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return x.version, nil
}
