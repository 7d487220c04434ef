package sqlstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	// locked: read under this transaction's row lock (SELECT … FOR UPDATE),
	// so no other transaction can change it until this one ends. Always
	// true where the dialect has no row locks (SQLite's writer transaction
	// is exclusive).
	locked bool
	value  any // learning.Criterion | learning.Pattern | learning.Maturity | criterionDelta
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
	t.deferred.off = true // see outcome_defer.go
	t.dropPrefetched()    // see prefetch.go
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

// Flush completes the transaction's writes; the backend calls it right
// before COMMIT. It writes every dirty cached row, then advances the
// pattern version of each project whose patterns or maturity records
// changed and stamps the changed patterns with it. The version row is
// taken last, after every pattern row, so concurrent writers always lock
// in the same order and cannot deadlock on it.
func (t *Tx) Flush(ctx context.Context) error {
	if t.pipelinedFlush() {
		return t.flushPipelined(ctx) // flush_pipeline.go
	}
	if err := t.flushDeferred(ctx); err != nil {
		return err
	}
	if err := t.advanceVersions(ctx); err != nil { // pattern_stamp.go
		return err
	}
	if err := t.flushRows(ctx); err != nil {
		return err
	}
	return t.bumpVersions(ctx)
}

// flushRows writes every dirty cached row.
func (t *Tx) flushRows(ctx context.Context) error {
	c := t.agg
	if c == nil {
		return nil
	}
	var maturity []learning.Maturity
	var patterns []learning.Pattern
	var criteria []learning.Criterion
	for k, e := range c.rows {
		if !e.dirty {
			continue
		}
		var err error
		switch v := e.value.(type) {
		case criterionDelta, learning.MaturityFeedback:
			continue // flushDeltas and flushAppends, after the rows
		case learning.Criterion:
			if !t.d.ShardedCriteria {
				criteria = append(criteria, v) // below, in multi-row statements
				break
			}
			err = t.writeCriterion(ctx, v)
			if err == nil {
				// the row holds the whole aggregate (LockCriterion folded the shards)
				err = t.resetShards(ctx, v.Project, v.Name)
			}
		case learning.Pattern:
			patterns = append(patterns, v) // below, with the others
		case learning.Maturity:
			maturity = append(maturity, v) // below, in multi-row statements
		default:
			err = fmt.Errorf("aggregate cache: unexpected %T", v)
		}
		if err != nil {
			return err
		}
		c.put(k, cached{present: e.present, locked: e.locked, value: e.value}) // clean; undo makes it dirty again
	}
	if err := t.writeCriteria(ctx, criteria); err != nil {
		return err
	}
	if err := t.writeRows(ctx, patterns, maturity); err != nil {
		return err
	}
	return t.flushDeltas(ctx)
}

// writeRows writes a group's changed patterns and maturity records, then
// its appended rows (maturity feedback): the part of a flush both the
// statement-by-statement and the pipelined flush do alike.
func (t *Tx) writeRows(ctx context.Context, patterns []learning.Pattern, maturity []learning.Maturity) error {
	if err := t.writeStagedPatterns(ctx, patterns); err != nil {
		return err
	}
	if err := t.writeMaturities(ctx, maturity); err != nil {
		return err
	}
	return t.flushAppends(ctx)
}

// touch records that a pattern (or its maturity record) changed; reset
// that a pattern of the project was deleted. A request rolled back to its
// savepoint may leave marks behind: they only make readers refresh rows
// that did not change, which is harmless.
func (t *Tx) touch(project, id string, reset bool) {
	if t.touched == nil {
		t.touched, t.resets = map[string]map[string]bool{}, map[string]bool{}
	}
	if t.touched[project] == nil {
		t.touched[project] = map[string]bool{}
	}
	t.touched[project][id] = true
	if reset {
		t.resets[project] = true
	}
}

// maxStampIDs bounds the pattern ids of one version-stamp statement.
const maxStampIDs = 500

