package learningsvc

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// contextCache keeps, per project, the index of recent outcomes that
// task-conditioned ranking learns from (learning.ContextIndex), refreshed
// from the store by the newest outcome: a plan reads the newest outcome in
// its snapshot and loads only the outcomes recorded since the cached one,
// so the index follows other processes' writes too. Deleting outcomes
// invalidates it (forget).
type contextCache struct {
	mu       sync.Mutex
	projects map[string]*cachedContext
	history  int
}

type cachedContext struct {
	index *learning.ContextIndex
	// newest is the newest outcome indexed (recorded_at, id), and ids the
	// outcomes recorded at that same instant: the next refresh reads from
	// that instant on (inclusive) and skips them.
	newest learning.Outcome
	ids    map[string]bool
}

func newContextCache(history int) *contextCache {
	return &contextCache{projects: map[string]*cachedContext{}, history: max(history, 1)}
}

func contextEvent(o store.OutcomeContext) learning.ContextEvent {
	return learning.ContextEvent{OutcomeID: o.ID, TaskID: o.TaskID, Task: o.Task, Tags: slices.Clone(o.Tags),
		Patterns: slices.Clone(o.Patterns), Success: o.Success, At: o.Timestamp}
}

// index returns the project's context index as of tx's snapshot.
func (c *contextCache) index(ctx context.Context, tx store.Tx, project string) (*learning.ContextIndex, error) {
	newest, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{Limit: 1})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	cur := c.projects[project]
	c.mu.Unlock()
	switch {
	case len(newest) == 0:
		return learning.NewContextIndex(nil), nil
	case cur != nil && cur.newest.ID == newest[0].ID:
		return cur.index, nil
	case cur != nil && !newest[0].RecordedAt.Before(cur.newest.RecordedAt):
		since, err := outcomeContexts(ctx, tx, project, cur.newest.RecordedAt, c.history)
		if err != nil {
			return nil, err
		}
		var add []learning.ContextEvent
		ids := map[string]bool{}
		for i := len(since) - 1; i >= 0; i-- { // oldest first
			o := since[i]
			if !cur.ids[o.ID] {
				add = append(add, contextEvent(o))
			}
			if o.RecordedAt.Equal(newest[0].RecordedAt) {
				ids[o.ID] = true
			}
		}
		next := &cachedContext{index: cur.index.Add(c.history, add...), newest: newest[0], ids: ids}
		c.store(project, next)
		return next.index, nil
	}
	// First use, or the newest outcome is older than the cached one (a
	// deletion): load the newest history outcomes.
	outs, err := outcomeContexts(ctx, tx, project, time.Time{}, c.history)
	if err != nil {
		return nil, err
	}
	events := make([]learning.ContextEvent, 0, len(outs))
	ids := map[string]bool{}
	for i := len(outs) - 1; i >= 0; i-- {
		events = append(events, contextEvent(outs[i]))
		if outs[i].RecordedAt.Equal(newest[0].RecordedAt) {
			ids[outs[i].ID] = true
		}
	}
	next := &cachedContext{index: learning.NewContextIndex(events), newest: newest[0], ids: ids}
	c.store(project, next)
	return next.index, nil
}

func (c *contextCache) store(project string, next *cachedContext) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.projects[project] = next
	if len(c.projects) > 64 {
		for name := range c.projects {
			if name != project {
				delete(c.projects, name)
				break
			}
		}
	}
}

// forget drops a project's index (after outcomes were deleted or
// imported).
func (c *contextCache) forget(project string) {
	c.mu.Lock()
	delete(c.projects, project)
	c.mu.Unlock()
}

// outcomeContexts lists the contexts of the project's newest outcomes
// (recorded at or after since when it is not zero, at most limit), newest
// first: through store.OutcomeContextReader when the store has it.
func outcomeContexts(ctx context.Context, tx store.Tx, project string, since time.Time, limit int) ([]store.OutcomeContext, error) {
	if r, ok := tx.(store.OutcomeContextReader); ok {
		return r.OutcomeContexts(ctx, project, since, limit)
	}
	outs, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{Since: since, Limit: limit})
	if err != nil {
		return nil, err
	}
	cs := make([]store.OutcomeContext, len(outs))
	for i, o := range outs {
		cs[i] = store.OutcomeContext{ID: o.ID, TaskID: o.TaskID, Task: o.Task, Tags: o.Tags, Patterns: o.Patterns,
			Success: o.Success, Timestamp: o.Timestamp, RecordedAt: o.RecordedAt}
	}
	return cs, nil
}
