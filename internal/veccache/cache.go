// Package veccache keeps the experience system's vector indexes in memory:
// one internal/vecindex index per (project, item kind), loaded from the
// store, kept current after the engine's own commits, caught up with other
// processes' writes from the store's change log, and saved as snapshots
// under <home>/vectors so that the next process starts from them.
package veccache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/vecindex"
	"github.com/kaizenhq/kaizen/model"
	"github.com/kaizenhq/kaizen/store"
)

// Cache keeps one vector index per (project, item kind), loaded from
// the store and kept current: the engine applies its own writes after they
// commit, and when the store's experience version shows changes made by
// another process, it applies those (store EmbeddingChanges) instead of
// reloading.
type Cache struct {
	embedder model.Embedder
	mu       sync.Mutex
	idx      map[key]*entry
	// loads, deltas and restores count full loads, catch-ups and starts
	// from a snapshot (for tests and diagnostics).
	loads, deltas, restores atomic.Int64
	snap                    Snapshots
	saving                  sync.WaitGroup // background snapshot writes
}

type key struct {
	project string
	kind    experience.ItemKind
}

type entry struct {
	// load serialises loading; ix, version and header are read under it.
	load    sync.Mutex
	ix      *vecindex.Index
	version int64
	loaded  bool
	// header names the index's snapshot; saved is the version of the last
	// snapshot written or read (-1: none).
	header header
	saved  atomic.Int64
}

func New(emb model.Embedder, snap Snapshots) *Cache {
	return &Cache{embedder: emb, idx: map[key]*entry{}, snap: snap}
}

func (c *Cache) entryFor(project string, kind experience.ItemKind) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key{project, kind}
	en, ok := c.idx[k]
	if !ok {
		en = &entry{}
		c.idx[k] = en
	}
	return en
}

// index returns the current index of a project's items of one kind, loading
// it (in tx) when it is missing or behind the store.
func (c *Cache) Index(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind) (*vecindex.Index, error) {
	en := c.entryFor(project, kind)
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
		if ZeroVector(em.Vector) {
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
func (c *Cache) saveSnapshot(en *entry, h header, ix *vecindex.Index) {
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
func (c *Cache) Close() {
	c.saving.Wait()
	if c.snap.dir == "" {
		return
	}
	c.mu.Lock()
	entries := make([]*entry, 0, len(c.idx))
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
func (c *Cache) catchUp(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind,
	ix *vecindex.Index, since int64) error {
	id := c.embedder.ID()
	removed, err := tx.EmbeddingChanges(ctx, project, kind, since, func(em store.Embedding) error {
		if em.Embedder != id || ZeroVector(em.Vector) {
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

// Change is a write to apply to a cached index after its commit.
type Change struct {
	Kind   experience.ItemKind
	ID     string
	Vec    []float32 // nil with Remove
	Remove bool
}

// apply applies a committed transaction's changes to the cached indexes of
// a project, when the cache was current before that transaction (from is
// the store's version then, to the version after it); otherwise the next
// read reloads.
func (c *Cache) Apply(project string, from, to int64, changes []Change) {
	kinds := map[experience.ItemKind][]Change{}
	for _, ch := range changes {
		kinds[ch.Kind] = append(kinds[ch.Kind], ch)
	}
	// Every kind of the project shares the version counter: bring each
	// loaded index forward, or drop it.
	for _, kind := range experience.ItemKinds {
		en := c.entryFor(project, kind)
		en.load.Lock()
		if en.loaded && en.version == from {
			ok := true
			for _, ch := range kinds[kind] {
				if ch.Remove || ZeroVector(ch.Vec) {
					en.ix.Remove(ch.ID)
					continue
				}
				if err := en.ix.Add(ch.ID, ch.Vec); err != nil {
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
func (c *Cache) Forget() {
	c.mu.Lock()
	c.idx = map[key]*entry{}
	c.mu.Unlock()
}

// ZeroVector reports a vector with no direction (the embedding of a text
// with nothing to embed).
func ZeroVector(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Stats counts how the engine's cached vector indexes were kept
// current: full loads from the store, starts from a snapshot, and
// catch-ups that applied only the changes other processes made.
type Stats struct {
	Loads    int64 `json:"loads"`
	CatchUps int64 `json:"catch_ups"`
	// Restores counts indexes started from a snapshot saved by an earlier
	// process (then caught up).
	Restores int64 `json:"restores"`
}

// Stats reports the cache's loads, catch-ups and restores since it was
// created.
func (c *Cache) Stats() Stats {
	return Stats{Loads: c.loads.Load(), CatchUps: c.deltas.Load(), Restores: c.restores.Load()}
}
