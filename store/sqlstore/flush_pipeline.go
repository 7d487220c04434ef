package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Flush in two round trips (PostgreSQL's group commit with a pipeliner,
// issue 17). Flush wrote a group's rows one statement after the other,
// nine round trips for a group of outcomes: the outcome rows, their jobs,
// the patterns, the maturity records, the maturity feedback, a free shard
// locked and written per project's criteria, the pattern version and its
// stamp on the patterns. None of these writes needs the answer of the one
// before it, except the shard write (it adds to the shard it locked) and
// the jobs (a job whose unique key was taken gets its enqueue mode). So:
//
//  1. one pipeline: the jobs (the ids inserted are read), outcome rows,
//     patterns, maturity records, maturity feedback, and the locking read
//     of a free shard per criterion;
//  2. one pipeline: the shard writes, and per project the pattern version
//     with its stamp on the patterns in one statement.
//
// The statements and their order are those of Flush, so locks are taken
// in the same order (the pattern-version row last). While writes are held
// for a pipeline (t.queued), exec queues them and returns a result that
// cannot be read, and any read sends them first, so SQL sees every write
// before the next read, as without pipelines. A transaction that staged a
// whole criterion (LockCriterion, rare) flushes the usual way.

// queuedResult is the sql.Result of a write held for a pipeline.
type queuedResult struct{}

// errWholeCriterion: a staged whole criterion reached the pipelined
// flush, which does not write one (pipelinedFlush must have refused it).
var errWholeCriterion = errors.New("the pipelined flush does not write whole criteria")

var errQueued = errors.New("the result of a pipelined write is not known before the pipeline runs")

func (queuedResult) LastInsertId() (int64, error) { return 0, errQueued }
func (queuedResult) RowsAffected() (int64, error) { return 0, errQueued }

func (t *Tx) queue(p Pipelined) { *t.queued = append(*t.queued, p) }

// sendQueued sends the held writes in one pipeline.
func (t *Tx) sendQueued(ctx context.Context) error {
	if t.queued == nil || len(*t.queued) == 0 {
		return nil
	}
	stmts := *t.queued
	t.queued = nil // the pipeline's own statements are not held
	err := t.pipeline(ctx, "pipelined writes", stmts)
	t.queued = &[]Pipelined{}
	return err
}

// execRows runs a write that must change want rows (ErrNotFound
// otherwise); held for a pipeline, the count is checked when it runs.
func (t *Tx) execRows(ctx context.Context, want int64, what, q string, args ...any) error {
	check := func(got int64) error {
		if got != want {
			return fmt.Errorf("%s: %d of %d rows written: %w", what, got, want, store.ErrNotFound)
		}
		return nil
	}
	if t.queued != nil {
		if err := t.beforeStatement(ctx, q); err != nil {
			return err
		}
		t.queue(Pipelined{SQL: q, Args: args, Affected: check})
		return nil
	}
	res, err := t.exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	got, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return check(got)
}

// pipelinedFlush reports whether Flush can pipeline.
func (t *Tx) pipelinedFlush() bool {
	if t.pipe == nil || t.agg == nil || !t.rowLocks() || !t.d.ShardedCriteria {
		return false
	}
	for _, e := range t.agg.rows {
		if _, ok := e.value.(learning.Criterion); ok && e.dirty {
			return false
		}
	}
	return true
}

func (t *Tx) flushPipelined(ctx context.Context) (err error) {
	defer func() { t.queued = nil }()
	t.queued = &[]Pipelined{}
	jobs, jobsDone := t.jobInserts()
	for _, st := range jobs {
		t.queue(st)
	}
	if err := t.flushOutcomes(ctx); err != nil {
		return err
	}
	c := t.agg
	var maturity []learning.Maturity
	var patterns []learning.Pattern
	var written []rowKey
	for k, e := range c.rows {
		if !e.dirty {
			continue
		}
		switch v := e.value.(type) {
		case learning.Pattern:
			patterns = append(patterns, v)
		case learning.Maturity:
			maturity = append(maturity, v)
		case learning.Criterion:
			// pipelinedFlush sends a transaction with a staged whole
			// criterion to the plain flush, which writes it (and resets
			// its shards); never drop one here
			return fmt.Errorf("pipelined flush: criterion %s staged whole: %w", v.Name, errWholeCriterion)
		default:
			continue // feedback and criterion deltas below
		}
		written = append(written, k)
	}
	if err := t.writeRows(ctx, patterns, maturity); err != nil {
		return err
	}
	deltas, err := t.queueShardLocks(ctx)
	if err != nil {
		return err
	}
	if err := t.sendQueued(ctx); err != nil { // 1
		return err
	}
	t.queued = nil // jobTaken reads what its writes changed
	if err := jobsDone(ctx); err != nil {
		return err
	}
	t.queued = &[]Pipelined{}
	for _, k := range written {
		e := c.rows[k]
		c.put(k, cached{present: e.present, locked: e.locked, value: e.value}) // clean; undo makes it dirty again
	}
	if err := deltas(ctx); err != nil {
		return err
	}
	if err := t.queueVersions(ctx); err != nil {
		return err
	}
	if t.conn.committing { // conntx.go: COMMIT ends the last pipeline
		t.queue(Pipelined{SQL: "COMMIT"})
		t.conn.ended = true
	}
	return t.sendQueued(ctx) // 2
}

// queueShardLocks queues the locking read of a free shard per pending
// criterion delta (criterion_delta_batch.go); the returned func, once it
// ran, queues the shard writes (or adds a delta the one-criterion way
// when no shard was free) and forgets the deltas, as flushDeltas does.
func (t *Tx) queueShardLocks(ctx context.Context) (func(context.Context) error, error) {
	keys := t.deltaKeys()
	var finish []func(context.Context) error
	for len(keys) > 0 {
		n := 1
		for n < len(keys) && keys[n].project == keys[0].project {
			n++
		}
		st, f := t.shardLocks(keys[0].project, keys[:n])
		t.queue(st)
		finish = append(finish, f)
		keys = keys[n:]
	}
	return func(ctx context.Context) error {
		for _, f := range finish {
			if err := f(ctx); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// queueVersions queues bumpVersions: per project one statement that
// advances the pattern version and stamps the changed patterns with it.
func (t *Tx) queueVersions(ctx context.Context) error {
	for _, ids := range t.touched {
		if len(ids) > maxStampIDs {
			return t.bumpVersions(ctx) // several stamps: the usual way
		}
	}
	projects := make([]string, 0, len(t.touched))
	for p := range t.touched {
		projects = append(projects, p)
	}
	slices.Sort(projects)
	for _, project := range projects {
		reset := t.resets[project]
		ids := make([]string, 0, len(t.touched[project]))
		for id := range t.touched[project] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		args := []any{project, b2i(reset), reset, project}
		for _, id := range ids {
			args = append(args, id)
		}
		t.queue(Pipelined{SQL: `WITH v AS (INSERT INTO pattern_versions (project, version, reset_version) VALUES (?, 1, ?)
			ON CONFLICT (project) DO UPDATE SET version = pattern_versions.version + 1,
			reset_version = CASE WHEN ? THEN pattern_versions.version + 1 ELSE pattern_versions.reset_version END
			RETURNING version)
			UPDATE patterns SET version = (SELECT version FROM v) WHERE project = ? AND id IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`,
			Args: args})
	}
	t.touched, t.resets = nil, nil
	return nil
}
