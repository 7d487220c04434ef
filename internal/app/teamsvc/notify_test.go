package teamsvc_test

import (
	"context"
	"database/sql"
	"net/url"
	"strconv"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver for the admin connection

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/team"
)

// guard bounds each wait of the cross-process tests: a failure guard
// against a hang, not a measure. The receivers wait up to 300 s on a clock
// that does not move, so only a wake-up ends their wait before it.
const guard = 30 * time.Second

// twoProcesses opens two team services ("daemons") on one PostgreSQL
// schema, each with its own connection pool, at a clock that stands
// still.
func twoProcesses(t *testing.T) (a, b *teamsvc.Service) {
	t.Helper()
	dsn := pgtest.DSN(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	open := func() *teamsvc.Service {
		st, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		s := teamsvc.New(app.NewEnv(st, func() time.Time { return at }, nil, "proj"))
		t.Cleanup(s.Close)
		return s
	}
	a, b = open(), open()
	agent := team.Worker{Kind: team.WorkerAgent}
	if _, err := b.CreateTeam(t.Context(), teamsvc.TeamInput{Name: "alpha", Members: []team.Member{
		{Name: "lead", Role: team.RoleCoordinator, Worker: agent}, {Name: "ann", Role: team.RoleExecutor, Worker: agent},
		{Name: "w1", Role: team.RoleWorker, Worker: agent}}}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// asleep returns a channel told each time a waiter of s goes to sleep.
func asleep(s *teamsvc.Service) chan struct{} {
	ch := make(chan struct{}, 1)
	teamsvc.SetBeforeSleep(s, func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch
}

func within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("%s: nothing after %v", what, guard)
	}
	var zero T
	return zero
}

// A receiver long-polling its inbox on daemon A is woken by a message
// that daemon B commits (PostgreSQL LISTEN/NOTIFY): A's waiter is asleep
// with its listener connected before B sends, and nothing else could end
// its 300 s wait.
func TestMessageOnOneDaemonWakesAReceiverOnAnother(t *testing.T) {
	a, b := twoProcesses(t)
	ctx := t.Context()
	sleeping := asleep(a)
	type got struct {
		res *teamsvc.InboxResult
		err error
	}
	done := make(chan got, 1)
	go func() {
		res, err := a.Inbox(ctx, teamsvc.InboxInput{Team: "alpha", Member: "ann", WaitSeconds: 300})
		done <- got{res, err}
	}()
	within(t, "receiver asleep on daemon A", sleeping)
	if !teamsvc.ListenerUp(a) {
		t.Fatal("daemon A waits without listening")
	}
	m, err := b.Send(ctx, teamsvc.SendInput{Team: "alpha", From: "lead", To: "ann", Type: team.MsgFixRequired,
		Data: []byte(`{"suggestion":"handle the error"}`)})
	if err != nil {
		t.Fatal(err)
	}
	r := within(t, "receiver on daemon A woken by daemon B's message", done)
	if r.err != nil || len(r.res.Items) != 1 || r.res.Items[0].Message.Seq != m.Seq {
		t.Fatalf("receiver got %v %+v", r.err, r.res)
	}
}

// A claimer long-polling on daemon A is woken when a task becomes ready
// on daemon B: a new task, and a task whose blocker B completes.
func TestTaskReadyOnOneDaemonWakesAClaimerOnAnother(t *testing.T) {
	a, b := twoProcesses(t)
	ctx := t.Context()
	sleeping := asleep(a)
	type got struct {
		res *teamsvc.ClaimResult
		err error
	}
	claim := func() chan got {
		done := make(chan got, 1)
		go func() {
			res, err := a.Claim(ctx, teamsvc.ClaimInput{Team: "alpha", Member: "w1", WaitSeconds: 300})
			done <- got{res, err}
		}()
		within(t, "claimer asleep on daemon A", sleeping)
		if !teamsvc.ListenerUp(a) {
			t.Fatal("daemon A waits without listening")
		}
		return done
	}

	done := claim()
	if _, err := b.AddTasks(ctx, teamsvc.AddTasksInput{Team: "alpha", Tasks: []teamsvc.TaskInput{{ID: "new", Subject: "work"}}}); err != nil {
		t.Fatal(err)
	}
	r := within(t, "claimer woken by a task added on daemon B", done)
	if r.err != nil || r.res.Task == nil || r.res.Task.ID != "new" {
		t.Fatalf("claim: %v %+v", r.err, r.res)
	}

	// "next" waits for "first", which only lead may take
	if _, err := b.AddTasks(ctx, teamsvc.AddTasksInput{Team: "alpha", Tasks: []teamsvc.TaskInput{
		{ID: "first", Subject: "lead's part", Owner: "lead"}, {ID: "next", Subject: "then", BlockedBy: []string{"first"}}}}); err != nil {
		t.Fatal(err)
	}
	lead, err := b.Claim(ctx, teamsvc.ClaimInput{Team: "alpha", Member: "lead"})
	if err != nil || lead.Task == nil || lead.Task.ID != "first" {
		t.Fatalf("lead's claim: %v %+v", err, lead)
	}
	done = claim()
	if _, err := b.Report(ctx, teamsvc.ReportInput{Team: "alpha", Task: "first", Member: "lead", Epoch: lead.Epoch,
		Status: team.StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	r = within(t, "claimer woken by a blocker completed on daemon B", done)
	if r.err != nil || r.res.Task == nil || r.res.Task.ID != "next" {
		t.Fatalf("claim: %v %+v", r.err, r.res)
	}
}

// The listener stops with the service, and a service that never waits
// never listens.
func TestListenerStartsWithTheFirstWaitAndStopsOnClose(t *testing.T) {
	a, b := twoProcesses(t)
	if teamsvc.ListenerUp(a) || teamsvc.ListenerUp(b) {
		t.Fatal("listening before any wait")
	}
	ctx, cancel := context.WithCancel(t.Context())
	sleeping := asleep(a)
	done := make(chan error, 1)
	go func() {
		_, err := a.Inbox(ctx, teamsvc.InboxInput{Team: "alpha", Member: "ann", WaitSeconds: 300})
		done <- err
	}()
	within(t, "receiver asleep", sleeping)
	if !teamsvc.ListenerUp(a) {
		t.Fatal("not listening while waiting")
	}
	cancel()
	within(t, "wait cancelled", done)
	a.Close()
	if teamsvc.ListenerUp(a) {
		t.Error("still listening after Close")
	}
}

// The listening connection of daemon A is terminated by the server while
// a receiver waits: the listener reconnects, and a message daemon B sends
// afterwards still wakes the receiver.
func TestListenerReconnectsAfterItsConnectionDrops(t *testing.T) {
	base := pgtest.DSN(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	appName := "kaizen-listen-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	q.Set("application_name", appName)
	u.RawQuery = q.Encode()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	open := func(dsn string) *teamsvc.Service {
		st, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		s := teamsvc.New(app.NewEnv(st, func() time.Time { return at }, nil, "proj"))
		t.Cleanup(s.Close)
		return s
	}
	a, b := open(u.String()), open(base)
	ctx := t.Context()
	agent := team.Worker{Kind: team.WorkerAgent}
	if _, err := b.CreateTeam(ctx, teamsvc.TeamInput{Name: "alpha", Members: []team.Member{
		{Name: "lead", Role: team.RoleCoordinator, Worker: agent}, {Name: "ann", Role: team.RoleExecutor, Worker: agent}}}); err != nil {
		t.Fatal(err)
	}
	sleeping := asleep(a)
	type got struct {
		res *teamsvc.InboxResult
		err error
	}
	done := make(chan got, 1)
	go func() {
		res, err := a.Inbox(ctx, teamsvc.InboxInput{Team: "alpha", Member: "ann", WaitSeconds: 300})
		done <- got{res, err}
	}()
	within(t, "receiver asleep", sleeping)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var killed int
	if err := admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE 'LISTEN %'`, appName).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminate the listening connection: %v, %d terminated", err, killed)
	}
	testkit.Eventually(t, "the listener reconnected", func() bool {
		var n int
		err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1
			AND query LIKE 'LISTEN %'`, appName).Scan(&n)
		return err == nil && n == 1 && teamsvc.ListenerUp(a)
	})
	m, err := b.Send(ctx, teamsvc.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note"})
	if err != nil {
		t.Fatal(err)
	}
	r := within(t, "receiver woken after the reconnect", done)
	if r.err != nil || len(r.res.Items) != 1 || r.res.Items[0].Message.Seq != m.Seq {
		t.Fatalf("receiver got %v %+v", r.err, r.res)
	}
}
