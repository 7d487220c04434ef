package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	if v, present, ok := t.lookup(k); ok && present {
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
	if err == nil {
		t.remember(k, c, true)
	}
	return c, err
}

// GetCriterion implements store.CriterionStorage.
func (t *Tx) GetCriterion(ctx context.Context, project, name string) (learning.Criterion, error) {
	k := criterionKey(project, name)
	if v, present, ok := t.lookup(k); ok {
		if !present {
			return learning.Criterion{}, fmt.Errorf("criterion %s: %w", name, store.ErrNotFound)
		}
		return v.(learning.Criterion), nil
	}
	c, err := one(ctx, t, "criterion "+name, scanCriterion,
		`SELECT `+criterionCols+` FROM criteria WHERE project = ? AND name = ?`, project, name)
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
		t.stage(criterionKey(c.Project, c.Name), c)
		return nil
	}
	return t.writeCriterion(ctx, c)
}

func (t *Tx) writeCriterion(ctx context.Context, c learning.Criterion) error {
	_, err := t.exec(ctx, `INSERT INTO criteria (`+criterionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (project, name) DO UPDATE SET helpful_sum = excluded.helpful_sum, helpful_ref = excluded.helpful_ref,
		harmful_sum = excluded.harmful_sum, harmful_ref = excluded.harmful_ref, helpful_count = excluded.helpful_count,
		harmful_count = excluded.harmful_count, neutral_count = excluded.neutral_count,
		last_validated = excluded.last_validated, created_at = excluded.created_at, updated_at = excluded.updated_at`,
		c.Project, c.Name, c.Helpful.Value, micros(c.Helpful.Ref), c.Harmful.Value, micros(c.Harmful.Ref),
		c.HelpfulCount, c.HarmfulCount, c.NeutralCount, micros(c.LastValidated), micros(c.CreatedAt), micros(c.UpdatedAt))
	return err
}

// ListCriteria implements store.CriterionStorage.
func (t *Tx) ListCriteria(ctx context.Context, project string) ([]learning.Criterion, error) {
	if err := t.flushFirst(ctx); err != nil {
		return nil, err
	}
	return many(ctx, t, "criteria", scanCriterion,
		`SELECT `+criterionCols+` FROM criteria WHERE project = ? ORDER BY name`, project)
}
