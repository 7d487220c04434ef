package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func fullTask(project, id string) learning.Task {
	ended := at(40).In(zone)
	return learning.Task{
		ID: id, Project: project, Description: longText("добавить OAuth <b>", 2<<10), Source: "claude",
		StartedAt: at(10), LastActivityAt: at(30).In(zone), EndedAt: &ended,
		Prompts: bigInt, ToolCalls: 7, ToolFailures: 2, RetryCount: 1, FailedThisTurn: true, UpdatedAt: at(41),
		Exploration: fullExploration(),
		Signals: learning.TaskSignals{Strategies: []string{"file-based", "tdd"}, Files: []string{"a.go", "日本/ファイル.go"},
			Last: learning.SignalTestPass, EndReason: "prompt_input_exit", Compactions: 2},
	}
}

func taskID(t learning.Task) string { return t.ID }

func testTask(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullTask("p", "session-1")
		requireAllSet(t, full)
		zero := learning.Task{ID: "t-zero", Project: "p"}
		uni := fullTask(uniProject, "сессия-🚀")
		for _, task := range []learning.Task{full, zero, uni} {
			if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertTask(b.ctx, task) }); !ok {
				t.Fatalf("InsertTask %s reported false", task.ID)
			}
			got := read(b, func(tx store.Tx) (learning.Task, error) { return tx.GetTask(b.ctx, task.Project, task.ID) })
			requireEqual(t, "GetTask "+task.ID, task, got)
		}
		requireSet(t, "ListTasks p", []learning.Task{full, zero}, read(b, func(tx store.Tx) ([]learning.Task, error) {
			return tx.ListTasks(b.ctx, "p", store.TaskFilter{})
		}), taskID)
	})

	t.Run("InsertIdempotentAndUpdate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullTask("p", "s-1")
		b.update(func(tx store.Tx) error { _, err := tx.InsertTask(b.ctx, first); return err })
		second := fullTask("p", "s-1")
		second.Description = "other"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertTask(b.ctx, second) }); ok {
			t.Error("second InsertTask of the same id reported true")
		}
		if ok := write(b, func(tx store.Tx) (bool, error) {
			other := second
			other.Project = "q"
			return tx.InsertTask(b.ctx, other)
		}); !ok {
			t.Error("the same id in another project must be a new task")
		}
		requireEqual(t, "task after a duplicate insert", first,
			read(b, func(tx store.Tx) (learning.Task, error) { return tx.GetTask(b.ctx, "p", "s-1") }))
		updated := first
		updated.Prompts, updated.EndedAt, updated.Description = 3, nil, "changed"
		b.update(func(tx store.Tx) error { return tx.UpdateTask(b.ctx, updated) })
		requireEqual(t, "task after UpdateTask", updated,
			read(b, func(tx store.Tx) (learning.Task, error) { return tx.GetTask(b.ctx, "p", "s-1") }))
		_, err := get(b, func(tx store.Tx) (learning.Task, error) { return tx.GetTask(b.ctx, "p", "nope") })
		requireNotFound(t, "GetTask", err)
		err = b.s.Update(b.ctx, func(tx store.Tx) error { _, err := tx.LockTask(b.ctx, "p", "nope"); return err })
		requireNotFound(t, "LockTask", err)
		err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdateTask(b.ctx, fullTask("p", "nope")) })
		requireNotFound(t, "UpdateTask", err)
	})

	t.Run("ListOrderFilterAndCount", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id string, active int, open bool) learning.Task {
			task := fullTask("p", id)
			task.LastActivityAt = at(active)
			if open {
				task.EndedAt = nil
			}
			return task
		}
		tasks := []learning.Task{mk("t-b", 5, true), mk("t-a", 5, false), mk("t-c", 9, true), mk("t-d", 1, true)}
		b.update(func(tx store.Tx) error {
			for _, task := range tasks {
				if _, err := tx.InsertTask(b.ctx, task); err != nil {
					return err
				}
			}
			return nil
		})
		list := func(f store.TaskFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]learning.Task, error) { return tx.ListTasks(b.ctx, "p", f) }), taskID)
		}
		count := func(f store.TaskFilter) int64 {
			return read(b, func(tx store.Tx) (int64, error) { return tx.CountTasks(b.ctx, "p", f) })
		}
		requireEqual(t, "ListTasks order (most recent activity first, id descending)", []string{"t-c", "t-b", "t-a", "t-d"}, list(store.TaskFilter{}))
		requireEqual(t, "ListTasks open only", []string{"t-c", "t-b", "t-d"}, list(store.TaskFilter{OpenOnly: true}))
		requireEqual(t, "ListTasks paged", []string{"t-b", "t-a"}, list(store.TaskFilter{Limit: 2, Offset: 1}))
		requireEqual(t, "ListTasks open and idle before 6", []string{"t-b", "t-d"}, list(store.TaskFilter{OpenOnly: true, IdleBefore: at(6)}))
		if n := count(store.TaskFilter{OpenOnly: true, IdleBefore: at(6)}); n != 2 {
			t.Errorf("CountTasks idle: %d, want 2", n)
		}
		if count(store.TaskFilter{}) != 4 || count(store.TaskFilter{OpenOnly: true, Limit: 1}) != 3 {
			t.Errorf("CountTasks disagrees with ListTasks")
		}
		if n := read(b, func(tx store.Tx) (int64, error) { return tx.CountTasks(b.ctx, "q", store.TaskFilter{}) }); n != 0 {
			t.Errorf("project q sees %d tasks", n)
		}
	})

	t.Run("LockSerialises", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			_, err := tx.InsertTask(b.ctx, learning.Task{ID: "s", Project: "p"})
			return err
		})
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				task, err := tx.LockTask(b.ctx, "p", "s")
				if err != nil {
					return err
				}
				task.ToolCalls++
				return tx.UpdateTask(b.ctx, task)
			})
		})
		requireNoErrors(t, "Update", errs)
		got := read(b, func(tx store.Tx) (learning.Task, error) { return tx.GetTask(b.ctx, "p", "s") })
		if got.ToolCalls != workers {
			t.Errorf("after %d concurrent lock-increment-update transactions ToolCalls = %d (lost updates)", workers, got.ToolCalls)
		}
	})
}
