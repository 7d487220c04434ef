package memory

import (
	"context"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func cloneTask(t learning.Task) learning.Task {
	if t.EndedAt != nil {
		e := *t.EndedAt
		t.EndedAt = &e
	}
	if t.Exploration != nil {
		x := *t.Exploration
		t.Exploration = &x
	}
	return t
}

// InsertTask implements store.TaskStorage.
func (t *tx) InsertTask(ctx context.Context, task learning.Task) (bool, error) {
	p, err := t.write(ctx, task.Project)
	if err != nil {
		return false, err
	}
	if _, ok := p.tasks[task.ID]; ok {
		return false, nil
	}
	put(t.undo, p.tasks, task.ID, stored(task, cloneTask))
	return true, nil
}

// GetTask implements store.TaskStorage.
func (t *tx) GetTask(ctx context.Context, project, id string) (learning.Task, error) {
	p, err := t.read(ctx, project)
	if err != nil {
		return learning.Task{}, err
	}
	if p != nil {
		if task, ok := p.tasks[id]; ok {
			return cloneTask(*task), nil
		}
	}
	return learning.Task{}, notFound("task", project, id)
}

// LockTask implements store.TaskStorage; Update is exclusive already.
func (t *tx) LockTask(ctx context.Context, project, id string) (learning.Task, error) {
	if err := t.writable(ctx); err != nil {
		return learning.Task{}, err
	}
	return t.GetTask(ctx, project, id)
}

// UpdateTask implements store.TaskStorage.
func (t *tx) UpdateTask(ctx context.Context, task learning.Task) error {
	if err := t.writable(ctx); err != nil {
		return err
	}
	p := t.s.projects[task.Project]
	if p == nil || p.tasks[task.ID] == nil {
		return notFound("task", task.Project, task.ID)
	}
	put(t.undo, p.tasks, task.ID, stored(task, cloneTask))
	return nil
}

func taskMatches(f store.TaskFilter) func(*learning.Task) bool {
	return func(t *learning.Task) bool { return !f.OpenOnly || t.EndedAt == nil }
}

// ListTasks implements store.TaskStorage: most recently active first.
func (t *tx) ListTasks(ctx context.Context, project string, f store.TaskFilter) ([]learning.Task, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return []learning.Task{}, err
	}
	found := sorted(selectAll(p.tasks, taskMatches(f)), func(a, b *learning.Task) int {
		return newestFirst(a.LastActivityAt, a.ID, b.LastActivityAt, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneTask), nil
}

// CountTasks implements store.TaskStorage.
func (t *tx) CountTasks(ctx context.Context, project string, f store.TaskFilter) (int64, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return 0, err
	}
	return count(p.tasks, taskMatches(f)), nil
}
