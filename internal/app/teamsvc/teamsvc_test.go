package teamsvc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

type bundle struct {
	*testkit.Bundle
	ctx context.Context
	t   *testing.T
}

func setup(t *testing.T, backend string, members ...team.Member) *bundle {
	t.Helper()
	b := &bundle{Bundle: testkit.Open(t, backend), ctx: t.Context(), t: t}
	if len(members) == 0 {
		members = defaultMembers()
	}
	if _, err := b.E.CreateTeam(b.ctx, kaizen.TeamInput{Name: "alpha", Members: members}); err != nil {
		t.Fatal(err)
	}
	return b
}

func defaultMembers() []team.Member {
	agent := team.Worker{Kind: team.WorkerAgent}
	return []team.Member{
		{Name: "lead", Role: team.RoleCoordinator, Worker: agent},
		{Name: "ann", Role: team.RoleExecutor, Capabilities: []string{"go"}, Worker: agent},
		{Name: "bob", Role: team.RoleExecutor, Worker: agent},
		{Name: "tess", Role: team.RoleTester, Worker: agent},
	}
}

func (b *bundle) add(tasks ...kaizen.TeamTaskInput) []team.Task {
	b.t.Helper()
	out, err := b.E.AddTeamTasks(b.ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: tasks})
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

func (b *bundle) claim(member string) *kaizen.ClaimResult {
	b.t.Helper()
	res, err := b.E.ClaimTask(b.ctx, kaizen.ClaimInput{Team: "alpha", Member: member})
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

func (b *bundle) task(id string) team.Task {
	b.t.Helper()
	t, err := b.E.GetTeamTask(b.ctx, "", "alpha", id)
	if err != nil {
		b.t.Fatal(err)
	}
	return *t
}

func kindOf(err error) app.ErrorKind { return app.KindOf(err) }

func TestClaimAtomicity(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		var members []team.Member
		for i := range 50 {
			members = append(members, team.Member{Name: fmt.Sprintf("w%d", i), Role: team.RoleWorker, Worker: team.Worker{Kind: team.WorkerAgent}})
		}
		b := setup(t, backend, members...)
		const n = 60
		var in []kaizen.TeamTaskInput
		for i := range n {
			in = append(in, kaizen.TeamTaskInput{ID: fmt.Sprintf("t%02d", i), Subject: "work"})
		}
		b.add(in...)
		counts := claimAll(t, []*kaizen.Engine{b.E}, 100)
		requireOnce(t, counts, n)
	})
}

