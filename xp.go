package kaizen

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/vecindex"
	"github.com/kaizenhq/kaizen/model"
	"github.com/kaizenhq/kaizen/store"
)

// The experience system (seed 001) on the engine: the models, the vector
// indexes kept in memory, and the per-project lock of the heuristic writer.
// Its actions live in xp_*.go.

// expState is the engine's experience machinery.
type expState struct {
	cfg      experience.Config
	embedder model.Embedder
	// chat is nil when no chat model is configured: extraction then falls
	// back to rules (signals) and the agent-as-extractor flow.
	chat model.Chat
	vecs *vectorCache
	// writers serialises the heuristic writer per project, so two
	// experiences extracted at once cannot both create the same lesson.
	writers keyedMutex
	// skillsDir holds the SKILL.md files: <skillsDir>/<project>/<name>/.
	skillsDir string
}

// embedderMetaKey stores the id of the embedder whose vectors the store holds.
const embedderMetaKey = "experience/embedder"

func newExpState(cfg Config) (*expState, error) {
	x := &expState{cfg: cfg.Experience, embedder: cfg.Embedder, chat: cfg.Chat,
		skillsDir: filepath.Join(cfg.Home, "skills")}
	if x.embedder == nil {
		emb, err := cfg.Model.NewEmbedder()
		if err != nil {
			return nil, &Error{Op: "open", Kind: KindInvalid, Field: "model.embedding", Message: err.Error(), Err: err}
		}
		x.embedder = emb
	}
	if x.chat == nil && cfg.Model.HasChat() {
		chat, err := cfg.Model.NewChat()
		if err != nil {
			return nil, &Error{Op: "open", Kind: KindInvalid, Field: "model.chat", Message: err.Error(), Err: err}
		}
		x.chat = chat
	}
	x.vecs = newVectorCache(x.embedder, newSnapshots(cfg))
	return x, nil
}

// HasChatModel reports whether a chat model is configured for extraction.
func (e *Engine) HasChatModel() bool { return e.x.chat != nil }

// EmbedderID names the embedder of the experience system's vectors.
func (e *Engine) EmbedderID() string { return e.x.embedder.ID() }

// embed embeds texts, wrapping failures as engine errors.
func (e *Engine) embed(ctx context.Context, op string, texts ...string) ([][]float32, error) {
	vecs, err := e.x.embedder.Embed(ctx, texts)
	if err != nil {
		return nil, &Error{Op: op, Kind: KindInternal, Message: "embedding failed: " + err.Error(), Err: err,
			Hint: "check [model.embedding] in kaizen.toml, or remove it to use the offline embedder"}
	}
	if len(vecs) != len(texts) {
		return nil, &Error{Op: op, Kind: KindInternal,
			Message: fmt.Sprintf("embedder returned %d vectors for %d texts", len(vecs), len(texts))}
	}
	return vecs, nil
}

