package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/experience"
)

// CompactRecalls implements store.RetentionStorage. A stored item list
// that mentions "injected":false still holds considered items.
func (t *Tx) CompactRecalls(ctx context.Context, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	type row struct{ project, id, items string }
	rows, err := many(ctx, t, "recalls to compact", func(s scanner) (row, error) {
		var r row
		return r, s.Scan(&r.project, &r.id, &r.items)
	}, `SELECT project, id, items FROM recalls WHERE items LIKE ? ORDER BY project, id LIMIT ?`,
		`%"injected":false%`, limit)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rows {
		var items []experience.RecallItem
		if err := json.Unmarshal([]byte(r.items), &items); err != nil {
			return n, fmt.Errorf("compact recall %s: %w", r.id, err)
		}
		kept := make([]experience.RecallItem, 0, len(items))
		keep := map[string]bool{}
		for _, it := range items {
			if it.Injected {
				kept = append(kept, it)
				keep[it.RefID] = true
			}
		}
		data, err := jsonSlice("recall items", kept)
		if err != nil {
			return n, err
		}
		if _, err := t.exec(ctx, `UPDATE recalls SET items = ? WHERE project = ? AND id = ?`, data, r.project, r.id); err != nil {
			return n, fmt.Errorf("compact recall %s: %w", r.id, err)
		}
		for _, it := range items {
			if !keep[it.RefID] {
				if _, err := t.exec(ctx, `DELETE FROM recall_items WHERE project = ? AND ref_id = ? AND recall_id = ?`,
					r.project, it.RefID, r.id); err != nil {
					return n, fmt.Errorf("compact recall %s: %w", r.id, err)
				}
			}
		}
		n++
	}
	return n, nil
}

// PruneRecalls implements store.RetentionStorage.
func (t *Tx) PruneRecalls(ctx context.Context, before time.Time, keep int) (int64, error) {
	var n int64
	if !before.IsZero() {
		res, err := t.exec(ctx, `DELETE FROM recalls WHERE created_at < ?`, at(before))
		if err != nil {
			return 0, fmt.Errorf("prune recalls: %w", err)
		}
		d, _ := res.RowsAffected()
		n += d
	}
	if keep > 0 {
		res, err := t.exec(ctx, `DELETE FROM recalls WHERE (project, id) IN (
			SELECT project, id FROM (
				SELECT project, id, ROW_NUMBER() OVER (PARTITION BY project ORDER BY created_at DESC, id DESC) AS rn
				FROM recalls) ranked
			WHERE rn > ?)`, keep)
		if err != nil {
			return n, fmt.Errorf("prune recalls: %w", err)
		}
		d, _ := res.RowsAffected()
		n += d
	}
	if n > 0 {
		if _, err := t.exec(ctx, `DELETE FROM recall_items WHERE NOT EXISTS (
			SELECT 1 FROM recalls r WHERE r.project = recall_items.project AND r.id = recall_items.recall_id)`); err != nil {
			return n, fmt.Errorf("prune recall items: %w", err)
		}
	}
	return n, nil
}
