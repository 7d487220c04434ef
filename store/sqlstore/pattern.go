package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

const patternCols = `project, id, content, kind, is_negative, success_count, failure_count, tags, example_tasks,
	reason, source_id, anti_pattern_id, generation, created_at, updated_at`

// prefixed qualifies every column of a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

type patternScan struct {
	p                learning.Pattern
	tags, examples   string
	created, updated sql.NullInt64
}

func (ps *patternScan) dest() []any {
	p := &ps.p
	return []any{&p.Project, &p.ID, &p.Content, &p.Kind, &p.IsNegative, &p.SuccessCount, &p.FailureCount,
		&ps.tags, &ps.examples, &p.Reason, &p.SourceID, &p.AntiPatternID, &p.Generation, &ps.created, &ps.updated}
}

func (ps *patternScan) finish() (learning.Pattern, error) {
	var err error
	p := ps.p
	p.CreatedAt, p.UpdatedAt = fromMicros(ps.created), fromMicros(ps.updated)
	if p.Tags, err = fromJSONList(ps.tags); err != nil {
		return p, err
	}
	p.ExampleTasks, err = fromJSONList(ps.examples)
	return p, err
}

func scanPattern(s scanner) (learning.Pattern, error) {
	var ps patternScan
	if err := s.Scan(ps.dest()...); err != nil {
		return ps.p, err
	}
	return ps.finish()
}

func patternKey(project, id string) rowKey { return rowKey{"patterns", project, id} }

