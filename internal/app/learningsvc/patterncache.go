package learningsvc

import (
	"context"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// patternCache keeps each project's patterns and maturity records in
// memory for plan guidance, refreshed incrementally from the store's
// pattern version (store.PatternVersion): a guidance request reads the
// version and the patterns changed since the cached one in the same
// snapshot, so the cache is exact even when other processes or servers
// write to the same database. A project's state is an immutable snapshot
// (a new one is built when something changed), so concurrent readers
// never see it change under them.
//
// A snapshot shares memory with the one before it: the records loaded in
// full form a base (a slice and an id index, never modified), and the
// patterns changed or added since are an overlay of their own. A change
// copies the overlay, not the project's patterns; the base is rebuilt from
// the current records only when the overlay has grown past 512 patterns
// and a 64th of it (amortised O(1) per change; every request evaluates the
// overlay's patterns, so it is kept small). The guidance index of a base
// (guidanceBase) is shared by every snapshot on that base. Cached records
// carry no example task ids (Pattern.ExampleTasks is nil): guidance never
// shows them, and they were a quarter of the cache's memory.
type patternCache struct {
	mu       sync.Mutex
	projects map[string]*cachedProject
	limit    int
}

// patternBase is an immutable set of records with its id index and, built
// at the first guidance request on it, its guidance index.
type patternBase struct {
	records []*store.PatternRecord
	index   map[string]int // pattern id → position in records

	gmu sync.Mutex
	g   *guidanceBase
	cs  *choiceSet
}

type cachedProject struct {
	version int64
	base    *patternBase
	// overlay holds the records changed or added since base was built;
	// added lists the ids not in base, in the order they arrived.
	overlay map[string]*store.PatternRecord
	added   []string
	used    time.Time

	allOnce sync.Once
	all     []*store.PatternRecord
}

// records is every record of the snapshot in the store's order (base
// order, changed records in place, added ones last), materialised once per
// snapshot for the callers that walk every pattern.
func (p *cachedProject) records() []*store.PatternRecord {
	p.allOnce.Do(func() {
		if len(p.overlay) == 0 {
			p.all = p.base.records
			return
		}
		all := make([]*store.PatternRecord, len(p.base.records), len(p.base.records)+len(p.added))
		for i, r := range p.base.records {
			if o, ok := p.overlay[r.Pattern.ID]; ok {
				r = o
			}
			all[i] = r
		}
		for _, id := range p.added {
			all = append(all, p.overlay[id])
		}
		p.all = all
	})
	return p.all
}

func newPatternCache(limit int) *patternCache {
	return &patternCache{projects: map[string]*cachedProject{}, limit: limit}
}

// records returns the project's pattern records as of tx's snapshot,
// loading only what changed since the cached version.
func (c *patternCache) records(ctx context.Context, tx store.Tx, project string) ([]*store.PatternRecord, error) {
	p, err := c.snapshot(ctx, tx, project)
	if err != nil {
		return nil, err
	}
	return p.records(), nil
}

// snapshot returns the project's cached state as of tx's snapshot.
func (c *patternCache) snapshot(ctx context.Context, tx store.Tx, project string) (*cachedProject, error) {
	v, err := tx.PatternVersion(ctx, project)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	cur := c.projects[project]
	c.mu.Unlock()
	switch {
	case cur != nil && cur.version == v.Version:
		c.touch(project, cur)
		return cur, nil
	case cur != nil && v.ResetVersion <= cur.version && v.Version > cur.version:
		delta, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{ChangedAfter: cur.version})
		if err != nil {
			return nil, err
		}
		next := &cachedProject{version: v.Version, base: cur.base,
			overlay: make(map[string]*store.PatternRecord, len(cur.overlay)+len(delta)), added: cur.added}
		for id, r := range cur.overlay {
			next.overlay[id] = r
		}
		grown := false
		for i := range delta {
			r := &delta[i]
			r.Pattern.ExampleTasks = nil // see patternCache
			_, inBase := cur.base.index[r.Pattern.ID]
			if _, seen := next.overlay[r.Pattern.ID]; !inBase && !seen {
				if !grown { // added is shared with cur: copy before the first append
					next.added = append(make([]string, 0, len(cur.added)+len(delta)), cur.added...)
					grown = true
				}
				next.added = append(next.added, r.Pattern.ID)
			}
			next.overlay[r.Pattern.ID] = r
		}
		if len(next.overlay) > max(512, len(next.base.records)/64) {
			next = &cachedProject{version: v.Version, base: newPatternBase(next.records())}
		}
		c.store(project, next, cur)
		return next, nil
	default: // first use, or a pattern was deleted since the cached state
		all, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{})
		if err != nil {
			return nil, err
		}
		recs := make([]*store.PatternRecord, len(all))
		for i := range all {
			all[i].Pattern.ExampleTasks = nil // see patternCache
			recs[i] = &all[i]
		}
		next := &cachedProject{version: v.Version, base: newPatternBase(recs)}
		c.store(project, next, cur)
		return next, nil
	}
}

func newPatternBase(recs []*store.PatternRecord) *patternBase {
	b := &patternBase{records: recs, index: make(map[string]int, len(recs))}
	for i, r := range recs {
		b.index[r.Pattern.ID] = i
	}
	return b
}

func (c *patternCache) touch(project string, p *cachedProject) {
	c.mu.Lock()
	p.used = time.Now()
	c.mu.Unlock()
}

// store installs a newer snapshot (unless a concurrent request installed
// an even newer one) and evicts the least recently used project beyond
// the limit.
func (c *patternCache) store(project string, next, prev *cachedProject) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next.used = time.Now()
	if cur := c.projects[project]; cur != nil && cur != prev && cur.version >= next.version {
		return
	}
	c.projects[project] = next
	for len(c.projects) > c.limit {
		var oldest string
		for name, p := range c.projects {
			if oldest == "" || p.used.Before(c.projects[oldest].used) {
				oldest = name
			}
		}
		delete(c.projects, oldest)
	}
}
