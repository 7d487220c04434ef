package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

func teamRecord(project, name string) store.TeamRecord {
	return store.TeamRecord{Project: project, Name: name, Doc: json.RawMessage(`{"members":[{"name":"ann","role":"executor"}]}`),
		CreatedAt: at(1), UpdatedAt: at(2)}
}

func fullTeamTask(name, id string) team.Task {
	return team.Task{ID: id, Team: name, Subject: "implement 日本 ✓", Description: longText("desc", 300), Owner: "ann",
		Role: team.RoleExecutor, Capabilities: []string{"go", "sql"}, BlockedBy: []string{"dep-a", "dep-b"},
		Status: team.StatusInProgress, Paused: true, BlockedCause: "cause", Metadata: json.RawMessage(`{"k":1}`),
		Result: json.RawMessage(`{"ok":true}`), Gate: "go test ./...", Attempts: 2,
		Lease: team.Lease{Holder: "ann", Epoch: 3, ExpiresAt: at(30), HeartbeatAt: at(20),
			Progress: &team.Progress{Percent: 40, Phase: "build", Note: "n"}},
		RunID: "run-1", RunKey: "impl-001", CreatedAt: at(3), UpdatedAt: at(4)}
}

func pendingTask(name, id string, deps ...string) team.Task {
	return team.Task{ID: id, Team: name, Subject: "task " + id, Status: team.StatusPending, BlockedBy: deps,
		CreatedAt: at(1), UpdatedAt: at(1)}
}