func (t *Tx) bumpVersions(ctx context.Context) error {
	stamps := t.stamps
	t.stamps = nil
	for _, project := range slices.Sorted(maps.Keys(t.touched)) {
		v, ok := stamps[project] // advanced before the patterns were written
		if !ok {
			var err error
			if v, err = t.nextVersion(ctx, project); err != nil {
				return err
			}
		}
		ids := make([]string, 0, len(t.touched[project]))
		for id := range t.touched[project] {
			if !t.stamped[rowKey{"patterns", project, id}] {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for len(ids) > 0 {
			n := min(len(ids), maxStampIDs)
			args := []any{v, project}
			for _, id := range ids[:n] {
				args = append(args, id)
			}
			q := `UPDATE patterns SET version = ? WHERE project = ? AND id IN (?` + strings.Repeat(", ?", n-1) + `)`
			if _, err := t.exec(ctx, q, args...); err != nil {
				return fmt.Errorf("stamp pattern versions: %w", err)
			}
			ids = ids[n:]
		}
	}
	t.touched, t.resets, t.stamped = nil, nil, nil
	return nil
}

// nextVersion advances the project's pattern version and returns it.
func (t *Tx) nextVersion(ctx context.Context, project string) (int64, error) {
	reset := t.resets[project]
	return one(ctx, t, "pattern version", func(s scanner) (int64, error) {
		var v int64
		return v, s.Scan(&v)
	}, `INSERT INTO pattern_versions (project, version, reset_version) VALUES (?, 1, ?)
		ON CONFLICT (project) DO UPDATE SET version = pattern_versions.version + 1,
		reset_version = CASE WHEN ? THEN pattern_versions.version + 1 ELSE pattern_versions.reset_version END
		RETURNING version`, project, b2i(reset), reset)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
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

// remember caches a row read from SQL (clean), or its absence, read
// without a row lock (unless the dialect has none).
func (t *Tx) remember(k rowKey, v any, present bool) {
	if !present && t.rowLocks() {
		return // another transaction may create it
	}
	t.rememberLocked(k, v, present, !t.rowLocks())
}

// rememberLocked caches a row read from SQL (clean), saying whether this
// transaction holds its row lock.
func (t *Tx) rememberLocked(k rowKey, v any, present, locked bool) {
	if t.agg != nil {
		t.agg.put(k, cached{present: present, locked: locked || !t.rowLocks(), value: v})
	}
}

// rowLocks reports whether the dialect locks rows (PostgreSQL): a cached
// row read without its lock may be changed by another transaction, so a
// locking read must go to SQL.
func (t *Tx) rowLocks() bool { return t.d.ForUpdate != "" }

// lookupLocked is lookup for a locking read: a hit only when the cached
// row is held under this transaction's lock.
func (t *Tx) lookupLocked(k rowKey) (v any, present, ok bool) {
	if t.agg == nil {
		return nil, false, false
	}
	e, ok := t.agg.rows[k]
	if !ok || !e.locked {
		return nil, false, false
	}
	return e.value, e.present, true
}

// forget drops a cached row (undone by Undo).
func (t *Tx) forget(k rowKey) {
	if t.agg == nil {
		return
	}
	if _, ok := t.agg.rows[k]; ok {
		t.agg.save(k)
		delete(t.agg.rows, k)
	}
}

// forgetClean drops a cached row unless it is staged.
func (t *Tx) forgetClean(k rowKey) {
	if t.agg == nil {
		return
	}
	if e, ok := t.agg.rows[k]; ok && !e.dirty {
		t.forget(k)
	}
}

// stage caches a row to be written at Flush. A staged row counts as
// locked: the caller read it with its lock, or the row has none (maturity
// records are guarded by their pattern's lock), and Flush's write takes it.
func (t *Tx) stage(k rowKey, v any) {
	t.agg.put(k, cached{present: true, dirty: true, locked: true, value: v})
}

// flushFirst writes staged rows before a query that reads the cached
// tables in SQL (versions are only advanced at Flush).
func (t *Tx) flushFirst(ctx context.Context) error {
	t.noteAggregateWrite() // behind.go
	return t.flushRows(ctx)
}

func (t *Tx) contentKey(project, content string) string {
	return project + "\x00" + t.keysOf(content).hash
}

// forgetContent drops the remembered lookup of one content (a pattern with
// that content key was inserted, changed or deleted).
func (t *Tx) forgetContent(project, content string) {
	delete(t.agg.content, t.contentKey(project, content))
}
