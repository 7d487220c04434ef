package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
)

// Criterion feedback events are read from the outcomes they belong to
// (learning.FeedbackEvents): an outcome row holds everything its events do.

func feedbackOrder(a, b learning.FeedbackEvent) int {
	return cmp.Or(a.Timestamp.Compare(b.Timestamp), strings.Compare(a.ID, b.ID))
}

// FeedbackByCriterion implements store.FeedbackStorage. The criteria column
// is a JSON list; a LIKE on the criterion's JSON string narrows the scan,
// and the exact match is made on the decoded list.
func (t *Tx) FeedbackByCriterion(ctx context.Context, project, criterion string) ([]learning.FeedbackEvent, error) {
	quoted, err := json.Marshal(criterion)
	if err != nil {
		return nil, err
	}
	out := []learning.FeedbackEvent{}
	err = each(ctx, t, "feedback", scanOutcome, func(o learning.Outcome) error {
		for _, e := range learning.FeedbackEvents(o) {
			if e.Criterion == criterion {
				out = append(out, e)
			}
		}
		return nil
	}, `SELECT `+outcomeCols+` FROM outcomes WHERE project = ? AND criteria LIKE ? ESCAPE '\'`,
		project, likePattern(string(quoted)))
	slices.SortFunc(out, feedbackOrder)
	return out, err
}

// FeedbackByTask implements store.FeedbackStorage.
func (t *Tx) FeedbackByTask(ctx context.Context, project, taskID string) ([]learning.FeedbackEvent, error) {
	out := []learning.FeedbackEvent{}
	err := each(ctx, t, "feedback", scanOutcome, func(o learning.Outcome) error {
		out = append(out, learning.FeedbackEvents(o)...)
		return nil
	}, `SELECT `+outcomeCols+` FROM outcomes WHERE project = ? AND task_id = ?`, project, taskID)
	slices.SortFunc(out, feedbackOrder)
	return out, err
}

// EachFeedback implements store.FeedbackStorage.
func (t *Tx) EachFeedback(ctx context.Context, project string, fn func(learning.FeedbackEvent) error) error {
	return t.EachOutcome(ctx, project, func(o learning.Outcome) error {
		for _, e := range learning.FeedbackEvents(o) {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	})
}
