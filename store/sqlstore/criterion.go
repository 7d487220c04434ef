package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

const criterionCols = `project, name, helpful_sum, helpful_ref, harmful_sum, harmful_ref,
	helpful_count, harmful_count, neutral_count, last_validated, created_at, updated_at`

func scanCriterion(s scanner) (learning.Criterion, error) {
	var c learning.Criterion
	var hRef, xRef, lv, created, updated sql.NullInt64
	err := s.Scan(&c.Project, &c.Name, &c.Helpful.Value, &hRef, &c.Harmful.Value, &xRef,
		&c.HelpfulCount, &c.HarmfulCount, &c.NeutralCount, &lv, &created, &updated)
	c.Helpful.Ref, c.Harmful.Ref = fromMicros(hRef), fromMicros(xRef)
	c.LastValidated, c.CreatedAt, c.UpdatedAt = fromMicros(lv), fromMicros(created), fromMicros(updated)
	return c, err
}

func criterionKey(project, name string) rowKey { return rowKey{"criteria", project, name} }

// LockCriterion implements store.CriterionStorage.
func (t *Tx) LockCriterion(ctx context.Context, project, name string, now time.Time) (learning.Criterion, error) {
	k := criterionKey(project, name)
	if v, present, ok := t.lookupLocked(k); ok && present {
		return v.(learning.Criterion), nil
	}
	lock := `SELECT ` + criterionCols + ` FROM criteria WHERE project = ? AND name = ?` + t.d.ForUpdate
	c, err := one(ctx, t, "criterion "+name, scanCriterion, lock, project, name)
	if errors.Is(err, store.ErrNotFound) {
		// Missing: create it (a concurrent creator wins harmlessly), then lock.
		if _, err := t.exec(ctx, `INSERT INTO criteria (project, name, helpful_sum, harmful_sum, helpful_count, harmful_count,
			neutral_count, created_at, updated_at) VALUES (?, ?, 0, 0, 0, 0, 0, ?, ?) ON CONFLICT DO NOTHING`,
			project, name, micros(now), micros(now)); err != nil {
			return learning.Criterion{}, err
		}
		c, err = one(ctx, t, "criterion "+name, scanCriterion, lock, project, name)
	}
	if err == nil && t.d.ShardedCriteria {
		// the whole aggregate: every shard, locked
		var shards []shardRow
		if shards, err = t.shardsOf(ctx, project, name, true); err == nil && len(shards) == 0 {
			if err = t.createShards(ctx, project, name); err == nil {
				shards, err = t.shardsOf(ctx, project, name, true)
			}
		}
		c = fold(c, shards)
	}
	if err != nil {
		return c, err
	}
	if d, ok := t.pendingDelta(project, name); ok {
		// Events added before the lock and not yet in a shard: the
		// locked row takes them, and is written at Flush.
		c = fold(c, []shardRow{d.row()})
		t.forget(deltaKey(project, name))
		t.stage(k, c)
		return c, nil
	}
	t.rememberLocked(k, c, true, true)
	return c, nil
}

// GetCriterion implements store.CriterionStorage.
func (t *Tx) GetCriterion(ctx context.Context, project, name string) (learning.Criterion, error) {
	c, err := t.getCriterion(ctx, project, name)
	if d, ok := t.pendingDelta(project, name); ok {
		if errors.Is(err, store.ErrNotFound) {
			return d.criterion(), nil
		}
		c = fold(c, []shardRow{d.row()})
	}
	return c, err
}

func (t *Tx) getCriterion(ctx context.Context, project, name string) (learning.Criterion, error) {
	k := criterionKey(project, name)
	if v, present, ok := t.lookup(k); ok {
		if !present {
			return learning.Criterion{}, fmt.Errorf("criterion %s: %w", name, store.ErrNotFound)
		}
		return v.(learning.Criterion), nil
	}
	c, err := one(ctx, t, "criterion "+name, scanCriterion,
		`SELECT `+criterionCols+` FROM criteria WHERE project = ? AND name = ?`, project, name)
	if err == nil && t.d.ShardedCriteria {
		var shards []shardRow
		shards, err = t.shardsOf(ctx, project, name, false)
		c = fold(c, shards)
	}
	switch {
	case err == nil:
		t.remember(k, c, true)
	case errors.Is(err, store.ErrNotFound):
		t.remember(k, nil, false)
	}
	return c, err
}

