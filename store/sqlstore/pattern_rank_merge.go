package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The merge by id of a full pattern load on SQLite (EachPatternRankByID),
// shared by the transaction's two cursors and the store's own rank
// scanner (store/sqlite/rankscan.go), which read the same two queries.

// PatternRanksByIDQuery and MaturityByIDQuery read a project's patterns
// and maturity rows in key order (argument: the project).
const (
	PatternRanksByIDQuery = `SELECT id, content, kind, tags, COALESCE(anti_pattern_id, '') <> '', success_count, failure_count, created_at
		FROM patterns WHERE project = ? ORDER BY id`
	MaturityByIDQuery = `SELECT pattern_id, helpful_sum, helpful_ref, harmful_sum, harmful_ref, manual_state
		FROM maturity WHERE project = ? ORDER BY pattern_id`
)

// RankMaturity is a maturity row as MergeRanksByID reads it.
type RankMaturity struct {
	ID, Manual       []byte
	Helpful, Harmful learning.DecayedSum
}

// MergeRanksByID calls fn for every pattern nextPattern reads, with its
// maturity row from those nextMaturity reads (or none), both cursors in
// id order (checked). nextPattern fills the pattern fields of r (ID,
// Content, Kind, Tags, Inverted, SuccessCount, FailureCount, Created),
// nextMaturity those of m; each reports false at its end, and the bytes
// it fills need stay valid only until its next call.
func MergeRanksByID(nextPattern func(r *store.PatternRank) (bool, error), nextMaturity func(m *RankMaturity) (bool, error),
	fn func(*store.PatternRank) error) error {
	var (
		r                    store.PatternRank
		m                    RankMaturity
		mOK, mDone           bool // a maturity row is current; the cursor is at its end
		prevMID, prevPattern []byte
	)
	for {
		ok, err := nextPattern(&r)
		if err != nil || !ok {
			return err
		}
		if prevPattern != nil && bytes.Compare(prevPattern, r.ID) >= 0 {
			return fmt.Errorf("patterns out of id order at %q", r.ID)
		}
		prevPattern = append(prevPattern[:0], r.ID...)
		// advance the maturity cursor to the first row not before the id
		for !mDone && (!mOK || bytes.Compare(m.ID, r.ID) < 0) {
			if mOK, err = nextMaturity(&m); err != nil {
				return err
			}
			if !mOK {
				mDone = true
				break
			}
			if prevMID != nil && bytes.Compare(prevMID, m.ID) >= 0 {
				return fmt.Errorf("maturity rows out of id order at %q", m.ID)
			}
			prevMID = append(prevMID[:0], m.ID...)
		}
		if mOK && bytes.Equal(m.ID, r.ID) {
			r.Manual, r.Helpful, r.Harmful = m.Manual, m.Helpful, m.Harmful
		} else {
			r.Manual, r.Helpful, r.Harmful = nil, learning.DecayedSum{}, learning.DecayedSum{}
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
}

// eachPatternRankByID is the merge on the transaction's own two cursors.
func (t *Tx) eachPatternRankByID(ctx context.Context, project string, fn func(*store.PatternRank) error) error {
	mrows, err := t.rows(ctx, MaturityByIDQuery, project)
	if err != nil {
		return fmt.Errorf("list maturity by id: %w", err)
	}
	defer mrows.Close()
	prows, err := t.rows(ctx, PatternRanksByIDQuery, project)
	if err != nil {
		return fmt.Errorf("list pattern ranks by id: %w", err)
	}
	defer prows.Close()
	var (
		id, content, kind, tags sql.RawBytes
		created                 sql.NullInt64
		inverted                bool
		mID, man                sql.RawBytes
		hRef, xRef              sql.NullInt64
	)
	err = MergeRanksByID(func(r *store.PatternRank) (bool, error) {
		if !prows.Next() {
			if err := prows.Err(); err != nil {
				return false, fmt.Errorf("list pattern ranks by id: %w", err)
			}
			return false, nil
		}
		if err := prows.Scan(&id, &content, &kind, &tags, &inverted, &r.SuccessCount, &r.FailureCount, &created); err != nil {
			return false, fmt.Errorf("scan pattern ranks by id: %w", err)
		}
		r.ID, r.Content, r.Kind, r.Tags, r.Inverted = id, content, kind, tags, inverted
		r.Created = store.NoCreated
		if created.Valid {
			r.Created = created.Int64
		}
		return true, nil
	}, func(m *RankMaturity) (bool, error) {
		if !mrows.Next() {
			return false, mrows.Err()
		}
		if err := mrows.Scan(&mID, &m.Helpful.Value, &hRef, &m.Harmful.Value, &xRef, &man); err != nil {
			return false, fmt.Errorf("scan maturity by id: %w", err)
		}
		m.ID, m.Manual = mID, man
		m.Helpful.Ref, m.Harmful.Ref = fromMicros(hRef), fromMicros(xRef)
		return true, nil
	}, fn)
	if err != nil {
		return err
	}
	if err := prows.Close(); err != nil {
		return err
	}
	return mrows.Close()
}
