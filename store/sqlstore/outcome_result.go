package sqlstore

import (
	"context"
	"database/sql"

	"github.com/kaizenhq/kaizen/store"
)

func scanOutcomeResult(s scanner) (store.OutcomeResult, error) {
	var r store.OutcomeResult
	var ts, recorded sql.NullInt64
	var inference string
	err := s.Scan(&r.ID, &r.TaskID, &r.Success, &ts, &recorded, &inference)
	r.Timestamp, r.RecordedAt = fromMicros(ts), fromMicros(recorded)
	r.Inferred = inference != ""
	return r, err
}

// OutcomeResults implements store.OutcomeStorage.
func (t *Tx) OutcomeResults(ctx context.Context, project string, f store.OutcomeFilter) ([]store.OutcomeResult, error) {
	where, args := t.outcomeWhere(project, f)
	q, args := page(`SELECT id, task_id, success, ts, recorded_at, inference`+where+` ORDER BY recorded_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "outcome results", scanOutcomeResult, q, args...)
}
