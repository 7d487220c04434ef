package sqlstore

import (
	"context"
	"fmt"

	"github.com/kaizenhq/kaizen/learning"
)

// The aggregate cache keeps the rows that every write touches (criteria,
// patterns, maturity records) in memory for the life of one transaction:
// each is read at most once and written at most once, at Flush. Under group
// commit one transaction serves many requests that update the same few rows,
// so this turns N reads and N writes of a hot row into one of each.
//
// Requests inside the transaction are delimited by Mark/Undo: Undo reverts
// the cache to a mark when the request's savepoint is rolled back,
// including rows flushed during the request (their SQL write was rolled
// back with the savepoint, so they become dirty again).
//
// Queries that scan these tables (lists, counts, joins) flush first, so SQL
// always sees the cache's state.

type rowKey struct {
	table, project, id string
}

type cached struct {
	present bool // false: known not to exist
	dirty   bool
	value   any // learning.Criterion | learning.Pattern | learning.Maturity
}

type undoEntry struct {
	key  rowKey
	prev *cached // nil: the key was not cached
	// content invalidation is not undone: a stale-free cache is rebuilt on demand
}

type aggregateCache struct {
	rows    map[rowKey]*cached
	content map[string][]string // project+"\x00"+content hash → pattern ids (any kind)
	undo    []undoEntry
}

func newAggregateCache() *aggregateCache {
	return &aggregateCache{rows: map[rowKey]*cached{}, content: map[string][]string{}}
}

func (c *aggregateCache) save(k rowKey) {
	var prev *cached
	if e, ok := c.rows[k]; ok {
		cp := *e
		prev = &cp
	}
	c.undo = append(c.undo, undoEntry{key: k, prev: prev})
}

func (c *aggregateCache) put(k rowKey, v cached) {
	c.save(k)
	c.rows[k] = &v
}

// Mark returns a position in the undo log.
func (t *Tx) Mark() int {
	if t.agg == nil {
		return 0
	}
	return len(t.agg.undo)
}

// Undo reverts the aggregate cache to a mark (after a savepoint rollback).
func (t *Tx) Undo(mark int) {
	c := t.agg
	if c == nil {
		return
	}
	for i := len(c.undo) - 1; i >= mark; i-- {
		u := c.undo[i]
		if u.prev == nil {
			delete(c.rows, u.key)
		} else {
			c.rows[u.key] = u.prev
		}
	}
	c.undo = c.undo[:mark]
	c.content = map[string][]string{}
}

// Flush writes every dirty cached row. The backend calls it before COMMIT.
func (t *Tx) Flush(ctx context.Context) error {
	c := t.agg
	if c == nil {
		return nil
	}
	for k, e := range c.rows {
		if !e.dirty {
			continue
		}
		var err error
		switch v := e.value.(type) {
		case learning.Criterion:
			err = t.writeCriterion(ctx, v)
		case learning.Pattern:
			err = t.writePattern(ctx, v)
		case learning.Maturity:
			err = t.writeMaturity(ctx, v)
		default:
			err = fmt.Errorf("aggregate cache: unexpected %T", v)
		}
		if err != nil {
			return err
		}
		c.put(k, cached{present: e.present, value: e.value}) // clean; undo makes it dirty again
	}
	return nil
}

// lookup returns a cached row: ok reports a cache hit, present whether the
// row exists.
func (t *Tx) lookup(k rowKey) (v any, present, ok bool) {
	if t.agg == nil {
		return nil, false, false
	}
	e, ok := t.agg.rows[k]
	if !ok {
		return nil, false, false
	}
	return e.value, e.present, true
}

// remember caches a row read from SQL (clean), or its absence.
func (t *Tx) remember(k rowKey, v any, present bool) {
	if t.agg != nil {
		t.agg.put(k, cached{present: present, value: v})
	}
}

// stage caches a row to be written at Flush.
func (t *Tx) stage(k rowKey, v any) {
	t.agg.put(k, cached{present: true, dirty: true, value: v})
}

// flushFirst flushes before a query that reads the cached tables in SQL.
func (t *Tx) flushFirst(ctx context.Context) error {
	if t.agg == nil {
		return nil
	}
	return t.Flush(ctx)
}

func (t *Tx) contentKey(project, content string) string {
	return project + "\x00" + contentHash(content)
}
