package memory

import (
	"context"
	"fmt"
	"slices"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// uniqueKey is the content key under which a pattern takes part in the
// content uniqueness constraint; false when it is exempt (not of kind
// "pattern").
func uniqueKey(p *learning.Pattern) (string, bool) {
	if p.Kind != learning.KindPattern {
		return "", false
	}
	return learning.ContentKey(p.Content), true
}

// InsertPattern implements store.PatternStorage.
func (t *tx) InsertPattern(ctx context.Context, pat learning.Pattern) (bool, error) {
	p, err := t.write(ctx, pat.Project)
	if err != nil {
		return false, err
	}
	if _, ok := p.patterns[pat.ID]; ok {
		return false, nil
	}
	if key, unique := uniqueKey(&pat); unique {
		if _, taken := p.patternByKey[key]; taken {
			return false, nil
		}
		put(t.undo, p.patternByKey, key, pat.ID)
	}
	put(t.undo, p.patterns, pat.ID, stored(pat, clonePattern))
	p.patternsByKey.add(t.undo, learning.ContentKey(pat.Content), pat.ID)
	t.touch(pat.Project, pat.ID, false)
	return true, nil
}

// GetPattern implements store.PatternStorage.
func (t *tx) GetPattern(ctx context.Context, project, id string) (learning.Pattern, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return learning.Pattern{}, err
	}
	return p.pattern(project, id)
}

func (p *project) pattern(project, id string) (learning.Pattern, error) {
	if p != nil {
		if pat, ok := p.patterns[id]; ok {
			return clonePattern(*pat), nil
		}
	}
	return learning.Pattern{}, notFound("pattern", project, id)
}

// LockPattern implements store.PatternStorage. Update is exclusive, so the
// lock is the write lock already held; in a View it fails with ErrReadOnly.
func (t *tx) LockPattern(ctx context.Context, project, id string) (learning.Pattern, error) {
	if err := t.writable(ctx); err != nil {
		return learning.Pattern{}, err
	}
	return t.s.projects[project].pattern(project, id)
}

// UpdatePattern implements store.PatternStorage. A change that would give
// two kind="pattern" patterns of the project the same content key fails
// and changes nothing.
func (t *tx) UpdatePattern(ctx context.Context, pat learning.Pattern) error {
	if err := t.writable(ctx); err != nil {
		return err
	}
	p := t.s.projects[pat.Project]
	if p == nil || p.patterns[pat.ID] == nil {
		return notFound("pattern", pat.Project, pat.ID)
	}
	old := p.patterns[pat.ID]
	oldKey, oldUnique := uniqueKey(old)
	newKey, newUnique := uniqueKey(&pat)
	if newUnique {
		if owner, taken := p.patternByKey[newKey]; taken && owner != pat.ID {
			return fmt.Errorf("update pattern %q in project %q: its content %q duplicates pattern %q",
				pat.ID, pat.Project, newKey, owner)
		}
	}
	if oldUnique && (!newUnique || oldKey != newKey) {
		remove(t.undo, p.patternByKey, oldKey)
	}
	if newUnique {
		put(t.undo, p.patternByKey, newKey, pat.ID)
	}
	p.patternsByKey.remove(t.undo, learning.ContentKey(old.Content), pat.ID)
	p.patternsByKey.add(t.undo, learning.ContentKey(pat.Content), pat.ID)
	put(t.undo, p.patterns, pat.ID, stored(pat, clonePattern))
	t.touch(pat.Project, pat.ID, false)
	return nil
}

// DeletePattern implements store.PatternStorage. The pattern's maturity
// record, observations and feedback stay (DeleteMaturity removes the first).
func (t *tx) DeletePattern(ctx context.Context, project, id string) error {
	if err := t.writable(ctx); err != nil {
		return err
	}
	p := t.s.projects[project]
	if p == nil || p.patterns[id] == nil {
		return notFound("pattern", project, id)
	}
	old := p.patterns[id]
	if key, unique := uniqueKey(old); unique {
		remove(t.undo, p.patternByKey, key)
	}
	p.patternsByKey.remove(t.undo, learning.ContentKey(old.Content), id)
	remove(t.undo, p.patterns, id)
	t.touch(project, id, true)
	return nil
}

func (pr *project) patternMatches(f store.PatternFilter) func(*learning.Pattern) bool {
	return func(p *learning.Pattern) bool {
		return (f.Kind == "" || p.Kind == f.Kind) &&
			(f.Tag == "" || slices.Contains(p.Tags, f.Tag)) &&
			(f.Search == "" || containsFold(p.Content, f.Search)) &&
			(f.ChangedAfter == 0 || pr.patternVersion[p.ID] > f.ChangedAfter)
	}
}

// patternsInOrder is ListPatterns' order: CreatedAt, then id.
func patternsInOrder(a, b *learning.Pattern) int {
	return oldestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
}

// listPatterns selects, orders and pages the project's patterns.
func (p *project) listPatterns(f store.PatternFilter) []*learning.Pattern {
	found := sorted(selectAll(p.patterns, p.patternMatches(f)), patternsInOrder)
	return page(found, f.Limit, f.Offset)
}

// ListPatterns implements store.PatternStorage.
func (t *tx) ListPatterns(ctx context.Context, project string, f store.PatternFilter) ([]learning.Pattern, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.Pattern{}, err
	}
	return copies(p.listPatterns(f), clonePattern), nil
}

// CountPatterns implements store.PatternStorage.
func (t *tx) CountPatterns(ctx context.Context, project string, f store.PatternFilter) (int64, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return 0, err
	}
	return count(p.patterns, p.patternMatches(f)), nil
}

// FindPatternsByContent implements store.PatternStorage, in ListPatterns
// order.
func (t *tx) FindPatternsByContent(ctx context.Context, project, content string) ([]learning.Pattern, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.Pattern{}, err
	}
	found := selectIndexed(p.patternsByKey, learning.ContentKey(content), p.patterns, nil)
	return copies(sorted(found, patternsInOrder), clonePattern), nil
}

// PatternsWithMaturity implements store.PatternStorage.
func (t *tx) PatternsWithMaturity(ctx context.Context, project string, f store.PatternFilter) ([]store.PatternRecord, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []store.PatternRecord{}, err
	}
	pats := p.listPatterns(f)
	out := make([]store.PatternRecord, len(pats))
	for i, pat := range pats {
		m := learning.Maturity{Project: pat.Project, PatternID: pat.ID, Generation: pat.Generation}
		if stored, ok := p.maturity[pat.ID]; ok {
			m = cloneMaturity(*stored)
		}
		out[i] = store.PatternRecord{Pattern: clonePattern(*pat), Maturity: m, Version: p.patternVersion[pat.ID]}
	}
	return out, nil
}

// EachPattern implements store.PatternStorage, in ListPatterns order.
func (t *tx) EachPattern(ctx context.Context, project string, fn func(learning.Pattern) error) error {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return err
	}
	return each(ctx, sorted(selectAll(p.patterns, nil), patternsInOrder), clonePattern, fn)
}

// PatternVersion implements store.PatternStorage.
func (t *tx) PatternVersion(ctx context.Context, project string) (store.PatternVersion, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return store.PatternVersion{}, err
	}
	return store.PatternVersion{Version: p.version, ResetVersion: p.resetVersion}, nil
}
