package memory

import (
	"context"
	"slices"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// InsertOutcome implements store.OutcomeStorage.
func (t *tx) InsertOutcome(ctx context.Context, o learning.Outcome) (bool, error) {
	p, err := t.write(ctx, o.Project)
	if err != nil {
		return false, err
	}
	if _, ok := p.outcomes[o.ID]; ok {
		return false, nil
	}
	put(t.undo, p.outcomes, o.ID, stored(o, cloneOutcome))
	return true, nil
}

// GetOutcome implements store.OutcomeStorage.
func (t *tx) GetOutcome(ctx context.Context, project, id string) (learning.Outcome, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return learning.Outcome{}, err
	}
	if p != nil {
		if o, ok := p.outcomes[id]; ok {
			return cloneOutcome(*o), nil
		}
	}
	return learning.Outcome{}, notFound("outcome", project, id)
}

func outcomeMatches(f store.OutcomeFilter) func(*learning.Outcome) bool {
	return func(o *learning.Outcome) bool {
		return (f.TaskID == "" || o.TaskID == f.TaskID) &&
			(f.Since.IsZero() || !o.RecordedAt.Before(f.Since)) &&
			(f.Until.IsZero() || o.RecordedAt.Before(f.Until))
	}
}

// ListOutcomes implements store.OutcomeStorage: newest first (RecordedAt,
// then id, both descending).
func (t *tx) ListOutcomes(ctx context.Context, project string, f store.OutcomeFilter) ([]learning.Outcome, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.Outcome{}, err
	}
	found := sorted(selectAll(p.outcomes, outcomeMatches(f)), func(a, b *learning.Outcome) int {
		return newestFirst(a.RecordedAt, a.ID, b.RecordedAt, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneOutcome), nil
}

// CountOutcomes implements store.OutcomeStorage.
func (t *tx) CountOutcomes(ctx context.Context, project string, f store.OutcomeFilter) (int64, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return 0, err
	}
	return count(p.outcomes, outcomeMatches(f)), nil
}

// EachOutcome implements store.OutcomeStorage, oldest first.
func (t *tx) EachOutcome(ctx context.Context, project string, fn func(learning.Outcome) error) error {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return err
	}
	found := sorted(selectAll(p.outcomes, nil), func(a, b *learning.Outcome) int {
		return oldestFirst(a.RecordedAt, a.ID, b.RecordedAt, b.ID)
	})
	return each(ctx, found, cloneOutcome, fn)
}

// feedback returns the project's criterion feedback events (projections
// of its outcomes) that keep says to keep, oldest first.
func (p *project) feedback(keep func(*learning.Outcome) bool, criterion string) []learning.FeedbackEvent {
	out := []learning.FeedbackEvent{}
	for _, o := range p.outcomes {
		if keep != nil && !keep(o) {
			continue
		}
		for _, e := range learning.FeedbackEvents(cloneOutcome(*o)) {
			if criterion == "" || e.Criterion == criterion {
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b learning.FeedbackEvent) int { return oldestFirst(a.Timestamp, a.ID, b.Timestamp, b.ID) })
	return out
}

// FeedbackByCriterion implements store.FeedbackStorage.
func (t *tx) FeedbackByCriterion(ctx context.Context, project, criterion string) ([]learning.FeedbackEvent, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.FeedbackEvent{}, err
	}
	return p.feedback(nil, criterion), nil
}

// FeedbackByTask implements store.FeedbackStorage.
func (t *tx) FeedbackByTask(ctx context.Context, project, taskID string) ([]learning.FeedbackEvent, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.FeedbackEvent{}, err
	}
	return p.feedback(func(o *learning.Outcome) bool { return o.TaskID == taskID }, ""), nil
}

// EachFeedback implements store.FeedbackStorage, oldest first.
func (t *tx) EachFeedback(ctx context.Context, project string, fn func(learning.FeedbackEvent) error) error {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return err
	}
	for _, e := range p.feedback(nil, "") {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
