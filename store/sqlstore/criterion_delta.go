package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Pending criterion events (sharded criteria with the aggregate cache, as
// in PostgreSQL's group commit). The events a transaction adds to a
// criterion are summed in memory into one delta — decayed sums at their
// newest event, counts, last validation — and Flush adds the delta to one
// shard row that no other transaction holds: a group of N outcomes writes
// each criterion once instead of N times, and never waits for another
// writer's criterion row. Adding a delta to a shard is the same fold as
// adding the shards to the row (see criterion_shards.go), so the result is
// the seed's sum over every event in any order, and the counts are exact.

// criterionDelta is the events a transaction added to one criterion and
// has not written yet.
type criterionDelta struct {
	c        learning.Criterion // Project, Name, CreatedAt and the aggregate part
	halfLife float64
}

func (d criterionDelta) row() shardRow { return shardRow{c: d.c, halfLife: d.halfLife} }

// criterion is the delta as a criterion of its own (no row exists yet).
func (d criterionDelta) criterion() learning.Criterion { return d.c }

func deltaKey(project, name string) rowKey { return rowKey{"criterion_delta", project, name} }

func (t *Tx) pendingDelta(project, name string) (criterionDelta, bool) {
	if t.agg == nil {
		return criterionDelta{}, false
	}
	e, ok := t.agg.rows[deltaKey(project, name)]
	if !ok {
		return criterionDelta{}, false
	}
	return e.value.(criterionDelta), true
}

// addPendingEvent is AddCriterionEvent on sharded criteria with the
// aggregate cache. A criterion this transaction holds locked (LockCriterion)
// takes the event in its cached row instead.
func (t *Tx) addPendingEvent(ctx context.Context, e learning.FeedbackEvent, weight, halfLifeDays float64, now time.Time) (learning.Criterion, error) {
	k := criterionKey(e.Project, e.Criterion)
	if v, present, ok := t.lookupLocked(k); ok && present {
		c := v.(learning.Criterion)
		c.Apply(e, weight, halfLifeDays)
		c.UpdatedAt = now
		t.stage(k, c)
		return c, nil
	}
	d, ok := t.pendingDelta(e.Project, e.Criterion)
	if !ok {
		d = criterionDelta{c: learning.Criterion{Project: e.Project, Name: e.Criterion, CreatedAt: now}}
	}
	d.halfLife = halfLifeDays
	d.c.Apply(e, weight, halfLifeDays)
	d.c.UpdatedAt = now
	t.agg.put(deltaKey(e.Project, e.Criterion), cached{present: true, value: d})
	if _, _, ok := t.lookup(k); !ok {
		// The criterion as committed, for the caller's weight: every
		// criterion of the project in two statements (an outcome adds
		// events to several), instead of two per criterion.
		all, err := t.readCriteria(ctx, e.Project)
		if err != nil {
			return learning.Criterion{}, err
		}
		for _, c := range all {
			if _, _, ok := t.lookup(criterionKey(c.Project, c.Name)); !ok {
				t.remember(criterionKey(c.Project, c.Name), c, true)
			}
		}
	}
	return t.GetCriterion(ctx, e.Project, e.Criterion)
}

// flushDeltas adds every pending delta to a shard of its criterion, in
// name order.
func (t *Tx) flushDeltas(ctx context.Context) error {
	c := t.agg
	if c == nil || !t.d.ShardedCriteria {
		return nil
	}
	var keys []rowKey
	for k := range c.rows {
		if k.table == "criterion_delta" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		if a.project != b.project {
			if a.project < b.project {
				return -1
			}
			return 1
		}
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	if t.rowLocks() && t.d.Numbered { // PostgreSQL: two statements per project
		return t.flushDeltasBatched(ctx, keys)
	}
	for _, k := range keys {
		if err := t.addDelta(ctx, c.rows[k].value.(criterionDelta)); err != nil {
			return err
		}
		t.forget(k)
		// the criterion read before now lacks what was just written
		t.forgetClean(criterionKey(k.project, k.id))
	}
	return nil
}

// addDelta adds a delta to one shard of its criterion, creating the
// criterion and its shards when missing.
func (t *Tx) addDelta(ctx context.Context, d criterionDelta) error {
	project, name := d.c.Project, d.c.Name
	r, err := t.lockShard(ctx, project, name)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := t.exec(ctx, `INSERT INTO criteria (project, name, helpful_sum, harmful_sum, helpful_count, harmful_count,
			neutral_count, created_at, updated_at) VALUES (?, ?, 0, 0, 0, 0, 0, ?, ?) ON CONFLICT DO NOTHING`,
			project, name, micros(d.c.CreatedAt), micros(d.c.UpdatedAt)); err != nil {
			return fmt.Errorf("create criterion: %w", err)
		}
		if err := t.createShards(ctx, project, name); err != nil {
			return err
		}
		r, err = t.lockShard(ctx, project, name)
	}
	if err != nil {
		return err
	}
	s := fold(r.c, []shardRow{d.row()})
	_, err = t.exec(ctx, `UPDATE criterion_shards SET helpful_sum = ?, helpful_ref = ?, harmful_sum = ?, harmful_ref = ?,
		helpful_count = ?, harmful_count = ?, neutral_count = ?, last_validated = ?, updated_at = ?, half_life_days = ?
		WHERE project = ? AND name = ? AND shard = ?`,
		s.Helpful.Value, micros(s.Helpful.Ref), s.Harmful.Value, micros(s.Harmful.Ref), s.HelpfulCount,
		s.HarmfulCount, s.NeutralCount, micros(s.LastValidated), micros(s.UpdatedAt), d.halfLife, project, name, r.shard)
	if err != nil {
		return fmt.Errorf("update criterion shard: %w", err)
	}
	return nil
}
