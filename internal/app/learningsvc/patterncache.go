package learningsvc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// patternCache keeps each project's patterns and maturity records in
// memory for plan guidance, refreshed incrementally from the store's
// pattern version (store.PatternVersion): a guidance request reads the
// version and the patterns changed since the cached one in the same
// snapshot (after a deletion, also the ids of the current patterns:
// afterReset), so the cache is exact even when other processes or servers
// write to the same database. A project's state is an immutable snapshot
// (a new one is built when something changed), so concurrent readers
// never see it change under them.
//
// A snapshot shares memory with the one before it: the patterns loaded in
// full form a base (compact rows and an id index, never modified; see
// patternRow: the full record of a pattern is read by key when guidance
// evaluates it), and the
// patterns changed or added since are an overlay of their own. A change
// copies the overlay, not the project's patterns; the base is rebuilt from
// the current records only when the overlay has grown past 512 patterns
// and a 64th of it (amortised O(1) per change; every request evaluates the
// overlay's patterns, so it is kept small). The guidance index of a base
// (guidanceBase) is shared by every snapshot on that base. Cached records
// carry no example task ids (Pattern.ExampleTasks is nil): guidance never
// shows them, and they were a quarter of the cache's memory. A base is
// saved to a file after a full load (patternSnapshots), so that the first
// request of a new process starts from it and reads only the changes.
type patternCache struct {
	mu       sync.Mutex
	projects map[string]*cachedProject
	limit    int
	snaps    *patternSnapshots // nil: none
	// fullLoads counts the loads of every pattern of a project (tests).
	fullLoads atomic.Int64
}

type cachedProject struct {
	version int64
	base    *patternBase
	// overlay holds the records changed or added since base was built;
	// added lists the ids not in base, in the order they arrived.
	overlay map[string]*store.PatternRecord
	added   []string
	used    time.Time
}

// rebase returns every pattern of the snapshot as one new base: the rows
// in the store's order (base order, changed records in place, added ones
// last) and the id order merged by layout, not sorted again.
func (p *cachedProject) rebase() *patternBase {
	n, row, byID := p.layout()
	rows := make([]patternRow, n)
	for i := range rows {
		rows[i] = *row(i)
	}
	return newPatternBaseSorted(rows, byID)
}

func newPatternCache(limit int) *patternCache {
	return &patternCache{projects: map[string]*cachedProject{}, limit: limit}
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
		stale, err := tooStale(ctx, tx, project, cur)
		if err != nil {
			return nil, err
		}
		if stale { // see patternstale.go: load every pattern below
			break
		}
		next, err := c.advance(ctx, tx, project, cur, v.Version)
		if err != nil {
			return nil, err
		}
		c.store(project, next, cur)
		return next, nil
	case cur != nil && v.Version > cur.version: // a pattern was deleted since the cached state
		next, ok, err := c.afterReset(ctx, tx, project, cur, v)
		if err != nil {
			return nil, err
		}
		if ok {
			c.store(project, next, cur)
			return next, nil
		}
	}
	// First use: start from the saved snapshot of the project's base when
	// it is usable (made from this database at a version not newer than
	// tx's), brought up to date (after a deletion since it, see
	// afterReset), else load every pattern.
	if cur == nil {
		if from, ok := c.snaps.restore(ctx, tx, project, v); ok {
			next, ok := from, true
			switch {
			case v.ResetVersion > from.version:
				next, ok, err = c.afterReset(ctx, tx, project, from, v)
			case v.Version > from.version:
				var stale bool
				if stale, err = tooStale(ctx, tx, project, from); err == nil && !stale {
					next, err = c.advance(ctx, tx, project, from, v.Version)
				}
				ok = !stale
			}
			if err != nil {
				return nil, err
			}
			if ok {
				c.store(project, next, cur)
				return next, nil
			}
		}
	}
	c.fullLoads.Add(1)
	base, err := loadBase(ctx, tx, project)
	if err != nil {
		return nil, err
	}
	next := &cachedProject{version: v.Version, base: base}
	c.snaps.saveLater(ctx, tx, project, next.version, next.base)
	c.store(project, next, cur)
	return next, nil
}

// advance returns cur brought to version by the patterns changed since.
func (c *patternCache) advance(ctx context.Context, tx store.Tx, project string, cur *cachedProject, version int64) (*cachedProject, error) {
	delta, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{ChangedAfter: cur.version})
	if err != nil {
		return nil, err
	}
	next := &cachedProject{version: version, base: cur.base,
		overlay: make(map[string]*store.PatternRecord, len(cur.overlay)+len(delta)), added: cur.added}
	for id, r := range cur.overlay {
		next.overlay[id] = r
	}
	grown := false
	for i := range delta {
		r := &delta[i]
		r.Pattern.ExampleTasks = nil // see patternCache
		_, inBase := cur.base.pos(r.Pattern.ID)
		if _, seen := next.overlay[r.Pattern.ID]; !inBase && !seen {
			if !grown { // added is shared with cur: copy before the first append
				next.added = append(make([]string, 0, len(cur.added)+len(delta)), cur.added...)
				grown = true
			}
			next.added = append(next.added, r.Pattern.ID)
		}
		next.overlay[r.Pattern.ID] = r
	}
	if len(next.overlay) > max(512, len(next.base.rows)/64) {
		next = &cachedProject{version: version, base: next.rebase()}
		c.snaps.saveLater(ctx, tx, project, next.version, next.base)
	}
	return next, nil
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