// keyedMutex is a set of mutexes by key, created on demand.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*sync.Mutex{}
	}
	l, ok := k.m[key]
	if !ok {
		l = new(sync.Mutex)
		k.m[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// vectorCache keeps one vector index per (project, item kind), loaded from
// the store and kept current: the engine applies its own writes after they
// commit, and when the store's experience version shows changes made by
// another process, it applies those (store EmbeddingChanges) instead of
// reloading.
type vectorCache struct {
	embedder model.Embedder
	mu       sync.Mutex
	idx      map[vecKey]*vecEntry
	// loads, deltas and restores count full loads, catch-ups and starts
	// from a snapshot (for tests and diagnostics).
	loads, deltas, restores atomic.Int64
	snap                    snapshots
	saving                  sync.WaitGroup // background snapshot writes
}

type vecKey struct {
	project string
	kind    experience.ItemKind
}

type vecEntry struct {
	// load serialises loading; ix, version and header are read under it.
	load    sync.Mutex
	ix      *vecindex.Index
	version int64
	loaded  bool
	// header names the index's snapshot; saved is the version of the last
	// snapshot written or read (-1: none).
	header snapshotHeader
	saved  atomic.Int64
}

func newVectorCache(emb model.Embedder, snap snapshots) *vectorCache {
	return &vectorCache{embedder: emb, idx: map[vecKey]*vecEntry{}, snap: snap}
}

func (c *vectorCache) entry(project string, kind experience.ItemKind) *vecEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := vecKey{project, kind}
	en, ok := c.idx[k]
	if !ok {
		en = &vecEntry{}
		c.idx[k] = en
	}
	return en
}

// index returns the current index of a project's items of one kind, loading
// it (in tx) when it is missing or behind the store.
func (c *vectorCache) index(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind) (*vecindex.Index, error) {
	en := c.entry(project, kind)
	version, err := tx.ExperienceVersion(ctx, project)
	if err != nil {
		return nil, err
	}
	en.load.Lock()
	defer en.load.Unlock()
	if en.loaded && en.version == version {
		return en.ix, nil
	}
	if en.loaded && en.version < version {
		// Behind: apply the changes made since (by another process, or by
		// a write of this one not applied yet) rather than reloading.
		if err := c.catchUp(ctx, tx, project, kind, en.ix, en.version); err != nil {
			en.loaded = false
			return nil, err
		}
		en.version = version
		c.deltas.Add(1)
		return en.ix, nil
	}
	h, err := c.snap.header(ctx, tx, c.embedder.ID(), project, kind, version)
	if err != nil {
		return nil, err
	}
	en.header = h
	if ix, at, ok := c.snap.restore(h); ok {
		if err := c.catchUp(ctx, tx, project, kind, ix, at); err != nil {
			return nil, err
		}
		ix.Train()
		en.ix, en.version, en.loaded = ix, version, true
		en.saved.Store(at)
		c.restores.Add(1)
		return ix, nil
	}
	c.loads.Add(1)
	ix, err := vecindex.New(c.embedder.Dimension(), vecindex.Options{})
	if err != nil {
		return nil, err
	}
	id := c.embedder.ID()
	err = tx.EachEmbedding(ctx, project, kind, id, func(em store.Embedding) error {
		if zeroVector(em.Vector) {
			return nil // nothing to embed (an empty text): never similar
		}
		if err := ix.Add(em.RefID, em.Vector); err != nil {
			return fmt.Errorf("vector of %s %s: %w", kind, em.RefID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ix.Train() // cluster now, while loading, rather than on the first search
	en.ix, en.version, en.loaded = ix, version, true
	en.saved.Store(-1)
	if c.snap.dir != "" {
		c.saving.Go(func() { c.saveSnapshot(en, h, ix) })
	}
	return ix, nil
}

// saveSnapshot writes the snapshot of an index as of h.Version, unless a
// snapshot at that version or later was written meanwhile.
func (c *vectorCache) saveSnapshot(en *vecEntry, h snapshotHeader, ix *vecindex.Index) {
	if en.saved.Load() >= h.Version {
		return
	}
	if err := c.snap.save(h, ix); err != nil {
		c.snap.logger.Warn("vector index snapshot not saved", "project", h.Project, "kind", h.Kind, "err", err)
		return
	}
	en.saved.Store(h.Version)
}

// close waits for the background snapshot writes, then saves the indexes
// that moved on since their last snapshot, so the next process starts
// from where this one stopped.
func (c *vectorCache) close() {
	c.saving.Wait()
	if c.snap.dir == "" {
		return
	}
	c.mu.Lock()
	entries := make([]*vecEntry, 0, len(c.idx))
	for _, en := range c.idx {
		entries = append(entries, en)
	}
	c.mu.Unlock()
	for _, en := range entries {
		en.load.Lock()
		if en.loaded && en.header.StoreID != "" && en.saved.Load() != en.version {
			h := en.header
			h.Version = en.version
			c.saveSnapshot(en, h, en.ix)
		}
		en.load.Unlock()
	}
}

// catchUp applies to ix, current as of version since, the vectors written
// and removed after since.
func (c *vectorCache) catchUp(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind,
	ix *vecindex.Index, since int64) error {
	id := c.embedder.ID()
	removed, err := tx.EmbeddingChanges(ctx, project, kind, since, func(em store.Embedding) error {
		if em.Embedder != id || zeroVector(em.Vector) {
			ix.Remove(em.RefID) // re-embedded by another embedder, or nothing to embed
			return nil
		}
		if err := ix.Add(em.RefID, em.Vector); err != nil {
			return fmt.Errorf("vector of %s %s: %w", kind, em.RefID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ref := range removed {
		ix.Remove(ref)
	}
	return nil
}

// vecChange is a write to apply to a cached index after its commit.
type vecChange struct {
	kind   experience.ItemKind
	id     string
	vec    []float32 // nil: remove
	remove bool
}

// apply applies a committed transaction's changes to the cached indexes of
// a project, when the cache was current before that transaction (from is
// the store's version then, to the version after it); otherwise the next
// read reloads.
func (c *vectorCache) apply(project string, from, to int64, changes []vecChange) {
	kinds := map[experience.ItemKind][]vecChange{}
	for _, ch := range changes {
		kinds[ch.kind] = append(kinds[ch.kind], ch)
	}
	// Every kind of the project shares the version counter: bring each
	// loaded index forward, or drop it.
	for _, kind := range experience.ItemKinds {
		en := c.entry(project, kind)
		en.load.Lock()
		if en.loaded && en.version == from {
			ok := true
			for _, ch := range kinds[kind] {
				if ch.remove || zeroVector(ch.vec) {
					en.ix.Remove(ch.id)
					continue
				}
				if err := en.ix.Add(ch.id, ch.vec); err != nil {
					ok = false
					break
				}
			}
			if ok {
				en.version = to
			} else {
				en.loaded = false
			}
		}
		en.load.Unlock()
	}
}

// forget drops every cached index (after an import or a re-embedding).
func (c *vectorCache) forget() {
	c.mu.Lock()
	c.idx = map[vecKey]*vecEntry{}
	c.mu.Unlock()
}

// vecWriter collects the index changes of one write transaction and the
// store version before it.
type vecWriter struct {
	e       *Engine
	project string
	from    int64
	changes []vecChange
}

// begin records the store's version before the transaction's writes.
func (e *Engine) vecWriter(ctx context.Context, tx store.Tx, project string) (*vecWriter, error) {
	v, err := tx.ExperienceVersion(ctx, project)
	if err != nil {
		return nil, err
	}
	return &vecWriter{e: e, project: project, from: v}, nil
}

// put stores an item's search document and vector in tx and remembers the
// index change.
func (w *vecWriter) put(ctx context.Context, tx store.Tx, kind experience.ItemKind, id, text string, vec []float32, now time.Time) error {
	if err := tx.PutSearchDoc(ctx, w.project, kind, id, experience.SearchText(text)); err != nil {
		return err
	}
	if err := tx.PutEmbedding(ctx, store.Embedding{Project: w.project, Kind: kind, RefID: id,
		Embedder: w.e.x.embedder.ID(), Dim: len(vec), Vector: vec, UpdatedAt: now}); err != nil {
		return err
	}
	w.changes = append(w.changes, vecChange{kind: kind, id: id, vec: vec})
	return nil
}

// remove drops an item from full text and vectors.
func (w *vecWriter) remove(ctx context.Context, tx store.Tx, kind experience.ItemKind, id string) error {
	if _, err := tx.DeleteSearchDoc(ctx, w.project, kind, id); err != nil {
		return err
	}
	w.changes = append(w.changes, vecChange{kind: kind, id: id, remove: true})
	return nil
}

// finish reads the version after the writes (call last in the transaction)
// and returns the function to run after the commit.
func (w *vecWriter) finish(ctx context.Context, tx store.Tx) (func(), error) {
	if len(w.changes) == 0 {
		return func() {}, nil
	}
	to, err := tx.ExperienceVersion(ctx, w.project)
	if err != nil {
		return nil, err
	}
	return func() { w.e.x.vecs.apply(w.project, w.from, to, w.changes) }, nil
}

// zeroVector reports a vector with no direction (the embedding of a text
// with nothing to embed).
func zeroVector(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Embedder returns the embedder of the experience system's vectors.
func (e *Engine) Embedder() model.Embedder { return e.x.embedder }

// pageQuery validates what every listing takes: the project, the page, and
// optional ids given as field name, value pairs (empty values are absent).
// It returns the project and the page's limit.
func (e *Engine) pageQuery(op, project string, limit, offset int, ids ...string) (string, int, error) {
	project, err := e.project(op, project)
	if err != nil {
		return "", 0, err
	}
	if limit, err = pageLimit(op, limit, offset); err != nil {
		return "", 0, err
	}
	return project, limit, validOptionalIDs(op, ids...)
}

// validOptionalIDs checks ids given as field name, value pairs; an empty
// value is an absent id.
func validOptionalIDs(op string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		if err := validID(op, pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// listPage counts a listing and reads its page in one read transaction.
// The page is never nil, so every surface answers an empty list as [].
func listPage[T any](ctx context.Context, e *Engine, op string, count func(store.Tx) (int64, error),
	list func(store.Tx) ([]T, error)) (int64, []T, error) {
	var total int64
	var items []T
	err := e.view(ctx, op, func(tx store.Tx) error {
		var err error
		if total, err = count(tx); err != nil {
			return err
		}
		items, err = list(tx)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	if items == nil {
		items = []T{}
	}
	return total, items, nil
}

// VectorIndexStats counts how the engine's cached vector indexes were kept
// current: full loads from the store, starts from a snapshot, and
// catch-ups that applied only the changes other processes made.
type VectorIndexStats struct {
	Loads    int64 `json:"loads"`
	CatchUps int64 `json:"catch_ups"`
	// Restores counts indexes started from a snapshot saved by an earlier
	// process (then caught up).
	Restores int64 `json:"restores"`
}

// VectorIndexStats reports the vector cache's loads and catch-ups since the
// engine opened.
func (e *Engine) VectorIndexStats() VectorIndexStats {
	return VectorIndexStats{Loads: e.x.vecs.loads.Load(), CatchUps: e.x.vecs.deltas.Load(),
		Restores: e.x.vecs.restores.Load()}
}

// WarmVectorIndexes loads the vector index of every project's items of
// every kind, so that no recall pays for loading one; a daemon runs it in
// the background after opening. It stops at the first error or when ctx
// ends, and reports the number of indexes loaded.
func (e *Engine) WarmVectorIndexes(ctx context.Context) (int, error) {
	const op = "warm vector indexes"
	projects, err := e.Projects(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, project := range projects {
		for _, kind := range experience.ItemKinds {
			err := e.view(ctx, op, func(tx store.Tx) error {
				_, err := e.x.vecs.index(ctx, tx, project, kind)
				return err
			})
			if err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