// claimAll has goroutines (two per member of 50), spread over the
// engines, claim until nothing is ready, and counts the claims per task.
func claimAll(t *testing.T, engines []*kaizen.Engine, workers int) map[string]int {
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	var failed atomic.Value
	for i := range workers {
		e := engines[i%len(engines)]
		wg.Go(func() {
			<-start
			for {
				res, err := e.ClaimTask(t.Context(), kaizen.ClaimInput{Team: "alpha", Member: fmt.Sprintf("w%d", i%50)})
				if err != nil {
					failed.Store(err)
					return
				}
				if res.Task == nil {
					return
				}
				mu.Lock()
				counts[res.Task.ID]++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		t.Fatalf("claim: %v", err)
	}
	return counts
}

func requireOnce(t *testing.T, counts map[string]int, n int) {
	t.Helper()
	if len(counts) != n {
		t.Errorf("%d tasks claimed, want %d", len(counts), n)
	}
	for id, c := range counts {
		if c != 1 {
			t.Errorf("task %s claimed %d times", id, c)
		}
	}
}

func TestTwoEnginesOnOnePostgresClaimEachTaskOnce(t *testing.T) {
	dsn := testkit.DSN(t, "postgres")
	var members []team.Member
	for i := range 50 {
		members = append(members, team.Member{Name: fmt.Sprintf("w%d", i), Role: team.RoleWorker, Worker: team.Worker{Kind: team.WorkerAgent}})
	}
	open := func() *kaizen.Engine {
		b := testkit.Open(t, "postgres", func(c *kaizen.Config) { c.DB = dsn })
		return b.E
	}
	e1, e2 := open(), open()
	if _, err := e1.CreateTeam(t.Context(), kaizen.TeamInput{Name: "alpha", Members: members}); err != nil {
		t.Fatal(err)
	}
	const n = 80
	var in []kaizen.TeamTaskInput
	for i := range n {
		in = append(in, kaizen.TeamTaskInput{ID: fmt.Sprintf("t%02d", i), Subject: "work"})
	}
	if _, err := e2.AddTeamTasks(t.Context(), kaizen.AddTeamTasksInput{Team: "alpha", Tasks: in}); err != nil {
		t.Fatal(err)
	}
	requireOnce(t, claimAll(t, []*kaizen.Engine{e1, e2}, 100), n)
}

func TestFencingRefusesStaleWorker(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		b.add(kaizen.TeamTaskInput{ID: "impl", Subject: "implement", Role: team.RoleExecutor})
		first := b.claim("bob")
		if first.Task == nil || first.Epoch != 1 {
			t.Fatalf("first claim = %+v", first)
		}
		// bob's lease (60 s default) runs out; ann takes the task.
		b.Clock.Advance(61 * time.Second)
		second := b.claim("ann")
		if second.Task == nil || second.Task.ID != "impl" || second.Epoch != 2 || second.Task.Attempts != 2 {
			t.Fatalf("second claim = %+v", second)
		}
		_, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: "impl", Member: "bob", Epoch: 1, Status: team.StatusCompleted})
		if !errors.Is(err, team.ErrStaleEpoch) || kindOf(err) != app.KindConflict {
			t.Fatalf("stale report: %v, want a conflict wrapping ErrStaleEpoch", err)
		}
		_, err = b.E.HeartbeatTask(b.ctx, kaizen.HeartbeatInput{Team: "alpha", Task: "impl", Member: "bob", Epoch: 1})
		if !errors.Is(err, team.ErrStaleEpoch) {
			t.Fatalf("stale heartbeat: %v", err)
		}
		_, err = b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: "impl", Member: "bob", Epoch: 2, Status: team.StatusCompleted})
		if !errors.Is(err, team.ErrNotHolder) {
			t.Fatalf("report by a non-holder with the current epoch: %v", err)
		}
		done, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: "impl", Member: "ann", Epoch: 2, Status: team.StatusCompleted,
			Result: json.RawMessage(`{"ok":true}`)})
		if err != nil || done.Status != team.StatusCompleted {
			t.Fatalf("holder's report: %v %+v", err, done)
		}
		evs, err := b.E.TeamEvents(b.ctx, "", "alpha", "impl", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var path []string
		for _, e := range evs {
			path = append(path, e.To)
		}
		want := "[pending in_progress pending in_progress completed]"
		if fmt.Sprint(path) != want {
			t.Errorf("events of impl: %v, want %s", path, want)
		}
	})
}

func TestCapabilitiesRoleAndOwner(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		b.add(kaizen.TeamTaskInput{ID: "go", Subject: "needs go", Role: team.RoleExecutor, Capabilities: []string{"go"}},
			kaizen.TeamTaskInput{ID: "test", Subject: "tester's", Role: team.RoleTester},
			kaizen.TeamTaskInput{ID: "mine", Subject: "owned by tess", Owner: "tess"})
		if r := b.claim("bob"); r.Task != nil {
			t.Fatalf("bob (no go capability) claimed %s", r.Task.ID)
		}
		if r := b.claim("ann"); r.Task == nil || r.Task.ID != "go" {
			t.Fatalf("ann claimed %+v, want go", r.Task)
		}
		if r := b.claim("tess"); r.Task == nil || r.Task.ID != "test" {
			t.Fatalf("tess claimed %+v, want test", r.Task)
		}
		if r := b.claim("tess"); r.Task == nil || r.Task.ID != "mine" {
			t.Fatalf("tess claimed %+v, want mine", r.Task)
		}
		_, err := b.E.ClaimTask(b.ctx, kaizen.ClaimInput{Team: "alpha", Member: "nobody"})
		if kindOf(err) != app.KindNotFound {
			t.Errorf("claim by a non-member: %v", err)
		}
	})
}

