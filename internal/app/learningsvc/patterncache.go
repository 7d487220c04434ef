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
type patternCache struct {
	mu       sync.Mutex
	projects map[string]*cachedProject
	limit    int
}

type cachedProject struct {
	version int64
	records []*store.PatternRecord
	index   map[string]int // pattern id → position in records
	used    time.Time
}

func newPatternCache(limit int) *patternCache {
	return &patternCache{projects: map[string]*cachedProject{}, limit: limit}
}

// records returns the project's pattern records as of tx's snapshot,
// loading only what changed since the cached version.
func (c *patternCache) records(ctx context.Context, tx store.Tx, project string) ([]*store.PatternRecord, error) {
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
		return cur.records, nil
	case cur != nil && v.ResetVersion <= cur.version && v.Version > cur.version:
		delta, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{ChangedAfter: cur.version})
		if err != nil {
			return nil, err
		}
		next := &cachedProject{version: v.Version, records: make([]*store.PatternRecord, len(cur.records), len(cur.records)+len(delta)), index: cur.index}
		copy(next.records, cur.records)
		added := false
		for i := range delta {
			r := &delta[i]
			if at, ok := cur.index[r.Pattern.ID]; ok {
				next.records[at] = r
				continue
			}
			if !added { // copy the index before the first addition
				next.index = make(map[string]int, len(cur.index)+len(delta))
				for k, at := range cur.index {
					next.index[k] = at
				}
				added = true
			}
			next.index[r.Pattern.ID] = len(next.records)
			next.records = append(next.records, r)
		}
		c.store(project, next, cur)
		return next.records, nil
	default: // first use, or a pattern was deleted since the cached state
		all, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{})
		if err != nil {
			return nil, err
		}
		next := &cachedProject{version: v.Version, records: make([]*store.PatternRecord, len(all)), index: make(map[string]int, len(all))}
		for i := range all {
			next.records[i] = &all[i]
			next.index[all[i].Pattern.ID] = i
		}
		c.store(project, next, cur)
		return next.records, nil
	}
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
