package storetest

import (
	"encoding/json"
	"testing"

	"github.com/kaizenhq/kaizen/store"
)

func fullExplore(project, id string) store.ExploreSession {
	return store.ExploreSession{Project: project, ID: id, Strategy: "analyst",
		State: json.RawMessage(`{"tracker":{"phase":"EXPLORE","files":["日本/ファイル.go"]},"timeline":{"rounds":[]}}`),
		Done:  true, Exit: "final_answer", CreatedAt: at(3).In(zone), UpdatedAt: at(4)}
}

func exploreID(x store.ExploreSession) string { return x.ID }

func testExplore(t *testing.T, setup setupFunc) {
	t.Run("RoundTripUpdateAndNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullExplore("p", "sess-1")
		requireAllSet(t, full)
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertExploreSession(b.ctx, full) }); !ok {
			t.Fatal("InsertExploreSession reported false")
		}
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertExploreSession(b.ctx, fullExplore("p", "sess-1")) }); ok {
			t.Error("a second insert of the same session reported true")
		}
		got := read(b, func(tx store.Tx) (store.ExploreSession, error) { return tx.GetExploreSession(b.ctx, "p", "sess-1") })
		requireEqual(t, "GetExploreSession", full, got)
		if string(got.State) != string(full.State) {
			t.Errorf("state bytes changed: %s", got.State)
		}
		next := full
		next.Done, next.Exit, next.State = false, "", json.RawMessage(`{"tracker":{"phase":"PRODUCE"}}`)
		b.update(func(tx store.Tx) error {
			if _, err := tx.LockExploreSession(b.ctx, "p", "sess-1"); err != nil {
				return err
			}
			return tx.UpdateExploreSession(b.ctx, next)
		})
		requireEqual(t, "after UpdateExploreSession", next,
			read(b, func(tx store.Tx) (store.ExploreSession, error) { return tx.GetExploreSession(b.ctx, "p", "sess-1") }))
		_, err := get(b, func(tx store.Tx) (store.ExploreSession, error) { return tx.GetExploreSession(b.ctx, "q", "sess-1") })
		requireNotFound(t, "GetExploreSession in another project", err)
		err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdateExploreSession(b.ctx, fullExplore("p", "nope")) })
		requireNotFound(t, "UpdateExploreSession", err)
		err = b.s.Update(b.ctx, func(tx store.Tx) error { _, err := tx.LockExploreSession(b.ctx, "p", "nope"); return err })
		requireNotFound(t, "LockExploreSession", err)
	})

	t.Run("ProjectsListTasksAndSessions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			if _, err := tx.InsertExploreSession(b.ctx, fullExplore("only-session", "s-1")); err != nil {
				return err
			}
			_, err := tx.InsertTask(b.ctx, fullTask("only-task", "t-1"))
			return err
		})
		requireEqual(t, "Projects", []string{"only-session", "only-task"},
			read(b, func(tx store.Tx) ([]string, error) { return tx.Projects(b.ctx) }))
	})

	t.Run("ListOrderFilterAndCount", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id string, updated int, done bool) store.ExploreSession {
			x := fullExplore("p", id)
			x.UpdatedAt, x.Done = at(updated), done
			return x
		}
		all := []store.ExploreSession{mk("s-b", 5, false), mk("s-a", 5, true), mk("s-c", 9, false)}
		b.update(func(tx store.Tx) error {
			for _, x := range all {
				if _, err := tx.InsertExploreSession(b.ctx, x); err != nil {
					return err
				}
			}
			return nil
		})
		list := func(f store.ExploreFilter) []string {
			return keys(read(b, func(tx store.Tx) ([]store.ExploreSession, error) { return tx.ListExploreSessions(b.ctx, "p", f) }), exploreID)
		}
		requireEqual(t, "order", []string{"s-c", "s-b", "s-a"}, list(store.ExploreFilter{}))
		requireEqual(t, "active only", []string{"s-c", "s-b"}, list(store.ExploreFilter{ActiveOnly: true}))
		requireEqual(t, "paged", []string{"s-b"}, list(store.ExploreFilter{Limit: 1, Offset: 1}))
		if n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountExploreSessions(b.ctx, "p", store.ExploreFilter{ActiveOnly: true, Limit: 1})
		}); n != 2 {
			t.Errorf("CountExploreSessions = %d, want 2", n)
		}
	})
}
