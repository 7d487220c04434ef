package team

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func tk(id string, st TaskStatus, deps ...string) Task {
	return Task{ID: id, Team: "alpha", Subject: "S-" + id, Status: st, BlockedBy: deps}
}

func TestValidateGraphRefusesCyclesNamingThem(t *testing.T) {
	t.Parallel()
	err := ValidateGraph([]Task{tk("a", StatusPending, "c"), tk("b", StatusPending, "a"), tk("c", StatusPending, "b"), tk("d", StatusPending)})
	var ce *CycleError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCycle) {
		t.Fatalf("want cycle error, got %v", err)
	}
	if want := []string{"a", "c", "b", "a"}; !slices.Equal(ce.Cycle, want) {
		t.Fatalf("cycle %v, want %v", ce.Cycle, want)
	}
	if err := ValidateGraph([]Task{tk("a", StatusPending, "a")}); !errors.Is(err, ErrCycle) {
		t.Fatalf("self dependency: %v", err)
	}
	if err := ValidateGraph([]Task{tk("a", StatusPending, "zz")}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown dependency: %v", err)
	}
	if err := CheckAddTask([]Task{tk("a", StatusPending, "b"), tk("b", StatusPending)}, tk("c", StatusPending, "a")); err != nil {
		t.Fatalf("valid add: %v", err)
	}
}

func TestValidateTaskBounds(t *testing.T) {
	t.Parallel()
	long := make([]byte, MaxSubjectLen+1)
	for i := range long {
		long[i] = 'x'
	}
	cases := map[string]Task{
		"no subject":   {ID: "a", Status: StatusPending},
		"long subject": {ID: "a", Subject: string(long), Status: StatusPending},
		"bad status":   {ID: "a", Subject: "s", Status: "done"},
		"bad metadata": {ID: "a", Subject: "s", Status: StatusPending, Metadata: []byte("{")},
		"dup dep":      {ID: "a", Subject: "s", Status: StatusPending, BlockedBy: []string{"b", "b"}},
		"bad owner":    {ID: "a", Subject: "s", Status: StatusPending, Owner: "no spaces"},
	}
	for name, tc := range cases {
		if err := ValidateTask(tc); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: want invalid, got %v", name, err)
		}
	}
	if err := ValidateTask(Task{ID: "a", Subject: string(long[:MaxSubjectLen]), Status: StatusPending}); err != nil {
		t.Errorf("subject at the bound: %v", err)
	}
}

func TestReadyOrderAndDependencies(t *testing.T) {
	t.Parallel()
	a := tk("a", StatusCompleted)
	b := tk("b", StatusPending, "a")
	b.CreatedAt = t0.Add(2 * time.Second)
	c := tk("c", StatusPending)
	c.CreatedAt = t0.Add(time.Second)
	d := tk("d", StatusPending, "b")
	e := tk("e", StatusPending)
	e.Paused = true
	f := tk("f", StatusPending)
	f.CreatedAt = t0.Add(time.Second) // same time as c: id breaks the tie
	var ids []string
	for _, x := range Ready([]Task{d, b, a, c, e, f}) {
		ids = append(ids, x.ID)
	}
	if want := []string{"c", "f", "b"}; !slices.Equal(ids, want) {
		t.Fatalf("ready %v, want %v", ids, want)
	}
}

func TestPropagateBlocksAndUnblocks(t *testing.T) {
	t.Parallel()
	tasks := []Task{tk("a", StatusFailed), tk("b", StatusPending, "a"), tk("c", StatusPending, "b"), tk("d", StatusPending), tk("x", StatusBlocked)}
	ch := Propagate(tasks)
	if len(ch) != 2 || ch[0].Task != "b" || ch[1].Task != "c" || ch[0].To != StatusBlocked {
		t.Fatalf("changes %+v", ch)
	}
	apply := func(tasks []Task, ch []BlockChange) []Task {
		out := slices.Clone(tasks)
		for _, c := range ch {
			for i := range out {
				if out[i].ID == c.Task {
					out[i].Status = c.To
					out[i].BlockedCause = c.Cause
					if c.To == StatusPending {
						out[i].BlockedCause = ""
					}
				}
			}
		}
		return out
	}
	tasks = apply(tasks, ch)
	if again := Propagate(tasks); len(again) != 0 {
		t.Fatalf("not a fixed point: %+v", again)
	}
	tasks[0].Status = StatusPending // retry of a
	ch = Propagate(tasks)
	if len(ch) != 2 || ch[0].To != StatusPending || ch[1].To != StatusPending {
		t.Fatalf("unblock %+v", ch)
	}
	for _, c := range ch {
		if c.Task == "x" {
			t.Fatal("an explicitly blocked task was unblocked")
		}
	}
	tasks = apply(tasks, ch)
	if again := Propagate(tasks); len(again) != 0 {
		t.Fatalf("not a fixed point after unblock: %+v", again)
	}
}

