package storetest

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func errorID(e learning.ErrorEntry) string { return e.ID }

func testError(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullError("p", "e-full")
		requireAllSet(t, full)
		unresolved := fullError("p", "e-open")
		unresolved.Resolved, unresolved.ResolvedAt = false, nil
		cases := []learning.ErrorEntry{full, unresolved, unicodeError("ид-🚀-1"), {ID: "e-zero", Project: "p"}}
		b.seed(toAny(cases)...)
		for _, e := range cases {
			got := read(b, func(tx store.Tx) (learning.ErrorEntry, error) { return tx.GetError(b.ctx, e.Project, e.ID) })
			requireEqual(t, "GetError "+e.ID, e, got)
			byTask := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) {
				return tx.ErrorsByTask(b.ctx, e.Project, e.TaskID, true)
			})
			requireList(t, "ErrorsByTask "+e.ID, []learning.ErrorEntry{e}, byTask)
		}
		for _, project := range []string{"p", uniProject} {
			var want []learning.ErrorEntry
			for _, e := range cases {
				if e.Project == project {
					want = append(want, e)
				}
			}
			got := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) {
				return tx.ListErrors(b.ctx, project, store.ErrorFilter{})
			})
			requireSet(t, "ListErrors "+project, want, got, errorID)
			requireSet(t, "EachError "+project, want, eachError(b, project), errorID)
		}
	})

	t.Run("InsertIdempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullError("p", "e-1")
		b.seed(first)
		second := unicodeError("e-1")
		second.Project = "p"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertError(b.ctx, second) }); ok {
			t.Error("second InsertError of the same id reported true, want false")
		}
		requireList(t, "errors after a duplicate insert", []learning.ErrorEntry{first}, eachError(b, "p"))
		other := second
		other.Project = "q"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertError(b.ctx, other) }); !ok {
			t.Error("InsertError of an id taken in another project reported false, want true")
		}
		requireList(t, "errors of project q", []learning.ErrorEntry{other}, eachError(b, "q"))
		requireList(t, "errors of project p", []learning.ErrorEntry{first}, eachError(b, "p"))
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		open := fullError("p", "e-1")
		open.Resolved, open.ResolvedAt = false, nil
		b.seed(open)
		for _, k := range []struct{ project, id, why string }{
			{"p", "e-2", "a missing id"},
			{"q", "e-1", "an id of another project"},
		} {
			_, err := get(b, func(tx store.Tx) (learning.ErrorEntry, error) { return tx.GetError(b.ctx, k.project, k.id) })
			requireNotFound(t, "GetError of "+k.why, err)
			err = b.s.Update(b.ctx, func(tx store.Tx) error {
				_, err := tx.ResolveError(b.ctx, k.project, k.id, at(9))
				return err
			})
			requireNotFound(t, "ResolveError of "+k.why, err)
		}
		requireList(t, "errors after failed resolves", []learning.ErrorEntry{open}, eachError(b, "p"))
	})

	t.Run("Resolve", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		open := fullError("p", "e-1")
		open.TaskID, open.Resolved, open.ResolvedAt = "t1", false, nil
		other := open
		other.ID = "e-2"
		b.seed(open, other)

		want := open
		want.Resolved, want.ResolvedAt = true, ptr(at(5).In(zone))
		got := write(b, func(tx store.Tx) (learning.ErrorEntry, error) {
			return tx.ResolveError(b.ctx, "p", "e-1", at(5).In(zone))
		})
		requireEqual(t, "ResolveError result", want, got)
		stored := read(b, func(tx store.Tx) (learning.ErrorEntry, error) { return tx.GetError(b.ctx, "p", "e-1") })
		requireEqual(t, "resolved error", want, stored)

		again := write(b, func(tx store.Tx) (learning.ErrorEntry, error) {
			return tx.ResolveError(b.ctx, "p", "e-1", at(9))
		})
		requireEqual(t, "second ResolveError result (keeps the first ResolvedAt)", want, again)
		stored = read(b, func(tx store.Tx) (learning.ErrorEntry, error) { return tx.GetError(b.ctx, "p", "e-1") })
		requireEqual(t, "error resolved twice", want, stored)

		open2 := read(b, func(tx store.Tx) (learning.ErrorEntry, error) { return tx.GetError(b.ctx, "p", "e-2") })
		requireEqual(t, "error not resolved", other, open2)
		byTask := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ErrorsByTask(b.ctx, "p", "t1", false) })
		requireEqual(t, "ErrorsByTask without resolved", []string{"e-2"}, keys(byTask, errorID))
		byTask = read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ErrorsByTask(b.ctx, "p", "t1", true) })
		requireEqual(t, "ErrorsByTask with resolved", []string{"e-1", "e-2"}, keys(byTask, errorID))
		unresolved := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) {
			return tx.ListErrors(b.ctx, "p", store.ErrorFilter{UnresolvedOnly: true})
		})
		requireEqual(t, "ListErrors UnresolvedOnly", []string{"e-2"}, keys(unresolved, errorID))
	})

	t.Run("ByTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Oldest first by Timestamp, ties by id ascending; only the task;
		// resolved ones only when asked for.
		mk := func(id, task string, ts int, resolved bool) learning.ErrorEntry {
			e := fullError("p", id)
			e.TaskID, e.Timestamp, e.Resolved, e.ResolvedAt = task, at(ts), resolved, nil
			if resolved {
				e.ResolvedAt = ptr(at(ts + 100))
			}
			return e
		}
		b.seed(mk("e-c", "t1", 10, false), mk("e-a", "t1", 10, true), mk("e-d", "t1", 5, false),
			mk("e-b", "t1", 20, true), mk("e-e", "t10", 1, false), mk("e-f", "T1", 2, false))
		got := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ErrorsByTask(b.ctx, "p", "t1", true) })
		requireEqual(t, "ErrorsByTask with resolved", []string{"e-d", "e-a", "e-c", "e-b"}, keys(got, errorID))
		got = read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ErrorsByTask(b.ctx, "p", "t1", false) })
		requireEqual(t, "ErrorsByTask without resolved", []string{"e-d", "e-c"}, keys(got, errorID))
		got = read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ErrorsByTask(b.ctx, "p", "t2", true) })
		requireList(t, "ErrorsByTask of a task without errors", nil, keys(got, errorID))
	})

	t.Run("ListOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Newest first by Timestamp, ties by id descending.
		mk := func(id string, ts int) learning.ErrorEntry {
			e := fullError("p", id)
			e.Timestamp, e.ResolvedAt = at(ts), ptr(at(100-ts))
			return e
		}
		b.seed(mk("e-b", 10), mk("e-d", 5), mk("e-a", 10), mk("e-c", 20), mk("e-e", 10))
		got := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) {
			return tx.ListErrors(b.ctx, "p", store.ErrorFilter{})
		})
		requireEqual(t, "ListErrors order", []string{"e-c", "e-e", "e-b", "e-a", "e-d"}, keys(got, errorID))
	})

	t.Run("Filter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(i int, task string, typ learning.ErrorType, message, tool, context string, resolved bool) learning.ErrorEntry {
			e := learning.ErrorEntry{ID: "e-" + string(rune('0'+i)), Project: "p", TaskID: task, Type: typ,
				Message: message, StackTrace: "frame.go:1", ToolName: tool, Context: context,
				Timestamp: at(i), Resolved: resolved}
			if resolved {
				e.ResolvedAt = ptr(at(i + 10))
			}
			return e
		}
		b.seed(
			mk(0, "t1", learning.ErrValidation, "Schema mismatch in config", "", "", false),
			mk(1, "t2", learning.ErrTimeout, "Deadline exceeded", "", "", true),
			mk(2, "t1", learning.ErrToolFailure, "exit status 1", "go test", "", false),
			mk(3, "t1", learning.ErrValidation, "50% of fields invalid", "", "", true),
			mk(4, "t2", learning.ErrConflict, "merge conflict", "", "while rebasing feature_x", false),
			mk(5, "t1", learning.ErrUnknown, "Ошибка: ДИСК полон", "", "", false),
		)
		for _, tc := range []struct {
			name  string
			f     store.ErrorFilter
			want  []string
			count int64
		}{
			{"none", store.ErrorFilter{}, []string{"e-5", "e-4", "e-3", "e-2", "e-1", "e-0"}, 6},
			{"task", store.ErrorFilter{TaskID: "t1"}, []string{"e-5", "e-3", "e-2", "e-0"}, 4},
			{"unknown task", store.ErrorFilter{TaskID: "t"}, nil, 0},
			{"unresolved", store.ErrorFilter{UnresolvedOnly: true}, []string{"e-5", "e-4", "e-2", "e-0"}, 4},
			{"type", store.ErrorFilter{Type: learning.ErrValidation}, []string{"e-3", "e-0"}, 2},
			{"task, unresolved and type", store.ErrorFilter{TaskID: "t1", UnresolvedOnly: true, Type: learning.ErrValidation},
				[]string{"e-0"}, 1},
			{"search message ignores case", store.ErrorFilter{Search: "SCHEMA MISMATCH"}, []string{"e-0"}, 1},
			{"search unicode ignores case", store.ErrorFilter{Search: "диск"}, []string{"e-5"}, 1},
			{"search % is literal", store.ErrorFilter{Search: "%"}, []string{"e-3"}, 1},
			{"search _ is literal", store.ErrorFilter{Search: "_"}, []string{"e-4"}, 1},
			{"search context", store.ErrorFilter{Search: "Rebasing"}, []string{"e-4"}, 1},
			{"search tool name", store.ErrorFilter{Search: "GO TEST"}, []string{"e-2"}, 1},
			{"search nothing", store.ErrorFilter{Search: "segfault"}, nil, 0},
			{"search and unresolved", store.ErrorFilter{Search: "e", UnresolvedOnly: true, TaskID: "t2"}, []string{"e-4"}, 1},
			{"limit", store.ErrorFilter{Limit: 2}, []string{"e-5", "e-4"}, 6},
			{"limit and offset", store.ErrorFilter{Limit: 2, Offset: 2}, []string{"e-3", "e-2"}, 6},
			{"offset without limit", store.ErrorFilter{Offset: 4}, []string{"e-1", "e-0"}, 6},
			{"offset past the end", store.ErrorFilter{Offset: 6}, nil, 6},
			{"unresolved and paging", store.ErrorFilter{UnresolvedOnly: true, Limit: 1, Offset: 1}, []string{"e-4"}, 4},
		} {
			got := read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ListErrors(b.ctx, "p", tc.f) })
			requireList(t, "ListErrors "+tc.name, tc.want, keys(got, errorID))
			n := read(b, func(tx store.Tx) (int64, error) { return tx.CountErrors(b.ctx, "p", tc.f) })
			if n != tc.count {
				t.Errorf("CountErrors %s = %d, want %d (Count ignores Limit and Offset)", tc.name, n, tc.count)
			}
		}
	})

	t.Run("EachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullError("p", "e-1"), fullError("p", "e-2"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachError(b.ctx, "p", func(learning.ErrorEntry) error { calls++; return errStop })
		})
		requireStopped(t, "EachError", err, calls)
	})
}

func eachError(b *bundle, project string) []learning.ErrorEntry {
	b.t.Helper()
	return read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) {
		var out []learning.ErrorEntry
		err := tx.EachError(b.ctx, project, func(e learning.ErrorEntry) error { out = append(out, e); return nil })
		return out, err
	})
}