func TestGateDecidesCompletion(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		b.add(kaizen.TeamTaskInput{ID: "g1", Subject: "gated", Gate: "go test ./..."},
			kaizen.TeamTaskInput{ID: "g2", Subject: "gated", Gate: "make check"})
		r := b.claim("bob")
		_, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "bob", Epoch: r.Epoch, Status: team.StatusCompleted})
		if kindOf(err) != app.KindInvalid {
			t.Fatalf("completion without the gate's result: %v", err)
		}
		got, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "bob", Epoch: r.Epoch,
			Status: team.StatusCompleted, Gate: &kaizen.GateResult{ExitCode: 2, Output: "FAIL"}})
		if err != nil || got.Status != team.StatusFailed {
			t.Fatalf("failing gate: %v %+v", err, got)
		}
		r = b.claim("bob")
		got, err = b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "bob", Epoch: r.Epoch,
			Status: team.StatusCompleted, Gate: &kaizen.GateResult{ExitCode: 0}})
		if err != nil || got.Status != team.StatusCompleted {
			t.Fatalf("passing gate: %v %+v", err, got)
		}
	})
}

func TestLeaseHeartbeatExpiryAndAttempts(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := &bundle{Bundle: testkit.Open(t, backend), ctx: t.Context(), t: t}
		if _, err := b.E.CreateTeam(b.ctx, kaizen.TeamInput{Name: "alpha", Members: defaultMembers(),
			Settings: kaizen.TeamSettings{LeaseSeconds: 30, MaxAttempts: 2}}); err != nil {
			t.Fatal(err)
		}
		b.add(kaizen.TeamTaskInput{ID: "t", Subject: "work"})
		r := b.claim("bob")
		// Heartbeats every 20 s keep a 30 s lease alive for a minute.
		for range 3 {
			b.Clock.Advance(20 * time.Second)
			ans, err := b.E.HeartbeatTask(b.ctx, kaizen.HeartbeatInput{Team: "alpha", Task: "t", Member: "bob", Epoch: r.Epoch,
				Progress: &team.Progress{Percent: 50, Note: "half"}})
			if err != nil || ans.Cancelled {
				t.Fatalf("heartbeat: %v %+v", err, ans)
			}
			if other := b.claim("ann"); other.Task != nil {
				t.Fatalf("a renewed task was claimed by ann")
			}
		}
		if p := b.task("t").Lease.Progress; p == nil || p.Percent != 50 {
			t.Errorf("progress = %+v", p)
		}
		// At the lease end exactly, the lease has expired.
		b.Clock.Advance(30 * time.Second)
		_, err := b.E.HeartbeatTask(b.ctx, kaizen.HeartbeatInput{Team: "alpha", Task: "t", Member: "bob", Epoch: r.Epoch})
		if !errors.Is(err, team.ErrLeaseExpired) {
			t.Fatalf("heartbeat at the lease end: %v", err)
		}
		if n, err := b.E.SweepLeases(b.ctx, ""); err != nil || n != 1 {
			t.Fatalf("sweep: %d %v", n, err)
		}
		if st := b.task("t").Status; st != team.StatusPending {
			t.Fatalf("after expiry: %s", st)
		}
		r2 := b.claim("ann")
		if r2.Task == nil || r2.Task.Attempts != 2 {
			t.Fatalf("second claim = %+v", r2)
		}
		b.Clock.Advance(30 * time.Second)
		b.E.SweepLeases(b.ctx, "")
		if st := b.task("t").Status; st != team.StatusFailed {
			t.Fatalf("after the last attempt expired: %s, want failed", st)
		}
		// Cancellation is the heartbeat's answer.
		b.add(kaizen.TeamTaskInput{ID: "c", Subject: "to cancel"})
		r3 := b.claim("bob")
		if _, err := b.E.UpdateTeamTask(b.ctx, kaizen.UpdateTeamTaskInput{Team: "alpha", Task: "c", Status: team.StatusCancelled}); err != nil {
			t.Fatal(err)
		}
		ans, err := b.E.HeartbeatTask(b.ctx, kaizen.HeartbeatInput{Team: "alpha", Task: "c", Member: "bob", Epoch: r3.Epoch})
		if err != nil || !ans.Cancelled {
			t.Fatalf("heartbeat of a cancelled task: %v %+v", err, ans)
		}
	})
}