func TestTopoLayers(t *testing.T) {
	t.Parallel()
	items := []PlanItem{{ID: "api"}, {ID: "db"}, {ID: "svc", BlockedBy: []string{"api", "db"}}, {ID: "ui", BlockedBy: []string{"api"}}, {ID: "e2e", BlockedBy: []string{"svc", "ui"}}}
	layers, err := TopoLayers(items)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, l := range layers {
		var ids []string
		for _, it := range l {
			ids = append(ids, it.ID)
		}
		got = append(got, ids)
	}
	want := [][]string{{"api", "db"}, {"svc", "ui"}, {"e2e"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("layers %v, want %v", got, want)
	}
	if _, err := TopoLayers([]PlanItem{{ID: "a", BlockedBy: []string{"b"}}, {ID: "b", BlockedBy: []string{"a"}}}); !errors.Is(err, ErrCycle) {
		t.Fatalf("cycle: %v", err)
	}
}

func TestTransitionTable(t *testing.T) {
	t.Parallel()
	allowed := map[[2]TaskStatus]bool{
		{StatusPending, StatusInProgress}: true, {StatusPending, StatusBlocked}: true, {StatusPending, StatusCancelled}: true,
		{StatusInProgress, StatusCompleted}: true, {StatusInProgress, StatusFailed}: true, {StatusInProgress, StatusPending}: true,
		{StatusInProgress, StatusBlocked}: true, {StatusInProgress, StatusCancelled}: true,
		{StatusBlocked, StatusPending}: true, {StatusBlocked, StatusCancelled}: true,
		{StatusFailed, StatusPending}: true, {StatusFailed, StatusCancelled}: true,
	}
	for _, from := range TaskStatuses {
		for _, to := range TaskStatuses {
			err := CheckTransition("t", from, to)
			if allowed[[2]TaskStatus{from, to}] != (err == nil) {
				t.Errorf("%s → %s: err %v", from, to, err)
			}
			var te *TransitionError
			if err != nil && (!errors.As(err, &te) || !errors.Is(err, ErrTransition)) {
				t.Errorf("%s → %s: untyped error %v", from, to, err)
			}
		}
	}
}

func TestClaimEligibility(t *testing.T) {
	t.Parallel()
	dev := Member{Name: "dev", Role: RoleExecutor, Capabilities: []string{"go", "sql"}, Worker: Worker{Kind: WorkerAgent}}
	qa := Member{Name: "qa", Role: RoleTester, Worker: Worker{Kind: WorkerAgent}}
	task := tk("t", StatusPending)
	task.Role = RoleExecutor
	task.Capabilities = []string{"go"}
	if _, err := Claim(task, nil, qa, t0, time.Minute); !errors.Is(err, ErrNotEligible) {
		t.Fatalf("wrong role: %v", err)
	}
	task.Capabilities = []string{"go", "rust"}
	if _, err := Claim(task, nil, dev, t0, time.Minute); !errors.Is(err, ErrNotEligible) {
		t.Fatalf("missing capability: %v", err)
	}
	task.Capabilities = []string{"go"}
	owned := task
	owned.Owner = "someone"
	if _, err := Claim(owned, nil, dev, t0, time.Minute); !errors.Is(err, ErrNotEligible) {
		t.Fatalf("owned by another: %v", err)
	}
	dep := task
	dep.BlockedBy = []string{"x"}
	if _, err := Claim(dep, map[string]TaskStatus{"x": StatusInProgress}, dev, t0, time.Minute); !errors.Is(err, ErrNotReady) {
		t.Fatalf("dependency not done: %v", err)
	}
	got, err := Claim(dep, map[string]TaskStatus{"x": StatusCompleted}, dev, t0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusInProgress || got.Lease.Holder != "dev" || got.Lease.Epoch != 1 || got.Attempts != 1 || !got.Lease.ExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("claimed task %+v", got)
	}
	if _, err := Claim(got, nil, dev, t0, time.Minute); !errors.Is(err, ErrNotReady) {
		t.Fatalf("double claim: %v", err)
	}
}

func TestLeaseFencingHeartbeatAndExpiry(t *testing.T) {
	t.Parallel()
	task, err := Grant(tk("t", StatusPending), "w1", t0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Heartbeat renews and carries progress.
	task, ans, err := Heartbeat(task, "w1", 1, &Progress{Percent: 40, Note: "half"}, t0.Add(50*time.Second), time.Minute)
	if err != nil || ans.Cancelled || !task.Lease.ExpiresAt.Equal(t0.Add(110*time.Second)) || task.Lease.Progress.Percent != 40 {
		t.Fatalf("heartbeat: %v %+v %+v", err, ans, task.Lease)
	}
	if _, _, err := Heartbeat(task, "w1", 1, &Progress{Percent: 101}, t0, time.Minute); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad progress: %v", err)
	}
	// Not expired one nanosecond before; expired exactly at ExpiresAt.
	if _, ok := Expire(task, task.Lease.ExpiresAt.Add(-1), 0); ok {
		t.Fatal("expired early")
	}
	exp, ok := Expire(task, task.Lease.ExpiresAt, 0)
	if !ok || exp.Status != StatusPending || exp.Lease.Held() || exp.Lease.Epoch != 1 || exp.Attempts != 1 {
		t.Fatalf("expire: %+v", exp)
	}
	if len(Ready([]Task{exp})) != 1 {
		t.Fatal("expired task is not back in the ready set")
	}
	// The late holder is fenced off after a re-grant.
	re, err := Grant(exp, "w2", t0.Add(3*time.Minute), time.Minute)
	if err != nil || re.Lease.Epoch != 2 || re.Attempts != 2 {
		t.Fatalf("regrant: %v %+v", err, re)
	}
	_, err = Report(re, "w1", 1, StatusCompleted, []byte(`{}`), t0.Add(3*time.Minute))
	var fe *FenceError
	if !errors.As(err, &fe) || fe.Got != 1 || fe.Current != 2 || !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("stale report: %v", err)
	}
	if _, err := Report(re, "w1", 2, StatusCompleted, nil, t0.Add(3*time.Minute)); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("wrong holder: %v", err)
	}
	if _, err := Report(re, "w2", 2, StatusCompleted, nil, t0.Add(4*time.Minute)); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("expired report: %v", err)
	}
	done, err := Report(re, "w2", 2, StatusCompleted, []byte(`{"ok":true}`), t0.Add(3*time.Minute+time.Second))
	if err != nil || done.Status != StatusCompleted || string(done.Result) != `{"ok":true}` || done.Lease.Held() {
		t.Fatalf("report: %v %+v", err, done)
	}
	// Max attempts: the expired task fails instead of returning.
	if f, ok := Expire(re, re.Lease.ExpiresAt, 2); !ok || f.Status != StatusFailed {
		t.Fatalf("max attempts: %+v", f)
	}
	// A cancelled task answers cancelled to any heartbeat.
	c, _ := Transition(re, StatusCancelled, t0.Add(3*time.Minute))
	if _, ans, err := Heartbeat(c, "w2", 2, nil, t0.Add(3*time.Minute), time.Minute); err != nil || !ans.Cancelled {
		t.Fatalf("cancelled heartbeat: %v %+v", err, ans)
	}
}