// InsertPattern implements store.PatternStorage.
func (t *Tx) InsertPattern(ctx context.Context, p learning.Pattern) (bool, error) {
	k := t.keysOf(p.Content)
	ok, err := t.insert(ctx, "pattern", `INSERT INTO patterns (`+patternCols+`, content_key, search_key, content_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		p.Project, p.ID, p.Content, string(p.Kind), p.IsNegative, p.SuccessCount, p.FailureCount,
		jsonList(p.Tags), jsonList(p.ExampleTasks), p.Reason, p.SourceID, p.AntiPatternID, p.Generation,
		micros(p.CreatedAt), micros(p.UpdatedAt), k.key, strings.ToLower(p.Content), k.hash)
	if ok {
		t.touch(p.Project, p.ID, false)
	}
	if t.agg != nil && err == nil {
		if ok {
			t.rememberLocked(patternKey(p.Project, p.ID), clonePattern(p), true, true) // a new row is the inserter's
		}
		// Inserted, or in conflict with a pattern another transaction
		// created since this one looked the content up (PostgreSQL).
		t.forgetContent(p.Project, p.Content)
	}
	return ok, err
}

// clonePattern copies the slices of a pattern kept in the cache, so callers
// cannot change cached state through them.
func clonePattern(p learning.Pattern) learning.Pattern {
	p.Tags = append([]string{}, p.Tags...)
	p.ExampleTasks = append([]string{}, p.ExampleTasks...)
	return p
}

func (t *Tx) getPattern(ctx context.Context, project, id string, lock bool) (learning.Pattern, error) {
	k := patternKey(project, id)
	look := t.lookup
	if lock {
		look = t.lookupLocked
	}
	if v, present, ok := look(k); ok {
		if !present {
			return learning.Pattern{}, fmt.Errorf("pattern %s: %w", id, store.ErrNotFound)
		}
		return clonePattern(v.(learning.Pattern)), nil
	}
	if lock && t.agg != nil && !t.rowLocks() {
		return t.lockPatternWithMaturity(ctx, project, id)
	}
	suffix := ""
	if lock {
		suffix = t.d.ForUpdate
	}
	p, err := one(ctx, t, "pattern "+id, scanPattern,
		`SELECT `+patternCols+` FROM patterns WHERE project = ? AND id = ?`+suffix, project, id)
	switch {
	case err == nil:
		t.rememberLocked(k, clonePattern(p), true, lock)
		if lock && t.rowLocks() {
			// The maturity record is guarded by the pattern's lock: one
			// cached before it was taken may be stale.
			t.forgetClean(maturityKey(project, id))
		}
	case errors.Is(err, store.ErrNotFound):
		t.remember(k, nil, false)
	}
	return p, err
}

// lockPatternWithMaturity is a locking read of a pattern for the
// aggregate cache: one statement reads the pattern and its maturity record
// and caches both, since observing a pattern reads the two together. Only
// without row locks (SQLite's exclusive writer): on PostgreSQL a join that
// waited for the pattern's lock would return the maturity row of its
// snapshot, from before the lock holder committed (READ COMMITTED re-reads
// only the locked row), so there the record is read after the lock.
func (t *Tx) lockPatternWithMaturity(ctx context.Context, project, id string) (learning.Pattern, error) {
	type row struct {
		p    learning.Pattern
		m    learning.Maturity
		hasM bool
	}
	r, err := one(ctx, t, "pattern "+id, func(s scanner) (row, error) {
		var ps patternScan
		var mid sql.NullString
		var ms maturityScan
		if err := s.Scan(append(append(ps.dest(), &mid), ms.nullableDest()...)...); err != nil {
			return row{}, err
		}
		p, err := ps.finish()
		if err != nil {
			return row{}, err
		}
		r := row{p: p, hasM: mid.Valid}
		if mid.Valid {
			r.m, err = ms.finishNullable(p.Project, p.ID)
		}
		return r, err
	}, `SELECT `+prefixed("p", patternCols)+`, m.pattern_id, `+prefixed("m", maturityValueCols)+`
		FROM patterns p LEFT JOIN maturity m ON m.project = p.project AND m.pattern_id = p.id
		WHERE p.project = ? AND p.id = ?`, project, id)
	if err != nil {
		return learning.Pattern{}, err
	}
	t.rememberLocked(patternKey(project, id), clonePattern(r.p), true, true)
	mk := maturityKey(project, id)
	if e, ok := t.agg.rows[mk]; !ok || !e.dirty {
		if r.hasM {
			t.rememberLocked(mk, r.m, true, true)
		} else {
			t.rememberLocked(mk, nil, false, true)
		}
	}
	return r.p, nil
}

// GetPattern implements store.PatternStorage.
func (t *Tx) GetPattern(ctx context.Context, project, id string) (learning.Pattern, error) {
	return t.getPattern(ctx, project, id, false)
}

// LockPattern implements store.PatternStorage.
func (t *Tx) LockPattern(ctx context.Context, project, id string) (learning.Pattern, error) {
	return t.getPattern(ctx, project, id, true)
}

// UpdatePattern implements store.PatternStorage. With the aggregate cache,
// an update is staged until Flush, except one that changes the content of a
// kind="pattern" pattern (or a kind): that one is written at once, so a
// content uniqueness violation is reported to the request that caused it.
func (t *Tx) UpdatePattern(ctx context.Context, p learning.Pattern) error {
	if t.agg == nil {
		err := t.writePattern(ctx, p)
		if err == nil {
			t.touch(p.Project, p.ID, false)
		}
		return err
	}
	old, err := t.GetPattern(ctx, p.Project, p.ID)
	if err != nil {
		return fmt.Errorf("update pattern %s: %w", p.ID, err)
	}
	contentChanged := old.Content != p.Content && t.keysOf(old.Content).key != t.keysOf(p.Content).key
	_, _, locked := t.lookupLocked(patternKey(p.Project, p.ID))
	// Staged are updates of counts and evidence only, written at Flush by
	// writeStagedPatterns without touching the indexed columns. Others are
	// written now: a new content may collide with another pattern's (the
	// request that caused it gets the error), and on PostgreSQL a pattern
	// read without its lock is written at once, as without the cache (the
	// UPDATE takes the lock).
	if old.Content != p.Content || old.Kind != p.Kind || !old.CreatedAt.Equal(p.CreatedAt) || !locked {
		if err := t.writePattern(ctx, p); err != nil {
			return err
		}
		t.rememberLocked(patternKey(p.Project, p.ID), clonePattern(p), true, true)
	} else {
		t.stage(patternKey(p.Project, p.ID), clonePattern(p))
	}
	if contentChanged {
		t.forgetContent(p.Project, old.Content)
		t.forgetContent(p.Project, p.Content)
	}
	t.touch(p.Project, p.ID, false)
	return nil
}

func (t *Tx) writePattern(ctx context.Context, p learning.Pattern) error {
	return t.change(ctx, "update pattern "+p.ID, `UPDATE patterns SET content = ?, content_key = ?, search_key = ?, content_hash = ?, kind = ?, is_negative = ?,
		success_count = ?, failure_count = ?, tags = ?, example_tasks = ?, reason = ?, source_id = ?,
		anti_pattern_id = ?, generation = ?, created_at = ?, updated_at = ? WHERE project = ? AND id = ?`,
		p.Content, t.keysOf(p.Content).key, strings.ToLower(p.Content), t.keysOf(p.Content).hash, string(p.Kind), p.IsNegative, p.SuccessCount, p.FailureCount,
		jsonList(p.Tags), jsonList(p.ExampleTasks), p.Reason, p.SourceID, p.AntiPatternID, p.Generation,
		micros(p.CreatedAt), micros(p.UpdatedAt), p.Project, p.ID)
}

// DeletePattern implements store.PatternStorage.
func (t *Tx) DeletePattern(ctx context.Context, project, id string) error {
	var content string
	if t.agg != nil {
		old, err := t.GetPattern(ctx, project, id)
		if err != nil {
			return fmt.Errorf("delete pattern %s: %w", id, err)
		}
		content = old.Content
	}
	err := t.change(ctx, "delete pattern "+id, `DELETE FROM patterns WHERE project = ? AND id = ?`, project, id)
	if err == nil {
		t.touch(project, id, true)
	}
	if err == nil && t.agg != nil {
		t.rememberLocked(patternKey(project, id), nil, false, true) // deleted by this transaction
		t.forgetContent(project, content)
	}
	return err
}

func (t *Tx) patternWhere(alias, project string, f store.PatternFilter) (string, []any) {
	col := func(c string) string { return alias + c }
	q, args := ` WHERE `+col("project")+` = ?`, []any{project}
	if f.Kind != "" {
		q += ` AND ` + col("kind") + ` = ?`
		args = append(args, string(f.Kind))
	}
	if f.Tag != "" {
		q += ` AND ` + strings.ReplaceAll(t.d.TagMatch, "tags", col("tags"))
		args = append(args, f.Tag)
	}
	if f.Search != "" {
		q += ` AND ` + col("search_key") + ` LIKE ? ESCAPE '\'`
		args = append(args, likePattern(strings.ToLower(f.Search)))
	}
	if f.ChangedAfter > 0 {
		q += ` AND ` + col("version") + ` > ?`
		args = append(args, f.ChangedAfter)
	}
	return q, args
}