func TestBlockedByOrderAndCycles(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		b.add(kaizen.TeamTaskInput{ID: "plan", Subject: "plan"},
			kaizen.TeamTaskInput{ID: "impl", Subject: "impl", BlockedBy: []string{"plan"}},
			kaizen.TeamTaskInput{ID: "test", Subject: "test", BlockedBy: []string{"impl"}},
			kaizen.TeamTaskInput{ID: "review", Subject: "review", BlockedBy: []string{"impl"}})
		_, err := b.E.AddTeamTasks(b.ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: []kaizen.TeamTaskInput{
			{ID: "x", Subject: "x", BlockedBy: []string{"y"}}, {ID: "y", Subject: "y", BlockedBy: []string{"x"}}}})
		if !errors.Is(err, team.ErrCycle) || kindOf(err) != app.KindInvalid {
			t.Fatalf("cycle: %v", err)
		}
		_, err = b.E.AddTeamTasks(b.ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: []kaizen.TeamTaskInput{{ID: "z", Subject: "z", BlockedBy: []string{"ghost"}}}})
		if kindOf(err) != app.KindInvalid {
			t.Fatalf("unknown dependency: %v", err)
		}
		if tasks, _ := b.E.ListTeamTasks(b.ctx, kaizen.TeamTaskQuery{Team: "alpha"}); len(tasks) != 4 {
			t.Fatalf("refused adds wrote tasks: %d", len(tasks))
		}
		var order []string
		for {
			r := b.claim("bob")
			if r.Task == nil {
				break
			}
			order = append(order, r.Task.ID)
			if _, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "bob", Epoch: r.Epoch, Status: team.StatusCompleted}); err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(order) != "[plan impl test review]" {
			t.Errorf("claim order %v", order)
		}
		// A failed dependency blocks its dependants; a retry unblocks them.
		b.add(kaizen.TeamTaskInput{ID: "a", Subject: "a"}, kaizen.TeamTaskInput{ID: "b", Subject: "b", BlockedBy: []string{"a"}})
		r := b.claim("bob")
		b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "bob", Epoch: r.Epoch, Status: team.StatusFailed, Error: "boom"})
		if st := b.task("b"); st.Status != team.StatusBlocked || st.BlockedCause != "dependency a failed" {
			t.Fatalf("dependant of a failed task: %s %q", st.Status, st.BlockedCause)
		}
		if _, err := b.E.UpdateTeamTask(b.ctx, kaizen.UpdateTeamTaskInput{Team: "alpha", Task: "a", Status: team.StatusPending, Cause: "retry"}); err != nil {
			t.Fatal(err)
		}
		if st := b.task("b").Status; st != team.StatusPending {
			t.Fatalf("after the retry: %s", st)
		}
	})
}