func TestRecipientsAndDelivery(t *testing.T) {
	t.Parallel()
	team := Team{Name: "alpha", Members: []Member{{Name: "p", Role: RolePlanner}, {Name: "e1", Role: RoleExecutor}, {Name: "e2", Role: RoleExecutor}}}
	if got, _ := Recipients(team, "p", "all"); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Fatalf("all: %v", got)
	}
	if got, _ := Recipients(team, "p", "role:executor"); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Fatalf("role: %v", got)
	}
	if _, err := Recipients(team, "p", "role:tester"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nobody: %v", err)
	}
	d, ok := Deliver(Delivery{Seq: 1, Recipient: "e1"}, t0, time.Minute)
	if !ok || d.State != DeliveryDelivered || d.Deliveries != 1 {
		t.Fatalf("deliver %+v", d)
	}
	if _, ok := Deliver(d, t0.Add(59*time.Second), time.Minute); ok {
		t.Fatal("redelivered before the visibility timeout")
	}
	d, ok = Deliver(d, t0.Add(time.Minute), time.Minute)
	if !ok || d.Deliveries != 2 {
		t.Fatal("not redelivered after the visibility timeout")
	}
	d, _ = Advance(d, DeliveryAcknowledged, t0)
	if _, ok := Deliver(d, t0.Add(time.Hour), time.Minute); ok {
		t.Fatal("acknowledged message redelivered")
	}
	if _, err := Advance(d, DeliveryRead, t0); !errors.Is(err, ErrDelivery) {
		t.Fatalf("backwards: %v", err)
	}
	if err := CheckSeq(5, 5); err == nil {
		t.Fatal("seq not strictly increasing accepted")
	}
}

func TestCheckLimits(t *testing.T) {
	t.Parallel()
	l := Limits{ConcurrentCommandWorkers: 2, RunsPerHour: 10}
	if err := CheckLimits(l, Usage{CommandWorkers: 1}, Request{CommandWorkers: 1}); err != nil {
		t.Fatal(err)
	}
	err := CheckLimits(l, Usage{CommandWorkers: 2}, Request{CommandWorkers: 1})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "concurrent_command_workers" || !errors.Is(err, ErrLimit) {
		t.Fatalf("limit: %v", err)
	}
	if err := CheckLimits(Limits{}, Usage{RunsLastHour: 1e6}, Request{Runs: 1}); err != nil {
		t.Fatalf("unlimited: %v", err)
	}
}