// ListPatterns implements store.PatternStorage.
func (t *Tx) ListPatterns(ctx context.Context, project string, f store.PatternFilter) ([]learning.Pattern, error) {
	if err := t.flushFirst(ctx); err != nil {
		return nil, err
	}
	where, args := t.patternWhere("", project, f)
	q, args := page(`SELECT `+patternCols+` FROM patterns`+where+` ORDER BY created_at, id`, args, f.Limit, f.Offset)
	return many(ctx, t, "patterns", scanPattern, q, args...)
}

// CountPatterns implements store.PatternStorage.
func (t *Tx) CountPatterns(ctx context.Context, project string, f store.PatternFilter) (int64, error) {
	if err := t.flushFirst(ctx); err != nil {
		return 0, err
	}
	where, args := t.patternWhere("", project, f)
	return t.count(ctx, "patterns", `SELECT COUNT(*) FROM patterns`+where, args...)
}

// FindPatternsByContent implements store.PatternStorage. With the
// aggregate cache the ids found per content are remembered (content only
// changes through writes that reset this memory) and the patterns come from
// the cache, so staged updates are visible.
func (t *Tx) FindPatternsByContent(ctx context.Context, project, content string) ([]learning.Pattern, error) {
	ck := t.contentKey(project, content)
	if t.agg != nil {
		if ids, ok := t.agg.content[ck]; ok {
			out := make([]learning.Pattern, 0, len(ids))
			for _, id := range ids {
				p, err := t.GetPattern(ctx, project, id)
				if err != nil {
					return nil, err
				}
				out = append(out, p)
			}
			return out, nil
		}
	}
	// No ORDER BY: it would make SQLite walk the creation-order index over
	// every pattern of the project instead of using the content-hash index.
	found, err := many(ctx, t, "patterns", scanPattern, `SELECT `+patternCols+` FROM patterns`+t.d.ContentIndex+`
		WHERE project = ? AND content_hash = ? AND content_key = ?`,
		project, t.keysOf(content).hash, t.keysOf(content).key)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(found, func(a, b learning.Pattern) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	if t.agg == nil {
		return found, nil
	}
	ids := make([]string, len(found))
	for i, p := range found {
		ids[i] = p.ID
		k := patternKey(project, p.ID)
		if v, present, ok := t.lookup(k); ok && present {
			found[i] = clonePattern(v.(learning.Pattern)) // the cached state may be newer
		} else {
			t.remember(k, clonePattern(p), true)
		}
	}
	t.agg.content[ck] = ids
	return found, nil
}

// PatternsWithMaturity implements store.PatternStorage.
func (t *Tx) PatternsWithMaturity(ctx context.Context, project string, f store.PatternFilter) ([]store.PatternRecord, error) {
	if err := t.flushFirst(ctx); err != nil {
		return nil, err
	}
	where, args := t.patternWhere("p.", project, f)
	q, args := page(`SELECT `+prefixed("p", patternCols)+`, p.version, m.pattern_id, `+prefixed("m", maturityValueCols)+`
		FROM patterns p LEFT JOIN maturity m ON m.project = p.project AND m.pattern_id = p.id`+where+
		` ORDER BY p.created_at, p.id`, args, f.Limit, f.Offset)
	return many(ctx, t, "patterns", func(s scanner) (store.PatternRecord, error) {
		var ps patternScan
		var mid sql.NullString
		var ms maturityScan
		var version int64
		if err := s.Scan(append(append(ps.dest(), &version, &mid), ms.nullableDest()...)...); err != nil {
			return store.PatternRecord{}, err
		}
		p, err := ps.finish()
		if err != nil {
			return store.PatternRecord{}, err
		}
		rec := store.PatternRecord{Pattern: p, Version: version,
			Maturity: learning.Maturity{Project: p.Project, PatternID: p.ID, Generation: p.Generation}}
		if mid.Valid {
			if rec.Maturity, err = ms.finishNullable(p.Project, p.ID); err != nil {
				return rec, fmt.Errorf("maturity of %s: %w", p.ID, err)
			}
		}
		return rec, nil
	}, q, args...)
}

// EachPattern implements store.PatternStorage.
func (t *Tx) EachPattern(ctx context.Context, project string, fn func(learning.Pattern) error) error {
	if err := t.flushFirst(ctx); err != nil {
		return err
	}
	return each(ctx, t, "patterns", scanPattern, fn,
		`SELECT `+patternCols+` FROM patterns WHERE project = ? ORDER BY created_at, id`, project)
}

// PatternVersion implements store.PatternStorage.
func (t *Tx) PatternVersion(ctx context.Context, project string) (store.PatternVersion, error) {
	v, err := one(ctx, t, "pattern version", func(s scanner) (store.PatternVersion, error) {
		var v store.PatternVersion
		return v, s.Scan(&v.Version, &v.ResetVersion)
	}, `SELECT version, reset_version FROM pattern_versions WHERE project = ?`, project)
	if errors.Is(err, store.ErrNotFound) {
		return store.PatternVersion{}, nil
	}
	return v, err
}
