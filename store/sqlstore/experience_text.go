package sqlstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

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

// bumpExperienceVersion increments the project's experience version and
// returns the new version.
func (t *Tx) bumpExperienceVersion(ctx context.Context, project string) (int64, error) {
	v, err := one(ctx, t, "experience version", scanOne[int64], `INSERT INTO experience_versions (project, version) VALUES (?, 1)
		ON CONFLICT (project) DO UPDATE SET version = experience_versions.version + 1 RETURNING version`, project)
	if err != nil {
		return 0, fmt.Errorf("bump experience version: %w", err)
	}
	return v, nil
}

// PutEmbedding implements store.ExperienceStorage.
func (t *Tx) PutEmbedding(ctx context.Context, e store.Embedding) error {
	if err := validEmbedding(e); err != nil {
		return err
	}
	v, err := t.bumpExperienceVersion(ctx, e.Project)
	if err != nil {
		return err
	}
	if _, err := t.exec(ctx, `INSERT INTO embeddings (`+embeddingCols+`, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project, kind, ref_id) DO UPDATE SET embedder = excluded.embedder, dim = excluded.dim,
		vector = excluded.vector, updated_at = excluded.updated_at, version = excluded.version`,
		e.Project, string(e.Kind), e.RefID, e.Embedder, e.Dim, encodeVector(e.Vector), at(e.UpdatedAt), v); err != nil {
		return fmt.Errorf("put embedding: %w", err)
	}
	if _, err := t.exec(ctx, `DELETE FROM embedding_removals WHERE project = ? AND kind = ? AND ref_id = ?`,
		e.Project, string(e.Kind), e.RefID); err != nil {
		return fmt.Errorf("put embedding: %w", err)
	}
	return nil
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

// EmbeddingChanges implements store.ExperienceStorage.
func (t *Tx) EmbeddingChanges(ctx context.Context, project string, kind experience.ItemKind, since int64,
	fn func(store.Embedding) error) ([]string, error) {
	err := each(ctx, t, "embeddings", scanEmbedding, fn, `SELECT `+embeddingCols+` FROM embeddings
		WHERE project = ? AND kind = ? AND version > ? ORDER BY version, ref_id`, project, string(kind), since)
	if err != nil {
		return nil, err
	}
	return many(ctx, t, "removed embeddings", scanOne[string], `SELECT ref_id FROM embedding_removals
		WHERE project = ? AND kind = ? AND version > ? ORDER BY version, ref_id`, project, string(kind), since)
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

// StoreID implements store.ExperienceStorage.
func (t *Tx) StoreID(ctx context.Context) (string, error) {
	return one(ctx, t, "store identity", scanOne[string], `SELECT id FROM store_identity`)
}

// ExperienceVersion implements store.ExperienceStorage.
func (t *Tx) ExperienceVersion(ctx context.Context, project string) (int64, error) {
	if v, ok := t.cachedVersion(project); ok { // readtx.go
		return v, nil
	}
	v, err := t.count(ctx, "experience version", versionQuery, project)
	if errors.Is(err, store.ErrNotFound) {
		v, err = 0, nil
	}
	if err == nil {
		t.keepVersion(project, v)
	}
	return v, err
}
