package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// EachPatternRankByID implements store.PatternRankIDReader on SQLite: the
// patterns and their maturity rows are read by two cursors, each walking
// its table in key order (project, id), merged by id. The join in the
// order of PatternsWithMaturity (EachPatternRank) walks the creation-order
// index and seeks the patterns table and the maturity table for every
// pattern: two B-tree searches a row, about half of a full load's CPU at
// 100,000 patterns (issue 17). Both tables are WITHOUT ROWID and keyed by
// (project, id) under SQLite's binary collation, so both cursors return
// ids in byte order. PostgreSQL declines (its join needs no seeks and its
// id order follows the database's collation).
func (t *Tx) EachPatternRankByID(ctx context.Context, project string, fn func(*store.PatternRank) error) (bool, error) {
	if t.d.Name != SQLite.Name {
		return false, nil
	}
	if err := t.flushFirst(ctx); err != nil {
		return false, err
	}
	if t.ranks != nil { // a connection of the store's own (RankScanner)
		v, err := t.PatternVersion(ctx, project)
		if err != nil {
			return false, err
		}
		if ok, err := t.ranks.ScanPatternRanksByID(ctx, project, v.Version, fn); ok || err != nil {
			return true, err
		}
	}
	return true, t.withScanCache(ctx, func() error { return t.eachPatternRankByID(ctx, project, fn) })
}

func (t *Tx) eachPatternRankByID(ctx context.Context, project string, fn func(*store.PatternRank) error) error {
	mrows, err := t.rows(ctx, `SELECT pattern_id, helpful_sum, helpful_ref, harmful_sum, harmful_ref, manual_state
		FROM maturity WHERE project = ? ORDER BY pattern_id`, project)
	if err != nil {
		return fmt.Errorf("list maturity by id: %w", err)
	}
	defer mrows.Close()
	prows, err := t.rows(ctx, `SELECT id, content, kind, tags, COALESCE(anti_pattern_id, '') <> '', success_count, failure_count, created_at
		FROM patterns WHERE project = ? ORDER BY id`, project)
	if err != nil {
		return fmt.Errorf("list pattern ranks by id: %w", err)
	}
	defer prows.Close()
	var (
		r                    store.PatternRank
		id, content          sql.RawBytes
		kind, tags           sql.RawBytes
		created              sql.NullInt64
		mID, man             sql.RawBytes
		hSum, xSum           float64
		hRef, xRef           sql.NullInt64
		mOK                  bool // a maturity row is current
		mDone                bool
		inverted             bool
		prevMID, prevPattern []byte
	)
	// nextM advances the maturity cursor to the first row not before id.
	nextM := func(id []byte) error {
		for !mDone && (!mOK || bytes.Compare(mID, id) < 0) {
			if !mrows.Next() {
				mDone, mOK = true, false
				return mrows.Err()
			}
			if err := mrows.Scan(&mID, &hSum, &hRef, &xSum, &xRef, &man); err != nil {
				return fmt.Errorf("scan maturity by id: %w", err)
			}
			if prevMID != nil && bytes.Compare(prevMID, mID) >= 0 {
				return fmt.Errorf("maturity rows out of id order at %q", mID)
			}
			prevMID = append(prevMID[:0], mID...)
			mOK = true
		}
		return nil
	}
	for prows.Next() {
		if err := prows.Scan(&id, &content, &kind, &tags, &inverted, &r.SuccessCount, &r.FailureCount, &created); err != nil {
			return fmt.Errorf("scan pattern ranks by id: %w", err)
		}
		if prevPattern != nil && bytes.Compare(prevPattern, id) >= 0 {
			return fmt.Errorf("patterns out of id order at %q", id)
		}
		prevPattern = append(prevPattern[:0], id...)
		if err := nextM(id); err != nil {
			return err
		}
		r.ID, r.Content, r.Kind, r.Tags, r.Inverted = id, content, kind, tags, inverted
		r.Created = store.NoCreated
		if created.Valid {
			r.Created = created.Int64
		}
		if mOK && bytes.Equal(mID, id) {
			r.Manual = man
			r.Helpful = learning.DecayedSum{Value: hSum, Ref: fromMicros(hRef)}
			r.Harmful = learning.DecayedSum{Value: xSum, Ref: fromMicros(xRef)}
		} else {
			r.Manual, r.Helpful, r.Harmful = nil, learning.DecayedSum{}, learning.DecayedSum{}
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := prows.Err(); err != nil {
		return fmt.Errorf("list pattern ranks by id: %w", err)
	}
	if err := prows.Close(); err != nil {
		return err
	}
	return mrows.Close()
}