func TestBusOrderingAckAndRedelivery(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		send := func(to string, typ team.MessageType, data string) *team.Message {
			m, err := b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: to, Type: typ, Data: json.RawMessage(data)})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		m1 := send("role:executor", "note", `{"text":"one"}`)
		m2 := send("ann", "note", `{"text":"two"}`)
		m3 := send("all", "note", `{"text":"three password=hunter2hunter2"}`)
		if m1.Seq != 1 || m2.Seq != 2 || m3.Seq != 3 {
			t.Fatalf("seqs %d %d %d", m1.Seq, m2.Seq, m3.Seq)
		}
		_, err := b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "ann", Type: team.MsgVote, Data: json.RawMessage(`{"vote":"MAYBE"}`)})
		if kindOf(err) != app.KindInvalid {
			t.Fatalf("bad vote payload: %v", err)
		}
		_, err = b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "role:nobody", Type: "note"})
		if kindOf(err) != app.KindInvalid {
			t.Fatalf("address reaching nobody: %v", err)
		}
		inbox := func(member string) []int64 {
			res, err := b.E.Inbox(b.ctx, kaizen.InboxInput{Team: "alpha", Member: member})
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, it := range res.Items {
				seqs = append(seqs, it.Message.Seq)
			}
			return seqs
		}
		if got := fmt.Sprint(inbox("ann")); got != "[1 2 3]" {
			t.Fatalf("ann's inbox %s", got)
		}
		if got := fmt.Sprint(inbox("ann")); got != "[]" {
			t.Fatalf("delivered messages are invisible: %s", got)
		}
		if _, err := b.E.AckMessages(b.ctx, kaizen.AckInput{Team: "alpha", Member: "ann", Seqs: []int64{1, 3}}); err != nil {
			t.Fatal(err)
		}
		// After the visibility timeout (30 s), only the unacknowledged one returns.
		b.Clock.Advance(30 * time.Second)
		if got := fmt.Sprint(inbox("ann")); got != "[2]" {
			t.Fatalf("redelivery: %s", got)
		}
		ds, _ := b.E.MessageDeliveries(b.ctx, "", "alpha", 2)
		if len(ds) != 1 || ds[0].Deliveries != 2 {
			t.Errorf("deliveries of 2: %+v", ds)
		}
		if _, err := b.E.AckMessages(b.ctx, kaizen.AckInput{Team: "alpha", Member: "ann", Seqs: []int64{1}, State: team.DeliveryRead}); !errors.Is(err, team.ErrDelivery) {
			t.Errorf("ack going backwards: %v", err)
		}
		if _, err := b.E.AckMessages(b.ctx, kaizen.AckInput{Team: "alpha", Member: "tess", Seqs: []int64{2}}); kindOf(err) != app.KindNotFound {
			t.Errorf("ack of a message not sent to tess: %v", err)
		}
		tail, _ := b.E.TailMessages(b.ctx, kaizen.TailInput{Team: "alpha"})
		if len(tail) != 3 || string(tail[2].Data) != `{"text":"three password=[REDACTED:password]"}` {
			t.Errorf("tail %d messages, third data %s (must be redacted)", len(tail), tail[2].Data)
		}
	})
}

func TestLongPollWakesAtOnce(t *testing.T) {
	b := setup(t, "sqlite")
	got := make(chan *kaizen.InboxResult, 1)
	go func() {
		res, err := b.E.Inbox(b.ctx, kaizen.InboxInput{Team: "alpha", Member: "ann", WaitSeconds: 300})
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	// The test clock does not move: only the wake-up can end the wait.
	time.Sleep(10 * time.Millisecond)
	if _, err := b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note"}); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-got:
		if len(res.Items) != 1 {
			t.Fatalf("woken with %d items", len(res.Items))
		}
	case <-time.After(testkit.Patience):
		t.Fatal("the waiting receiver was not woken")
	}
}

func TestRestartKeepsGraphLeasesAndMessages(t *testing.T) {
	dsn := testkit.DSN(t, "sqlite")
	clock := testkit.NewClock(testkit.Start)
	open := func() *kaizen.Engine {
		cfg := kaizen.DefaultConfig()
		cfg.Home, cfg.DB, cfg.Project, cfg.Now = t.TempDir(), dsn, "proj", clock.Now
		e, err := kaizen.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	ctx := t.Context()
	if _, err := e.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: defaultMembers()}); err != nil {
		t.Fatal(err)
	}
	e.AddTeamTasks(ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: []kaizen.TeamTaskInput{{ID: "a", Subject: "a"}, {ID: "b", Subject: "b", BlockedBy: []string{"a"}}}})
	r, _ := e.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: "bob"})
	e.SendMessage(ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note"})
	e.Inbox(ctx, kaizen.InboxInput{Team: "alpha", Member: "ann"}) // delivered, not acknowledged
	e.Close()

	e = open()
	defer e.Close()
	a, err := e.GetTeamTask(ctx, "", "alpha", "a")
	if err != nil || a.Status != team.StatusInProgress || a.Lease.Holder != "bob" || a.Lease.Epoch != r.Epoch {
		t.Fatalf("after restart: %v %+v", err, a)
	}
	// The dead worker's task comes back after its lease.
	clock.Advance(time.Minute)
	r2, err := e.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: "ann"})
	if err != nil || r2.Task == nil || r2.Task.ID != "a" {
		t.Fatalf("reclaim after restart: %v %+v", err, r2)
	}
	res, _ := e.Inbox(ctx, kaizen.InboxInput{Team: "alpha", Member: "ann"})
	if len(res.Items) != 1 || res.Items[0].Delivery.Deliveries != 2 {
		t.Fatalf("unacknowledged message after restart: %+v", res.Items)
	}
}