func testTeam(t *testing.T, setup setupFunc) {
	t.Run("TeamRoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := teamRecord("p", "alpha")
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeam(b.ctx, r) }) {
			t.Fatal("InsertTeam reported false")
		}
		if write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeam(b.ctx, r) }) {
			t.Error("a second InsertTeam reported true")
		}
		got := read(b, func(tx store.Tx) (store.TeamRecord, error) { return tx.GetTeam(b.ctx, "p", "alpha") })
		requireEqual(t, "GetTeam", r, got)
		r.Dissolved, r.UpdatedAt, r.Doc = true, at(9), json.RawMessage(`{"members":[]}`)
		b.update(func(tx store.Tx) error { return tx.UpdateTeam(b.ctx, r) })
		requireEqual(t, "after UpdateTeam", r, read(b, func(tx store.Tx) (store.TeamRecord, error) { return tx.GetTeam(b.ctx, "p", "alpha") }))
		b.update(func(tx store.Tx) error { _, err := tx.InsertTeam(b.ctx, teamRecord("p", "beta")); return err })
		names := func(all bool) []string {
			rs := read(b, func(tx store.Tx) ([]store.TeamRecord, error) { return tx.ListTeams(b.ctx, "p", all) })
			return keys(rs, func(r store.TeamRecord) string { return r.Name })
		}
		requireList(t, "ListTeams active", []string{"beta"}, names(false))
		requireList(t, "ListTeams all", []string{"alpha", "beta"}, names(true))
		_, err := get(b, func(tx store.Tx) (store.TeamRecord, error) { return tx.GetTeam(b.ctx, "q", "alpha") })
		requireNotFound(t, "GetTeam in another project", err)
	})

	t.Run("TaskRoundTripAndFencedUpdate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error { _, err := tx.InsertTeam(b.ctx, teamRecord("p", "alpha")); return err })
		full := fullTeamTask("alpha", "t-1")
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeamTask(b.ctx, "p", full) }) {
			t.Fatal("InsertTeamTask reported false")
		}
		if write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeamTask(b.ctx, "p", full) }) {
			t.Error("a second InsertTeamTask reported true")
		}
		got := read(b, func(tx store.Tx) (team.Task, error) { return tx.GetTeamTask(b.ctx, "p", "alpha", "t-1") })
		requireEqual(t, "GetTeamTask", full, got)
		next := full
		next.Status, next.Lease, next.Paused, next.Result = team.StatusCompleted, team.Lease{Epoch: 3}, false, nil
		// A write carrying an old epoch is stale and writes nothing.
		err := b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdateTeamTask(b.ctx, "p", next, team.StatusInProgress, 2) })
		if !errors.Is(err, store.ErrStale) {
			t.Fatalf("UpdateTeamTask with a stale epoch: %v, want ErrStale", err)
		}
		err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdateTeamTask(b.ctx, "p", next, team.StatusPending, 3) })
		if !errors.Is(err, store.ErrStale) {
			t.Fatalf("UpdateTeamTask with a stale status: %v, want ErrStale", err)
		}
		b.update(func(tx store.Tx) error { return tx.UpdateTeamTask(b.ctx, "p", next, team.StatusInProgress, 3) })
		requireEqual(t, "after UpdateTeamTask", next,
			read(b, func(tx store.Tx) (team.Task, error) { return tx.GetTeamTask(b.ctx, "p", "alpha", "t-1") }))
		err = b.s.Update(b.ctx, func(tx store.Tx) error {
			return tx.UpdateTeamTask(b.ctx, "p", fullTeamTask("alpha", "nope"), team.StatusInProgress, 3)
		})
		requireNotFound(t, "UpdateTeamTask of a missing task", err)
	})

	t.Run("ClaimableRespectsDependenciesOwnerRoleAndPause", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			if _, err := tx.InsertTeam(b.ctx, teamRecord("p", "alpha")); err != nil {
				return err
			}
			owned := pendingTask("alpha", "owned")
			owned.Owner = "bob"
			tester := pendingTask("alpha", "tester")
			tester.Role = team.RoleTester
			paused := pendingTask("alpha", "paused")
			paused.Paused = true
			for _, x := range []team.Task{pendingTask("alpha", "a"), pendingTask("alpha", "b", "a"), pendingTask("alpha", "c", "a", "missing"),
				owned, tester, paused, pendingTask("alpha", "d")} {
				if _, err := tx.InsertTeamTask(b.ctx, "p", x); err != nil {
					return err
				}
			}
			return nil
		})
		ids := func(member string, role team.Role) []string {
			xs := write(b, func(tx store.Tx) ([]team.Task, error) {
				return tx.ClaimableTeamTasks(b.ctx, "p", "alpha", member, role, 10)
			})
			return keys(xs, func(x team.Task) string { return x.ID })
		}
		requireList(t, "claimable by ann/executor", []string{"a", "d"}, ids("ann", team.RoleExecutor))
		requireList(t, "claimable by bob/tester", []string{"a", "owned", "tester", "d"}, ids("bob", team.RoleTester))
		b.update(func(tx store.Tx) error {
			a, err := tx.GetTeamTask(b.ctx, "p", "alpha", "a")
			if err != nil {
				return err
			}
			done := a
			done.Status = team.StatusCompleted
			return tx.UpdateTeamTask(b.ctx, "p", done, a.Status, a.Lease.Epoch)
		})
		requireList(t, "after a completes", []string{"b", "d"}, ids("ann", team.RoleExecutor))
		if n := write(b, func(tx store.Tx) ([]team.Task, error) {
			return tx.ClaimableTeamTasks(b.ctx, "p", "alpha", "ann", team.RoleExecutor, 1)
		}); len(n) != 1 || n[0].ID != "b" {
			t.Errorf("limit 1: %v", keys(n, func(x team.Task) string { return x.ID }))
		}
		filtered := read(b, func(tx store.Tx) ([]team.Task, error) {
			return tx.ListTeamTasks(b.ctx, "p", "alpha", store.TeamTaskFilter{Statuses: []team.TaskStatus{team.StatusCompleted}})
		})
		requireList(t, "ListTeamTasks completed", []string{"a"}, keys(filtered, func(x team.Task) string { return x.ID }))
	})

	t.Run("ExpiredLeases", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error {
			if _, err := tx.InsertTeam(b.ctx, teamRecord("p", "alpha")); err != nil {
				return err
			}
			for i, exp := range []int{10, 20, 30} {
				x := pendingTask("alpha", fmt.Sprintf("t%d", i))
				x.Status, x.Lease = team.StatusInProgress, team.Lease{Holder: "ann", Epoch: 1, ExpiresAt: at(exp)}
				if _, err := tx.InsertTeamTask(b.ctx, "p", x); err != nil {
					return err
				}
			}
			return nil
		})
		exp := write(b, func(tx store.Tx) ([]team.Task, error) { return tx.ExpiredTeamTasks(b.ctx, "p", "alpha", at(20), 10) })
		requireList(t, "expired at 20s (a lease ends at its ExpiresAt)", []string{"t0", "t1"}, keys(exp, func(x team.Task) string { return x.ID }))
		next, ok := read2(b, func(tx store.Tx) (time.Time, bool, error) { return tx.NextTeamLeaseExpiry(b.ctx, "p", "alpha") })
		if !ok || !next.Equal(at(10)) {
			t.Errorf("NextTeamLeaseExpiry = %v %v, want %v", next, ok, at(10))
		}
		if _, ok := read2(b, func(tx store.Tx) (time.Time, bool, error) { return tx.NextTeamLeaseExpiry(b.ctx, "p", "none") }); ok {
			t.Error("NextTeamLeaseExpiry of a team without leases reported one")
		}
	})

	t.Run("MessagesSeqInboxAndDeliveries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.update(func(tx store.Tx) error { _, err := tx.InsertTeam(b.ctx, teamRecord("p", "alpha")); return err })
		var seqs []int64
		for i := range 3 {
			m := write(b, func(tx store.Tx) (team.Message, error) {
				return tx.AppendTeamMessage(b.ctx, "p", team.Message{Team: "alpha", From: "lead", To: "role:executor",
					Type: team.MsgFixRequired, Summary: fmt.Sprintf("fix %d ✓", i), Data: json.RawMessage(`{"n":1}`), Task: "t-1",
					CreatedAt: at(i)}, []string{"ann", "bob"})
			})
			seqs = append(seqs, m.Seq)
		}
		requireList(t, "seqs", []int64{1, 2, 3}, seqs)
		err := b.s.Update(b.ctx, func(tx store.Tx) error {
			_, err := tx.AppendTeamMessage(b.ctx, "p", team.Message{Team: "ghost", From: "x", To: "y", Type: "t"}, []string{"y"})
			return err
		})
		requireNotFound(t, "AppendTeamMessage to a missing team", err)
		m := read(b, func(tx store.Tx) (team.Message, error) { return tx.GetTeamMessage(b.ctx, "p", "alpha", 2) })
		if m.Summary != "fix 1 ✓" || string(m.Data) != `{"n":1}` || m.To != "role:executor" || !m.CreatedAt.Equal(at(1)) {
			t.Errorf("GetTeamMessage = %+v", m)
		}
		tail := read(b, func(tx store.Tx) ([]team.Message, error) { return tx.ListTeamMessages(b.ctx, "p", "alpha", 1, 0) })
		requireList(t, "ListTeamMessages after 1", []int64{2, 3}, keysI(tail, func(m team.Message) int64 { return m.Seq }))
		// ann acknowledges 1 and hides 2 until 100s.
		b.update(func(tx store.Tx) error {
			d, err := tx.GetDelivery(b.ctx, "p", "alpha", "ann", 1)
			if err != nil {
				return err
			}
			d.State = team.DeliveryAcknowledged
			if err := tx.UpdateDelivery(b.ctx, "p", "alpha", d); err != nil {
				return err
			}
			d2, err := tx.GetDelivery(b.ctx, "p", "alpha", "ann", 2)
			if err != nil {
				return err
			}
			d2.VisibleAt, d2.Deliveries = at(100), 1
			return tx.UpdateDelivery(b.ctx, "p", "alpha", d2)
		})
		inbox := func(f store.InboxFilter) []int64 {
			items := read(b, func(tx store.Tx) ([]store.InboxItem, error) { return tx.Inbox(b.ctx, "p", "alpha", "ann", f) })
			return keysI(items, func(it store.InboxItem) int64 { return it.Message.Seq })
		}
		requireList(t, "inbox all", []int64{1, 2, 3}, inbox(store.InboxFilter{}))
		requireList(t, "inbox unacked", []int64{2, 3}, inbox(store.InboxFilter{Unacked: true}))
		requireList(t, "inbox unacked visible at 50s", []int64{3}, inbox(store.InboxFilter{Unacked: true, VisibleAt: at(50)}))
		requireList(t, "inbox unacked visible at 100s", []int64{2, 3}, inbox(store.InboxFilter{Unacked: true, VisibleAt: at(100)}))
		requireList(t, "inbox limit 1", []int64{2}, inbox(store.InboxFilter{Unacked: true, Limit: 1}))
		ds := read(b, func(tx store.Tx) ([]team.Delivery, error) { return tx.MessageDeliveries(b.ctx, "p", "alpha", 1) })
		if len(ds) != 2 || ds[0].Recipient != "ann" || ds[0].State != team.DeliveryAcknowledged || ds[1].State != team.DeliveryDelivered {
			t.Errorf("MessageDeliveries = %+v", ds)
		}
		err = b.s.Update(b.ctx, func(tx store.Tx) error {
			return tx.UpdateDelivery(b.ctx, "p", "alpha", team.Delivery{Seq: 9, Recipient: "ann", State: team.DeliveryRead})
		})
		requireNotFound(t, "UpdateDelivery of a missing copy", err)
	})

	t.Run("Events", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var ids []int64
		for i, subj := range []string{"t-1", "t-2", "t-1"} {
			ids = append(ids, write(b, func(tx store.Tx) (int64, error) {
				return tx.InsertTeamEvent(b.ctx, store.TeamEvent{Project: "p", Team: "alpha", At: at(i), Kind: "task", Subject: subj,
					From: "pending", To: "in_progress", Cause: "claimed by ann", Data: json.RawMessage(`{"epoch":1}`)})
			}))
		}
		if !slices.IsSorted(ids) || ids[0] == ids[1] {
			t.Fatalf("event ids not increasing: %v", ids)
		}
		evs := read(b, func(tx store.Tx) ([]store.TeamEvent, error) {
			return tx.ListTeamEvents(b.ctx, "p", "alpha", "t-1", 0, 0)
		})
		if len(evs) != 2 || evs[0].ID != ids[0] || evs[1].ID != ids[2] || evs[0].Cause != "claimed by ann" || string(evs[0].Data) != `{"epoch":1}` {
			t.Errorf("ListTeamEvents = %+v", evs)
		}
		after := read(b, func(tx store.Tx) ([]store.TeamEvent, error) {
			return tx.ListTeamEvents(b.ctx, "p", "alpha", "", ids[0], 0)
		})
		if len(after) != 2 {
			t.Errorf("ListTeamEvents after the first = %d events", len(after))
		}
	})

	t.Run("ConcurrentClaimsEachTaskOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const tasks = 40
		b.update(func(tx store.Tx) error {
			if _, err := tx.InsertTeam(b.ctx, teamRecord("p", "alpha")); err != nil {
				return err
			}
			for i := range tasks {
				if _, err := tx.InsertTeamTask(b.ctx, "p", pendingTask("alpha", fmt.Sprintf("t%03d", i))); err != nil {
					return err
				}
			}
			return nil
		})
		var claims [tasks]atomic.Int32
		errs := together(workers, func(i int) error {
			member := fmt.Sprintf("w%d", i)
			for {
				var got string
				err := b.s.Update(b.ctx, func(tx store.Tx) error {
					got = ""
					cands, err := tx.ClaimableTeamTasks(b.ctx, "p", "alpha", member, team.RoleWorker, 1)
					if err != nil || len(cands) == 0 {
						return err
					}
					x, err := team.Grant(cands[0], member, at(1), time.Minute)
					if err != nil {
						return err
					}
					if err := tx.UpdateTeamTask(b.ctx, "p", x, cands[0].Status, cands[0].Lease.Epoch); err != nil {
						return err
					}
					got = x.ID
					return nil
				})
				if errors.Is(err, store.ErrStale) {
					continue
				}
				if err != nil {
					return err
				}
				if got == "" {
					return nil
				}
				var n int
				fmt.Sscanf(got, "t%03d", &n)
				claims[n].Add(1)
			}
		})
		requireNoErrors(t, "claimer", errs)
		for i := range claims {
			if c := claims[i].Load(); c != 1 {
				t.Errorf("task t%03d claimed %d times", i, c)
			}
		}
	})
}