// PutCriterion implements store.CriterionStorage.
func (t *Tx) PutCriterion(ctx context.Context, c learning.Criterion) error {
	if t.agg != nil {
		t.forget(deltaKey(c.Project, c.Name)) // the whole aggregate replaces the pending events
		t.stage(criterionKey(c.Project, c.Name), c)
		return nil
	}
	if err := t.writeCriterion(ctx, c); err != nil {
		return err
	}
	if t.d.ShardedCriteria {
		return t.resetShards(ctx, c.Project, c.Name)
	}
	return nil
}

func (t *Tx) writeCriterion(ctx context.Context, c learning.Criterion) error {
	return t.writeCriteria(ctx, []learning.Criterion{c})
}

// writeCriteria writes criterion rows (unsharded: a group's criteria, in
// (project, name) order), maxRowsPerStatement per statement.
func (t *Tx) writeCriteria(ctx context.Context, cs []learning.Criterion) error {
	slices.SortFunc(cs, func(a, b learning.Criterion) int {
		return cmp.Or(strings.Compare(a.Project, b.Project), strings.Compare(a.Name, b.Name))
	})
	return inStatements(cs, func(run []learning.Criterion) error {
		args := make([]any, 0, 12*len(run))
		for _, c := range run {
			args = append(args, c.Project, c.Name, c.Helpful.Value, micros(c.Helpful.Ref), c.Harmful.Value, micros(c.Harmful.Ref),
				c.HelpfulCount, c.HarmfulCount, c.NeutralCount, micros(c.LastValidated), micros(c.CreatedAt), micros(c.UpdatedAt))
		}
		return t.upsertCriteria(ctx, len(run), args)
	})
}

func (t *Tx) upsertCriteria(ctx context.Context, n int, args []any) error {
	_, err := t.exec(ctx, `INSERT INTO criteria (`+criterionCols+`) VALUES `+placeholders(n, 12)+`
		ON CONFLICT (project, name) DO UPDATE SET helpful_sum = excluded.helpful_sum, helpful_ref = excluded.helpful_ref,
		harmful_sum = excluded.harmful_sum, harmful_ref = excluded.harmful_ref, helpful_count = excluded.helpful_count,
		harmful_count = excluded.harmful_count, neutral_count = excluded.neutral_count,
		last_validated = excluded.last_validated, created_at = excluded.created_at, updated_at = excluded.updated_at`,
		args...)
	return err
}

// ListCriteria implements store.CriterionStorage.
func (t *Tx) ListCriteria(ctx context.Context, project string) ([]learning.Criterion, error) {
	if err := t.flushFirst(ctx); err != nil {
		return nil, err
	}
	return t.readCriteria(ctx, project)
}

// readCriteria reads every criterion of a project from SQL, its shards
// folded in (two statements).
func (t *Tx) readCriteria(ctx context.Context, project string) ([]learning.Criterion, error) {
	list, err := many(ctx, t, "criteria", scanCriterion,
		`SELECT `+criterionCols+` FROM criteria WHERE project = ? ORDER BY name`, project)
	if err != nil || !t.d.ShardedCriteria {
		return list, err
	}
	shards := map[string][]shardRow{}
	err = each(ctx, t, "criterion shards", func(s scanner) (struct {
		name string
		row  shardRow
	}, error) {
		var v struct {
			name string
			row  shardRow
		}
		var hRef, xRef, lv, updated sql.NullInt64
		r := &v.row
		err := s.Scan(&v.name, &r.shard, &r.c.Helpful.Value, &hRef, &r.c.Harmful.Value, &xRef, &r.c.HelpfulCount,
			&r.c.HarmfulCount, &r.c.NeutralCount, &lv, &updated, &r.halfLife)
		r.c.Helpful.Ref, r.c.Harmful.Ref = fromMicros(hRef), fromMicros(xRef)
		r.c.LastValidated, r.c.UpdatedAt = fromMicros(lv), fromMicros(updated)
		return v, err
	}, func(v struct {
		name string
		row  shardRow
	}) error {
		shards[v.name] = append(shards[v.name], v.row)
		return nil
	}, `SELECT name, shard, `+shardCols+` FROM criterion_shards
		WHERE project = ? AND helpful_count + harmful_count + neutral_count > 0 ORDER BY name, shard`, project)
	for i := range list {
		list[i] = fold(list[i], shards[list[i].Name])
	}
	return list, err
}
