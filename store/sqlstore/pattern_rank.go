package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// EachPatternRank implements store.PatternRankReader: one query over the
// columns guidance ranks on, scanned into reused buffers (no JSON decoding,
// no record per row).
func (t *Tx) EachPatternRank(ctx context.Context, project string, fn func(*store.PatternRank) error) error {
	if err := t.flushFirst(ctx); err != nil {
		return err
	}
	return t.withScanCache(ctx, func() error { return t.eachPatternRank(ctx, project, fn) })
}

func (t *Tx) eachPatternRank(ctx context.Context, project string, fn func(*store.PatternRank) error) error {
	rows, err := t.rows(ctx, `SELECT p.id, p.content, p.kind, p.tags, COALESCE(p.anti_pattern_id, '') <> '', p.success_count, p.failure_count,
		m.helpful_sum, m.helpful_ref, m.harmful_sum, m.harmful_ref, m.manual_state
		FROM patterns p LEFT JOIN maturity m ON m.project = p.project AND m.pattern_id = p.id
		WHERE p.project = ? ORDER BY p.created_at, p.id`, project)
	if err != nil {
		return fmt.Errorf("list pattern ranks: %w", err)
	}
	defer rows.Close()
	var (
		r               store.PatternRank
		id, content     sql.RawBytes
		kind, tags, man sql.RawBytes
		hSum, xSum      sql.NullFloat64
		hRef, xRef      sql.NullInt64
		inverted        bool
	)
	for rows.Next() {
		if err := rows.Scan(&id, &content, &kind, &tags, &inverted, &r.SuccessCount, &r.FailureCount,
			&hSum, &hRef, &xSum, &xRef, &man); err != nil {
			return fmt.Errorf("scan pattern ranks: %w", err)
		}
		r.ID, r.Content, r.Kind, r.Tags, r.Manual, r.Inverted = id, content, kind, tags, man, inverted
		r.Helpful = learning.DecayedSum{Value: hSum.Float64, Ref: fromMicros(hRef)}
		r.Harmful = learning.DecayedSum{Value: xSum.Float64, Ref: fromMicros(xRef)}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list pattern ranks: %w", err)
	}
	return rows.Close()
}