func TestSpendingLimits(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := &bundle{Bundle: testkit.Open(t, backend), ctx: t.Context(), t: t}
		cmd := team.Worker{Kind: team.WorkerCommand, Command: "true"}
		_, err := b.E.CreateTeam(b.ctx, kaizen.TeamInput{Name: "alpha", Members: []team.Member{
			{Name: "c1", Role: team.RoleWorker, Worker: cmd}, {Name: "c2", Role: team.RoleWorker, Worker: cmd}},
			Limits: team.Limits{ConcurrentCommandWorkers: 1, RunsPerHour: 2, Tokens: 100}})
		if err != nil {
			t.Fatal(err)
		}
		b.add(kaizen.TeamTaskInput{ID: "1", Subject: "1"}, kaizen.TeamTaskInput{ID: "2", Subject: "2"},
			kaizen.TeamTaskInput{ID: "3", Subject: "3"}, kaizen.TeamTaskInput{ID: "4", Subject: "4"})
		r := b.claim("c1")
		_, err = b.E.ClaimTask(b.ctx, kaizen.ClaimInput{Team: "alpha", Member: "c2"})
		if !errors.Is(err, team.ErrLimit) {
			t.Fatalf("second concurrent command worker: %v", err)
		}
		b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "c1", Epoch: r.Epoch, Status: team.StatusCompleted,
			Usage: &kaizen.TeamUsage{Tokens: 60}})
		r = b.claim("c2")
		b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "c2", Epoch: r.Epoch, Status: team.StatusCompleted})
		var le *team.LimitError
		if _, err := b.E.ClaimTask(b.ctx, kaizen.ClaimInput{Team: "alpha", Member: "c1"}); !errors.As(err, &le) || le.Limit != "runs_per_hour" {
			t.Fatalf("third run in the hour: %v", err)
		}
		b.Clock.Advance(time.Hour)
		r = b.claim("c1")
		b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "c1", Epoch: r.Epoch, Status: team.StatusCompleted,
			Usage: &kaizen.TeamUsage{Tokens: 50}})
		if _, err := b.E.ClaimTask(b.ctx, kaizen.ClaimInput{Team: "alpha", Member: "c1"}); !errors.As(err, &le) || le.Limit != "tokens" {
			t.Fatalf("claim over the token budget: %v", err)
		}
	})
}

func TestCoordinatorTransitionsRecorded(t *testing.T) {
	b := setup(t, "sqlite")
	c, err := b.E.Coordinate(b.ctx, kaizen.CoordinatorInput{Team: "alpha", Event: team.CoordinatorEvent{Kind: team.CoordNewRequirement, Cause: "add login"},
		Start: &kaizen.CoordinatorStartConfig{TaskType: "feature", Complexity: "high", RiskLevel: "high"}})
	if err != nil || c.State != team.CoordPlan {
		t.Fatalf("start: %v %+v", err, c)
	}
	if _, err := b.E.Coordinate(b.ctx, kaizen.CoordinatorInput{Team: "alpha", Event: team.CoordinatorEvent{Kind: team.CoordValidationPassed}}); !errors.Is(err, team.ErrCoordinator) {
		t.Fatalf("validation_passed in PLAN: %v", err)
	}
	c, err = b.E.Coordinate(b.ctx, kaizen.CoordinatorInput{Team: "alpha", Event: team.CoordinatorEvent{Kind: team.CoordPlanApproved, Cause: "vote passed"}})
	if err != nil || c.State != team.CoordExecute {
		t.Fatalf("plan approved: %v %+v", err, c)
	}
	evs, _ := b.E.TeamEvents(b.ctx, "", "alpha", "coordinator", 0, 0)
	if len(evs) != 2 || evs[1].From != team.CoordPlan || evs[1].To != team.CoordExecute || evs[1].Cause != "plan_approved: vote passed" {
		t.Fatalf("coordinator events %+v", evs)
	}
}
