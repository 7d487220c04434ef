package memory

import (
	"context"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
)

// GetMaturity implements store.MaturityStorage.
func (t *tx) GetMaturity(ctx context.Context, project, patternID string) (learning.Maturity, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return learning.Maturity{}, err
	}
	if p != nil {
		if m, ok := p.maturity[patternID]; ok {
			return cloneMaturity(*m), nil
		}
	}
	return learning.Maturity{}, notFound("maturity of pattern", project, patternID)
}

// PutMaturity implements store.MaturityStorage.
func (t *tx) PutMaturity(ctx context.Context, m learning.Maturity) error {
	p, err := t.write(ctx, m.Project)
	if err != nil {
		return err
	}
	put(t.undo, p.maturity, m.PatternID, stored(m, cloneMaturity))
	t.touch(m.Project, m.PatternID, false)
	return nil
}

// ListMaturity implements store.MaturityStorage, ordered by pattern id.
func (t *tx) ListMaturity(ctx context.Context, project string) ([]learning.Maturity, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.Maturity{}, err
	}
	found := sorted(selectAll(p.maturity, nil), func(a, b *learning.Maturity) int {
		return strings.Compare(a.PatternID, b.PatternID)
	})
	return copies(found, cloneMaturity), nil
}

// DeleteMaturity implements store.MaturityStorage.
func (t *tx) DeleteMaturity(ctx context.Context, project, patternID string) error {
	if err := t.writable(ctx); err != nil {
		return err
	}
	p := t.s.projects[project]
	if p == nil || p.maturity[patternID] == nil {
		return notFound("maturity of pattern", project, patternID)
	}
	remove(t.undo, p.maturity, patternID)
	t.touch(project, patternID, false)
	return nil
}

// InsertMaturityFeedback implements store.MaturityStorage.
func (t *tx) InsertMaturityFeedback(ctx context.Context, f learning.MaturityFeedback) (bool, error) {
	p, err := t.write(ctx, f.Project)
	if err != nil {
		return false, err
	}
	if _, ok := p.maturityFeedback[f.ID]; ok {
		return false, nil
	}
	put(t.undo, p.maturityFeedback, f.ID, stored(f, cloneMaturityFeedback))
	p.maturityFeedbackByPattern.add(t.undo, f.PatternID, f.ID)
	return true, nil
}

func maturityFeedbackOldestFirst(a, b *learning.MaturityFeedback) int {
	return oldestFirst(a.Timestamp, a.ID, b.Timestamp, b.ID)
}

// MaturityFeedback implements store.MaturityStorage.
func (t *tx) MaturityFeedback(ctx context.Context, project, patternID string) ([]learning.MaturityFeedback, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.MaturityFeedback{}, err
	}
	found := selectIndexed(p.maturityFeedbackByPattern, patternID, p.maturityFeedback, nil)
	return copies(sorted(found, maturityFeedbackOldestFirst), cloneMaturityFeedback), nil
}

// EachMaturityFeedback implements store.MaturityStorage, oldest first.
func (t *tx) EachMaturityFeedback(ctx context.Context, project string, fn func(learning.MaturityFeedback) error) error {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return err
	}
	return each(ctx, sorted(selectAll(p.maturityFeedback, nil), maturityFeedbackOldestFirst), cloneMaturityFeedback, fn)
}
