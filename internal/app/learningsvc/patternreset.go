package learningsvc

import (
	"context"
	"fmt"

	"github.com/kaizenhq/kaizen/store"
)

// Catching up after a pattern deletion (issue 17). A deletion leaves no
// row to read among the patterns changed since a cached or saved state,
// so that state used to be dropped and every pattern read again (seconds
// and a few hundred MiB at 100,000 patterns). When the store can list the
// ids of a project's patterns alone (store.PatternIDReader, an index-only
// scan), the state is brought up to date instead: the patterns changed
// since it are read as for any refresh, then the current ids are walked in
// the store's order and each row is taken from the changed records, else
// from the state (a pattern unchanged since the state's version is the
// same as in it), so that deleted patterns drop out and the rows are in
// the store's order — exactly the rows a full load reads. The result is a
// new base, saved as the project's snapshot.

// errStaleState: an id the store lists is neither changed since the
// cached state nor in it (the state does not match the store); the caller
// loads every pattern.
var errStaleState = fmt.Errorf("pattern cache: the cached state does not match the store")

// afterReset returns from (the project's patterns at from.version, older
// than the last deletion v.ResetVersion) brought to v; ok is false when
// the store cannot list pattern ids or the state does not match it (the
// caller then loads every pattern).
func (c *patternCache) afterReset(ctx context.Context, tx store.Tx, project string, from *cachedProject, v store.PatternVersion) (*cachedProject, bool, error) {
	ir, ok := tx.(store.PatternIDReader)
	if !ok || v.Version < from.version {
		return nil, false, nil
	}
	if stale, err := tooStale(ctx, tx, project, from); err != nil || stale {
		return nil, false, err
	}
	delta, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{ChangedAfter: from.version})
	if err != nil {
		return nil, false, err
	}
	changed := make(map[string]*store.PatternRecord, len(delta))
	for i := range delta {
		r := &delta[i]
		r.Pattern.ExampleTasks = nil // see patternCache
		changed[r.Pattern.ID] = r
	}
	rows := make([]patternRow, 0, len(from.base.rows)+len(from.added))
	err = ir.EachPatternID(ctx, project, func(id []byte) error {
		if r := changed[string(id)]; r != nil {
			rows = append(rows, rowOf(r))
			return nil
		}
		if r := from.overlay[string(id)]; r != nil {
			rows = append(rows, rowOf(r))
			return nil
		}
		pos, ok := from.base.pos(string(id))
		if !ok {
			return errStaleState
		}
		rows = append(rows, from.base.rows[pos])
		return nil
	})
	switch {
	case err == errStaleState:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	if cap(rows) > len(rows)+len(rows)/8 {
		rows = append([]patternRow(nil), rows...)
	}
	next := &cachedProject{version: v.Version, base: newPatternBase(rows)}
	c.snaps.saveLater(ctx, tx, project, next.version, next.base)
	return next, true, nil
}
