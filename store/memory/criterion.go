package memory

import (
	"context"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// LockCriterion implements store.CriterionStorage. Update is exclusive, so
// the lock is the write lock already held; in a View it fails with
// ErrReadOnly.
func (t *tx) LockCriterion(ctx context.Context, project, name string, now time.Time) (learning.Criterion, error) {
	p, err := t.write(ctx, project)
	if err != nil {
		return learning.Criterion{}, err
	}
	c, ok := p.criteria[name]
	if !ok {
		c = stored(learning.Criterion{Project: project, Name: name, CreatedAt: now, UpdatedAt: now}, cloneCriterion)
		put(t.undo, p.criteria, name, c)
	}
	return cloneCriterion(*c), nil
}

// GetCriterion implements store.CriterionStorage.
func (t *tx) GetCriterion(ctx context.Context, project, name string) (learning.Criterion, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return learning.Criterion{}, err
	}
	if p != nil {
		if c, ok := p.criteria[name]; ok {
			return cloneCriterion(*c), nil
		}
	}
	return learning.Criterion{}, notFound("criterion", project, name)
}

// PutCriterion implements store.CriterionStorage.
func (t *tx) PutCriterion(ctx context.Context, c learning.Criterion) error {
	p, err := t.write(ctx, c.Project)
	if err != nil {
		return err
	}
	put(t.undo, p.criteria, c.Name, stored(c, cloneCriterion))
	return nil
}

// ListCriteria implements store.CriterionStorage, ordered by name (bytewise).
func (t *tx) ListCriteria(ctx context.Context, project string) ([]learning.Criterion, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.Criterion{}, err
	}
	found := sorted(selectAll(p.criteria, nil), func(a, b *learning.Criterion) int { return strings.Compare(a.Name, b.Name) })
	return copies(found, cloneCriterion), nil
}
