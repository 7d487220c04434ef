package sqlstore

import (
	"context"
	"database/sql"

	"github.com/kaizenhq/kaizen/learning"
)

const feedbackCols = `project, id, criterion, type, raw_value, task_id, outcome_id, ts, context`

func scanFeedback(s scanner) (learning.FeedbackEvent, error) {
	var e learning.FeedbackEvent
	var ts sql.NullInt64
	err := s.Scan(&e.Project, &e.ID, &e.Criterion, &e.Type, &e.RawValue, &e.TaskID, &e.OutcomeID, &ts, &e.Context)
	e.Timestamp = fromMicros(ts)
	return e, err
}

// InsertFeedback implements store.FeedbackStorage.
func (t *Tx) InsertFeedback(ctx context.Context, e learning.FeedbackEvent) (bool, error) {
	return t.insert(ctx, "feedback", `INSERT INTO feedback (`+feedbackCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.Project, e.ID, e.Criterion, string(e.Type), e.RawValue, e.TaskID, e.OutcomeID, micros(e.Timestamp), e.Context)
}

// FeedbackByCriterion implements store.FeedbackStorage.
func (t *Tx) FeedbackByCriterion(ctx context.Context, project, criterion string) ([]learning.FeedbackEvent, error) {
	return many(ctx, t, "feedback", scanFeedback,
		`SELECT `+feedbackCols+` FROM feedback WHERE project = ? AND criterion = ? ORDER BY ts, id`, project, criterion)
}

// FeedbackByTask implements store.FeedbackStorage.
func (t *Tx) FeedbackByTask(ctx context.Context, project, taskID string) ([]learning.FeedbackEvent, error) {
	return many(ctx, t, "feedback", scanFeedback,
		`SELECT `+feedbackCols+` FROM feedback WHERE project = ? AND task_id = ? ORDER BY ts, id`, project, taskID)
}

// EachFeedback implements store.FeedbackStorage.
func (t *Tx) EachFeedback(ctx context.Context, project string, fn func(learning.FeedbackEvent) error) error {
	return each(ctx, t, "feedback", scanFeedback, fn,
		`SELECT `+feedbackCols+` FROM feedback WHERE project = ? ORDER BY ts, id`, project)
}
