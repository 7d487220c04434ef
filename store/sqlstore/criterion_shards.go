package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Sharded criteria (PostgreSQL, Dialect.ShardedCriteria). Every outcome of
// a project adds an event to the same few criteria; with one row per
// criterion the project's writers queue on its row lock until each commits.
// Instead an event goes to one of criterionShards shard rows that no other
// transaction holds (FOR UPDATE SKIP LOCKED), and readers fold the shards
// into the criterion row:
//
//   - a shard is a learning.Criterion's aggregate part: decayed sums (value
//     at the shard's newest event time, learning.DecayedSum), counts, last
//     validation, with the half-life its sums were decayed with;
//   - folding rebases every sum to the newest reference time and adds them:
//     0.5^(a+b) = 0.5^a·0.5^b makes that equal to adding the events one by
//     one in any order (the seed's formula), and the counts add exactly;
//   - LockCriterion (read-modify-write of the whole aggregate, rare) locks
//     the criterion row and all its shards; PutCriterion writes the row and
//     empties the shards. Every criterion has all its shards from creation
//     on, so a transaction holding them all excludes every adder.

const criterionShards = 16

const shardCols = `helpful_sum, helpful_ref, harmful_sum, harmful_ref, helpful_count, harmful_count, neutral_count,
	last_validated, updated_at, half_life_days`

type shardRow struct {
	c        learning.Criterion // aggregate part only
	shard    int
	halfLife float64
}

func scanShard(s scanner) (shardRow, error) {
	var r shardRow
	var hRef, xRef, lv, updated sql.NullInt64
	err := s.Scan(&r.shard, &r.c.Helpful.Value, &hRef, &r.c.Harmful.Value, &xRef, &r.c.HelpfulCount, &r.c.HarmfulCount,
		&r.c.NeutralCount, &lv, &updated, &r.halfLife)
	r.c.Helpful.Ref, r.c.Harmful.Ref = fromMicros(hRef), fromMicros(xRef)
	r.c.LastValidated, r.c.UpdatedAt = fromMicros(lv), fromMicros(updated)
	return r, err
}

// foldSum adds a decayed sum into another, rebased to the newer reference.
func foldSum(a, b learning.DecayedSum, halfLife float64) learning.DecayedSum {
	switch {
	case b.Ref.IsZero():
		return a
	case a.Ref.IsZero():
		return b
	case b.Ref.After(a.Ref):
		return learning.DecayedSum{Value: a.Value*learning.DecayFactor(a.Ref, b.Ref, halfLife) + b.Value, Ref: b.Ref}
	}
	return learning.DecayedSum{Value: a.Value + b.Value*learning.DecayFactor(b.Ref, a.Ref, halfLife), Ref: a.Ref}
}

// fold adds the shards into the criterion.
func fold(c learning.Criterion, shards []shardRow) learning.Criterion {
	for _, s := range shards {
		c.Helpful = foldSum(c.Helpful, s.c.Helpful, s.halfLife)
		c.Harmful = foldSum(c.Harmful, s.c.Harmful, s.halfLife)
		c.HelpfulCount += s.c.HelpfulCount
		c.HarmfulCount += s.c.HarmfulCount
		c.NeutralCount += s.c.NeutralCount
		if s.c.LastValidated.After(c.LastValidated) {
			c.LastValidated = s.c.LastValidated
		}
		if s.c.UpdatedAt.After(c.UpdatedAt) {
			c.UpdatedAt = s.c.UpdatedAt
		}
	}
	return c
}

// shardsOf reads a criterion's shards (locked when lock).
func (t *Tx) shardsOf(ctx context.Context, project, name string, lock bool) ([]shardRow, error) {
	q := `SELECT shard, ` + shardCols + ` FROM criterion_shards WHERE project = ? AND name = ? ORDER BY shard`
	if lock {
		q += t.d.ForUpdate
	}
	return many(ctx, t, "criterion shards", scanShard, q, project, name)
}

// createShards makes sure the criterion's shard rows exist (a criterion
// written before they existed, or just created).
func (t *Tx) createShards(ctx context.Context, project, name string) error {
	_, err := t.exec(ctx, `INSERT INTO criterion_shards (project, name, shard, helpful_sum, harmful_sum, helpful_count,
		harmful_count, neutral_count, half_life_days) SELECT ?, ?, s, 0, 0, 0, 0, 0, 0 FROM generate_series(0, ?) s
		ON CONFLICT DO NOTHING`, project, name, criterionShards-1)
	if err != nil {
		return fmt.Errorf("create criterion shards: %w", err)
	}
	return nil
}

