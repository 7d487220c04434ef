package postgres

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// taskState is what recording an outcome reads about its task.
type taskState struct {
	Prev     []learning.Outcome
	Task     learning.Task
	TaskErr  error
	Errors   []learning.ErrorEntry
	Requests int // statements sent for the three reads
}

func readTaskState(ctx context.Context, t *testing.T, tx *sqlstore.Tx, project, task string) taskState {
	t.Helper()
	before := tx.Statements()
	var st taskState
	var err error
	if st.Prev, err = tx.ListOutcomes(ctx, project, store.OutcomeFilter{TaskID: task, Limit: 1}); err != nil {
		t.Fatal(err)
	}
	st.Task, st.TaskErr = tx.LockTask(ctx, project, task)
	if st.TaskErr != nil && !errors.Is(st.TaskErr, store.ErrNotFound) {
		t.Fatal(st.TaskErr)
	}
	st.TaskErr = errors.Unwrap(st.TaskErr) // the message names the statement's "what"
	if st.Errors, err = tx.ErrorsByTask(ctx, project, task, true); err != nil {
		t.Fatal(err)
	}
	st.Requests = tx.Statements() - before
	return st
}

// openStore opens a store on a test database of its own, closed when the
// test ends.
func openStore(t *testing.T) *Store {
	s, err := Open(context.Background(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A group's prefetched task reads (sqlstore/prefetch.go) answer exactly
// what the single reads answer, without a statement, and are dropped as
// soon as the transaction may have changed them: an outcome appended for
// the task (deferred), a write to the errors table, the task's update.
func TestPrefetchAnswersLikeTheReads(t *testing.T) {
	t.Parallel()
	s := openStore(t)
	ctx := context.Background()
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	outcome := func(id, task string, at time.Time) learning.Outcome {
		return learning.Outcome{ID: id, Project: "p", TaskID: task, Success: true, Timestamp: at, RecordedAt: at,
			FilesTouched: []string{}, Patterns: []string{}, Criteria: []string{"accuracy"}, Tags: []string{"x"},
			CriterionScores: map[string]learning.Score{"accuracy": {Raw: 0.5, Type: learning.Helpful}}}
	}
	if err := s.Update(ctx, func(tx store.Tx) error {
		for _, task := range []string{"t-tracked", "t-both"} {
			if _, err := tx.InsertTask(ctx, learning.Task{ID: task, Project: "p", Description: "d " + task,
				StartedAt: now, LastActivityAt: now, Prompts: 3, RetryCount: 1, UpdatedAt: now}); err != nil {
				return err
			}
			for i, msg := range []string{"b", "a"} {
				if _, err := tx.InsertError(ctx, learning.ErrorEntry{ID: task + msg, Project: "p", TaskID: task,
					Type: learning.ErrorType("tool"), Message: msg, Timestamp: now.Add(time.Duration(i) * time.Second),
					Resolved: i == 0, ResolvedAt: &now}); err != nil {
					return err
				}
			}
		}
		for i, task := range []string{"t-done", "t-both", "t-done"} { // t-done: two, the later one wins
			if _, err := tx.InsertOutcome(ctx, outcome("out-"+task+string(rune('0'+i)), task, now.Add(time.Duration(i)*time.Minute))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tasks := []string{"t-tracked", "t-both", "t-done", "t-none"}
	hints := make([]store.WriteHint, len(tasks))
	for i, task := range tasks {
		hints[i] = store.WriteHint{Project: "p", TaskID: task}
	}

	// the answers of the single reads, in a transaction without prefetch
	want := map[string]taskState{}
	plain, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ptx := sqlstore.NewTx(plain, groupDialect, nil)
	for _, task := range tasks {
		want[task] = readTaskState(ctx, t, ptx, "p", task)
	}
	if err := plain.Rollback(); err != nil {
		t.Fatal(err)
	}

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	wrapped := sqlstore.NewTx(tx, groupDialect, nil)
	if err := wrapped.Prefetch(ctx, hints); err != nil {
		t.Fatal(err)
	}
	// the key-class lock, one read per table, the project's criteria and
	// their shards (no pattern contents in the hints)
	if n := wrapped.Statements(); n != 6 {
		t.Errorf("prefetch sent %d statements, want 6", n)
	}
	for _, task := range tasks[:2] {
		got := readTaskState(ctx, t, wrapped, "p", task)
		if got.Requests != 0 {
			t.Errorf("%s: %d statements after prefetch, want 0", task, got.Requests)
		}
		w := want[task]
		w.Requests = 0
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: prefetched\n%+v\nwant\n%+v", task, got, w)
		}
	}
	if len(want["t-done"].Prev) != 1 || want["t-done"].Prev[0].ID != "out-t-done2" || len(want["t-tracked"].Errors) != 2 {
		t.Fatalf("setup: %+v", want)
	}

	// t-none: an outcome appended (deferred) before its read must be seen
	o := outcome("out-new", "t-none", now.Add(time.Hour))
	if err := wrapped.AppendOutcome(ctx, o); err != nil {
		t.Fatal(err)
	}
	list, err := wrapped.ListOutcomes(ctx, "p", store.OutcomeFilter{TaskID: "t-none", Limit: 1})
	if err != nil || len(list) != 1 || list[0].ID != "out-new" {
		t.Errorf("after AppendOutcome: %+v, %v; want out-new", list, err)
	}
	// t-done: a write to the errors table drops the prefetched errors
	if _, err := wrapped.InsertError(ctx, learning.ErrorEntry{ID: "t-done-e", Project: "p", TaskID: "t-done",
		Type: learning.ErrorType("tool"), Message: "late", Timestamp: now}); err != nil {
		t.Fatal(err)
	}
	got := readTaskState(ctx, t, wrapped, "p", "t-done")
	if len(got.Errors) != 1 || got.Errors[0].ID != "t-done-e" {
		t.Errorf("errors after InsertError: %+v", got.Errors)
	}
	// the read of t-none's outcome above named the outcomes table, which
	// dropped the other prefetched outcomes: t-done's is read again (the
	// same answer); its task row is still served from the prefetch
	if !reflect.DeepEqual(got.Prev, want["t-done"].Prev) || got.Requests != 2 {
		t.Errorf("t-done after InsertError: %+v (%d statements), want %+v in 2", got.Prev, got.Requests, want["t-done"].Prev)
	}
	// a second read of a task goes to SQL (answers are served once) and
	// sees the transaction's update of it
	task := want["t-tracked"].Task
	ended := now.Add(time.Hour)
	task.EndedAt = &ended
	if err := wrapped.UpdateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	again, err := wrapped.LockTask(ctx, "p", "t-tracked")
	if err != nil || again.EndedAt == nil || !again.EndedAt.Equal(ended) {
		t.Errorf("LockTask after UpdateTask: %+v, %v", again, err)
	}
	// a savepoint drops what is left
	if err := wrapped.Prefetch(ctx, hints); err != nil {
		t.Fatal(err)
	}
	if o, tk, e := wrapped.Prefetched(); o+tk+e == 0 {
		t.Fatal("nothing prefetched")
	}
	wrapped.Mark()
	if o, tk, e := wrapped.Prefetched(); o+tk+e != 0 {
		t.Errorf("after Mark: %d %d %d answers kept", o, tk, e)
	}
}
