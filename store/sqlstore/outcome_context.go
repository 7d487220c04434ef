package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// OutcomeContexts implements store.OutcomeContextReader.
func (t *Tx) OutcomeContexts(ctx context.Context, project string, since time.Time, limit int) ([]store.OutcomeContext, error) {
	defer t.outcomeRead(project, "")()
	where, args := t.outcomeWhere(project, store.OutcomeFilter{Since: since})
	q, args := page(`SELECT id, task_id, task, tags, patterns, success, ts, recorded_at`+where+
		` ORDER BY recorded_at DESC, id DESC`, args, limit, 0)
	return many(ctx, t, "outcomes", func(s scanner) (store.OutcomeContext, error) {
		var o store.OutcomeContext
		var tags, patterns string
		var ts, recorded sql.NullInt64
		if err := s.Scan(&o.ID, &o.TaskID, &o.Task, &tags, &patterns, &o.Success, &ts, &recorded); err != nil {
			return o, err
		}
		var err error
		if o.Tags, err = quickJSONList(tags); err != nil {
			return o, err
		}
		if o.Patterns, err = quickJSONList(patterns); err != nil {
			return o, err
		}
		o.Timestamp, o.RecordedAt = fromMicros(ts), fromMicros(recorded)
		return o, nil
	}, q, args...)
}

// quickJSONList is fromJSONList, reading a list of strings without
// escapes (what the store writes for ids and tags) without encoding/json.
func quickJSONList(s string) ([]string, error) {
	if len(s) >= 4 && s[:2] == `["` && s[len(s)-2:] == `"]` && !strings.ContainsRune(s, '\\') {
		parts := strings.Split(s[2:len(s)-2], `","`)
		ok := true
		for _, p := range parts {
			if strings.ContainsRune(p, '"') {
				ok = false
				break
			}
		}
		if ok {
			return parts, nil
		}
	}
	return fromJSONList(s)
}