// resetShards empties a criterion's shards (PutCriterion wrote the whole
// aggregate into its row), creating any that are missing.
func (t *Tx) resetShards(ctx context.Context, project, name string) error {
	_, err := t.exec(ctx, `INSERT INTO criterion_shards (project, name, shard, helpful_sum, harmful_sum, helpful_count,
		harmful_count, neutral_count, half_life_days) SELECT ?, ?, s, 0, 0, 0, 0, 0, 0 FROM generate_series(0, ?) s
		ON CONFLICT (project, name, shard) DO UPDATE SET helpful_sum = 0, helpful_ref = NULL, harmful_sum = 0,
		harmful_ref = NULL, helpful_count = 0, harmful_count = 0, neutral_count = 0, last_validated = NULL,
		updated_at = NULL, half_life_days = 0`, project, name, criterionShards-1)
	if err != nil {
		return fmt.Errorf("reset criterion shards: %w", err)
	}
	return nil
}

// lockShard locks one shard of the criterion that no other transaction
// holds, or waits for a random one when all are held; ErrNotFound when the
// criterion has no shards.
func (t *Tx) lockShard(ctx context.Context, project, name string) (shardRow, error) {
	r, err := one(ctx, t, "criterion shard", scanShard, `SELECT shard, `+shardCols+` FROM criterion_shards
		WHERE project = ? AND name = ? AND shard >= ? ORDER BY shard LIMIT 1 FOR UPDATE SKIP LOCKED`,
		project, name, rand.IntN(criterionShards))
	if errors.Is(err, store.ErrNotFound) {
		r, err = one(ctx, t, "criterion shard", scanShard, `SELECT shard, `+shardCols+` FROM criterion_shards
			WHERE project = ? AND name = ? ORDER BY shard LIMIT 1 FOR UPDATE SKIP LOCKED`, project, name)
	}
	if errors.Is(err, store.ErrNotFound) {
		r, err = one(ctx, t, "criterion shard", scanShard, `SELECT shard, `+shardCols+` FROM criterion_shards
			WHERE project = ? AND name = ? AND shard = ? FOR UPDATE`, project, name, rand.IntN(criterionShards))
	}
	return r, err
}

// addShardedEvent is AddCriterionEvent on sharded criteria.
func (t *Tx) addShardedEvent(ctx context.Context, e learning.FeedbackEvent, weight, halfLifeDays float64, now time.Time) (learning.Criterion, error) {
	r, err := t.lockShard(ctx, e.Project, e.Criterion)
	if errors.Is(err, store.ErrNotFound) {
		// A new criterion (or one without shards yet): create both.
		if _, err := t.exec(ctx, `INSERT INTO criteria (project, name, helpful_sum, harmful_sum, helpful_count, harmful_count,
			neutral_count, created_at, updated_at) VALUES (?, ?, 0, 0, 0, 0, 0, ?, ?) ON CONFLICT DO NOTHING`,
			e.Project, e.Criterion, micros(now), micros(now)); err != nil {
			return learning.Criterion{}, fmt.Errorf("create criterion: %w", err)
		}
		if err := t.createShards(ctx, e.Project, e.Criterion); err != nil {
			return learning.Criterion{}, err
		}
		r, err = t.lockShard(ctx, e.Project, e.Criterion)
	}
	if err != nil {
		return learning.Criterion{}, err
	}
	// The shard's sums are decayed with the configured half-life from here
	// on, as one criterion row's would be.
	r.halfLife = halfLifeDays
	r.c.Apply(e, weight, halfLifeDays)
	r.c.UpdatedAt = now
	if _, err := t.exec(ctx, `UPDATE criterion_shards SET helpful_sum = ?, helpful_ref = ?, harmful_sum = ?, harmful_ref = ?,
		helpful_count = ?, harmful_count = ?, neutral_count = ?, last_validated = ?, updated_at = ?, half_life_days = ?
		WHERE project = ? AND name = ? AND shard = ?`,
		r.c.Helpful.Value, micros(r.c.Helpful.Ref), r.c.Harmful.Value, micros(r.c.Harmful.Ref), r.c.HelpfulCount,
		r.c.HarmfulCount, r.c.NeutralCount, micros(r.c.LastValidated), micros(r.c.UpdatedAt), r.halfLife,
		e.Project, e.Criterion, r.shard); err != nil {
		return learning.Criterion{}, fmt.Errorf("update criterion shard: %w", err)
	}
	return t.GetCriterion(ctx, e.Project, e.Criterion)
}

// AddCriterionEvent implements store.CriterionStorage.
func (t *Tx) AddCriterionEvent(ctx context.Context, e learning.FeedbackEvent, weight, halfLifeDays float64, now time.Time) (learning.Criterion, error) {
	if t.d.ShardedCriteria && t.agg != nil {
		return t.addPendingEvent(ctx, e, weight, halfLifeDays, now)
	}
	if t.d.ShardedCriteria {
		return t.addShardedEvent(ctx, e, weight, halfLifeDays, now)
	}
	c, err := t.LockCriterion(ctx, e.Project, e.Criterion, now)
	if err != nil {
		return learning.Criterion{}, err
	}
	c.Apply(e, weight, halfLifeDays)
	c.UpdatedAt = now
	return c, t.PutCriterion(ctx, c)
}
