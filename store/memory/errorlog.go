package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// InsertError implements store.ErrorStorage.
func (t *tx) InsertError(ctx context.Context, e learning.ErrorEntry) (bool, error) {
	p, err := t.write(ctx, e.Project)
	if err != nil {
		return false, err
	}
	if _, ok := p.errors[e.ID]; ok {
		return false, nil
	}
	put(t.undo, p.errors, e.ID, stored(e, cloneError))
	p.errorsByTask.add(t.undo, e.TaskID, e.ID)
	return true, nil
}

// GetError implements store.ErrorStorage.
func (t *tx) GetError(ctx context.Context, project, id string) (learning.ErrorEntry, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return learning.ErrorEntry{}, err
	}
	if p != nil {
		if e, ok := p.errors[id]; ok {
			return cloneError(*e), nil
		}
	}
	return learning.ErrorEntry{}, notFound("error", project, id)
}

func errorsOldestFirst(a, b *learning.ErrorEntry) int {
	return oldestFirst(a.Timestamp, a.ID, b.Timestamp, b.ID)
}

// ErrorsByTask implements store.ErrorStorage.
func (t *tx) ErrorsByTask(ctx context.Context, project, taskID string, includeResolved bool) ([]learning.ErrorEntry, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.ErrorEntry{}, err
	}
	found := selectIndexed(p.errorsByTask, taskID, p.errors,
		func(e *learning.ErrorEntry) bool { return includeResolved || !e.Resolved })
	return copies(sorted(found, errorsOldestFirst), cloneError), nil
}

// ResolveError implements store.ErrorStorage.
func (t *tx) ResolveError(ctx context.Context, project, id string, at time.Time) (learning.ErrorEntry, error) {
	if err := t.writable(ctx); err != nil {
		return learning.ErrorEntry{}, err
	}
	p := t.s.projects[project]
	if p == nil || p.errors[id] == nil {
		return learning.ErrorEntry{}, notFound("error", project, id)
	}
	e := p.errors[id]
	if !e.Resolved {
		resolved := *e
		resolved.Resolved, resolved.ResolvedAt = true, &at
		e = stored(resolved, cloneError)
		put(t.undo, p.errors, id, e)
	}
	return cloneError(*e), nil
}

// errorText is what ErrorFilter.Search looks in: the message, the context,
// the tool name and the task id (not the stack trace), as store/sqlstore.
func errorText(e *learning.ErrorEntry) string {
	return strings.Join([]string{e.Message, e.Context, e.ToolName, e.TaskID}, "\n")
}

func errorMatches(f store.ErrorFilter) func(*learning.ErrorEntry) bool {
	return func(e *learning.ErrorEntry) bool {
		return (f.TaskID == "" || e.TaskID == f.TaskID) &&
			(!f.UnresolvedOnly || !e.Resolved) &&
			(f.Type == "" || e.Type == f.Type) &&
			(f.Search == "" || containsFold(errorText(e), f.Search))
	}
}

// ListErrors implements store.ErrorStorage: newest first (Timestamp, then
// id, both descending).
func (t *tx) ListErrors(ctx context.Context, project string, f store.ErrorFilter) ([]learning.ErrorEntry, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.ErrorEntry{}, err
	}
	found := sorted(selectAll(p.errors, errorMatches(f)), func(a, b *learning.ErrorEntry) int {
		return newestFirst(a.Timestamp, a.ID, b.Timestamp, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneError), nil
}

// CountErrors implements store.ErrorStorage.
func (t *tx) CountErrors(ctx context.Context, project string, f store.ErrorFilter) (int64, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return 0, err
	}
	return count(p.errors, errorMatches(f)), nil
}

// EachError implements store.ErrorStorage, oldest first.
func (t *tx) EachError(ctx context.Context, project string, fn func(learning.ErrorEntry) error) error {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return err
	}
	return each(ctx, sorted(selectAll(p.errors, nil), errorsOldestFirst), cloneError, fn)
}

// GetMeta implements store.MetaStorage.
func (t *tx) GetMeta(ctx context.Context, key string) (string, error) {
	if err := t.alive(ctx); err != nil {
		return "", err
	}
	v, ok := t.s.meta[key]
	if !ok {
		return "", fmt.Errorf("setting %q: %w", key, store.ErrNotFound)
	}
	return v, nil
}

// SetMeta implements store.MetaStorage.
func (t *tx) SetMeta(ctx context.Context, key, value string) error {
	if err := t.writable(ctx); err != nil {
		return err
	}
	put(t.undo, t.s.meta, key, value)
	return nil
}

// Projects implements store.MetaStorage: the projects holding an outcome,
// pattern, criterion, error, task, exploration session or experience data,
// in bytewise order.
func (t *tx) Projects(ctx context.Context) ([]string, error) {
	if err := t.alive(ctx); err != nil {
		return nil, err
	}
	out := []string{}
	for name, p := range t.s.projects {
		if p.listed() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}