func keysI[T any](s []T, key func(T) int64) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = key(v)
	}
	return out
}

func read2[A, B any](b *bundle, fn func(tx store.Tx) (A, B, error)) (A, B) {
	b.t.Helper()
	var a A
	var c B
	b.view(func(tx store.Tx) error {
		var err error
		a, c, err = fn(tx)
		return err
	})
	return a, c
}

func testTeamRuns(t *testing.T, setup setupFunc) {
	t.Run("RunsRoundTripAndOneSwarm", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		run := func(id, pattern string) store.TeamRun {
			return store.TeamRun{Project: "p", ID: id, Team: "alpha", Pattern: pattern, State: "START", Run: json.RawMessage(`{"id":"` + id + `"}`),
				CreatedAt: at(1), UpdatedAt: at(2)}
		}
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeamRun(b.ctx, run("r1", "CP-7")) }) {
			t.Fatal("first swarm refused")
		}
		if write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeamRun(b.ctx, run("r2", "CP-7")) }) {
			t.Fatal("a second active swarm of the team was stored")
		}
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeamRun(b.ctx, run("r3", "CP-2")) }) {
			t.Fatal("a CP-2 run beside the swarm was refused")
		}
		got := read(b, func(tx store.Tx) (store.TeamRun, error) { return tx.GetTeamRun(b.ctx, "p", "r1") })
		requireEqual(t, "GetTeamRun", run("r1", "CP-7"), got)
		done := got
		done.Finished, done.State, done.UpdatedAt = true, "DONE", at(5)
		b.update(func(tx store.Tx) error {
			if _, err := tx.LockTeamRun(b.ctx, "p", "r1"); err != nil {
				return err
			}
			return tx.UpdateTeamRun(b.ctx, done)
		})
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTeamRun(b.ctx, run("r2", "CP-7")) }) {
			t.Fatal("a swarm after the first finished was refused")
		}
		active := read(b, func(tx store.Tx) ([]store.TeamRun, error) {
			return tx.ListTeamRuns(b.ctx, "p", store.TeamRunFilter{Team: "alpha", ActiveOnly: true})
		})
		requireList(t, "active runs", []string{"r2", "r3"}, keys(active, func(r store.TeamRun) string { return r.ID }))
		for i := range 3 {
			n := write(b, func(tx store.Tx) (int64, error) {
				return tx.AppendRunEvent(b.ctx, "p", "r3", store.RunEvent{At: at(i), Event: json.RawMessage(`{"kind":"timer"}`), State: "S"})
			})
			if n != int64(i+1) {
				t.Errorf("event number %d, want %d", n, i+1)
			}
		}
		evs := read(b, func(tx store.Tx) ([]store.RunEvent, error) { return tx.ListRunEvents(b.ctx, "p", "r3") })
		if len(evs) != 3 || string(evs[0].Event) != `{"kind":"timer"}` || !evs[2].At.Equal(at(2)) {
			t.Errorf("run events %+v", evs)
		}
		err := b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdateTeamRun(b.ctx, run("nope", "CP-1")) })
		requireNotFound(t, "UpdateTeamRun of a missing run", err)
	})
}
