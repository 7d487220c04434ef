package memory

import (
	"context"
	"slices"

	"github.com/kaizenhq/kaizen/store"
)

func cloneExplore(x store.ExploreSession) store.ExploreSession {
	x.State = slices.Clone(x.State)
	return x
}

// InsertExploreSession implements store.ExploreStorage.
func (t *tx) InsertExploreSession(ctx context.Context, x store.ExploreSession) (bool, error) {
	p, err := t.write(ctx, x.Project)
	if err != nil {
		return false, err
	}
	if _, ok := p.explore[x.ID]; ok {
		return false, nil
	}
	put(t.undo, p.explore, x.ID, stored(x, cloneExplore))
	return true, nil
}

// GetExploreSession implements store.ExploreStorage.
func (t *tx) GetExploreSession(ctx context.Context, project, id string) (store.ExploreSession, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return store.ExploreSession{}, err
	}
	if p != nil {
		if x, ok := p.explore[id]; ok {
			return cloneExplore(*x), nil
		}
	}
	return store.ExploreSession{}, notFound("exploration session", project, id)
}

// LockExploreSession implements store.ExploreStorage; Update is exclusive.
func (t *tx) LockExploreSession(ctx context.Context, project, id string) (store.ExploreSession, error) {
	if err := t.writable(ctx); err != nil {
		return store.ExploreSession{}, err
	}
	return t.GetExploreSession(ctx, project, id)
}

// UpdateExploreSession implements store.ExploreStorage.
func (t *tx) UpdateExploreSession(ctx context.Context, x store.ExploreSession) error {
	if err := t.writable(ctx); err != nil {
		return err
	}
	p := t.s.projects[x.Project]
	if p == nil || p.explore[x.ID] == nil {
		return notFound("exploration session", x.Project, x.ID)
	}
	put(t.undo, p.explore, x.ID, stored(x, cloneExplore))
	return nil
}

func exploreMatches(f store.ExploreFilter) func(*store.ExploreSession) bool {
	return func(x *store.ExploreSession) bool { return !f.ActiveOnly || !x.Done }
}

// ListExploreSessions implements store.ExploreStorage.
func (t *tx) ListExploreSessions(ctx context.Context, project string, f store.ExploreFilter) ([]store.ExploreSession, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []store.ExploreSession{}, err
	}
	found := sorted(selectAll(p.explore, exploreMatches(f)), func(a, b *store.ExploreSession) int {
		return newestFirst(a.UpdatedAt, a.ID, b.UpdatedAt, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneExplore), nil
}

// CountExploreSessions implements store.ExploreStorage.
func (t *tx) CountExploreSessions(ctx context.Context, project string, f store.ExploreFilter) (int64, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return 0, err
	}
	return count(p.explore, exploreMatches(f)), nil
}
