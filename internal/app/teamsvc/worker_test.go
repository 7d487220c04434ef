package teamsvc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

func TestCommandWorkerCompletesFailsAndRunsGates(t *testing.T) {
	b := setup(t, "sqlite")
	dir := t.TempDir()
	b.add(kaizen.TeamTaskInput{ID: "ok", Subject: "echo json"},
		kaizen.TeamTaskInput{ID: "gated", Subject: "gate fails", BlockedBy: []string{"ok"}, Gate: "test -f missing-file"},
		kaizen.TeamTaskInput{ID: "text", Subject: "plain output", BlockedBy: []string{"ok"}})
	// The command reads the task on stdin and its id from the environment.
	cmd := `read -r task; case "$KAIZEN_TASK_ID" in ok) echo '{"done":"'$KAIZEN_TASK_ID'"}';; *) echo "hello from $KAIZEN_MEMBER";; esac`
	st, err := b.E.RunWorker(b.ctx, kaizen.WorkerOptions{Team: "alpha", Member: "bob", Command: cmd, Dir: dir, Once: true, WaitSeconds: 0})
	if err != nil {
		t.Fatal(err)
	}
	if st.Claimed != 3 || st.Completed != 2 || st.Failed != 1 {
		t.Fatalf("stats %+v", st)
	}
	if r := b.task("ok").Result; string(r) != `{"done":"ok"}` {
		t.Errorf("result of ok: %s", r)
	}
	if r := b.task("text").Result; string(r) != `{"output":"hello from bob"}` {
		t.Errorf("result of text: %s", r)
	}
	if g := b.task("gated"); g.Status != team.StatusFailed || !strings.Contains(string(g.Result), "gate exit 1") {
		t.Errorf("gated: %s %s", g.Status, g.Result)
	}
}

func TestCommandWorkerTimeoutKillsAScriptIgnoringSIGTERM(t *testing.T) {
	b := setup(t, "sqlite")
	b.add(kaizen.TeamTaskInput{ID: "stuck", Subject: "never ends"})
	// The script and its child ignore SIGTERM; the group is killed after
	// the grace period. The assertions hold whatever the machine's speed.
	cmd := `trap '' TERM; sleep 600 & wait; sleep 600`
	done := make(chan kaizen.WorkerStats, 1)
	go func() {
		st, err := b.E.RunWorker(b.ctx, kaizen.WorkerOptions{Team: "alpha", Member: "bob", Command: cmd, Once: true,
			Timeout: 50 * time.Millisecond, Grace: 50 * time.Millisecond, HeartbeatEvery: time.Hour})
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	select {
	case st := <-done:
		if st.Failed != 1 {
			t.Fatalf("stats %+v", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("the worker did not kill the command")
	}
	if g := b.task("stuck"); g.Status != team.StatusFailed || !strings.Contains(string(g.Result), "timed out") {
		t.Errorf("stuck: %s %s", g.Status, g.Result)
	}
}

func TestFuncWorkerAndCancellationDropsWork(t *testing.T) {
	b := setup(t, "sqlite")
	b.add(kaizen.TeamTaskInput{ID: "f", Subject: "func"})
	st, err := b.E.RunWorker(b.ctx, kaizen.WorkerOptions{Team: "alpha", Member: "ann", Once: true,
		Func: func(ctx context.Context, tk team.Task) (kaizen.WorkResult, error) {
			return kaizen.WorkResult{Result: json.RawMessage(`{"by":"func"}`)}, nil
		}})
	if err != nil || st.Completed != 1 {
		t.Fatalf("%v %+v", err, st)
	}
	// A task cancelled while it runs: the heartbeat answers cancelled, the
	// work's context ends and nothing is reported.
	b.add(kaizen.TeamTaskInput{ID: "c", Subject: "cancel me"})
	st, err = b.E.RunWorker(b.ctx, kaizen.WorkerOptions{Team: "alpha", Member: "ann", Once: true, HeartbeatEvery: time.Millisecond,
		Func: func(ctx context.Context, tk team.Task) (kaizen.WorkResult, error) {
			if _, err := b.E.UpdateTeamTask(context.Background(), kaizen.UpdateTeamTaskInput{Team: "alpha", Task: tk.ID, Status: team.StatusCancelled}); err != nil {
				return kaizen.WorkResult{}, err
			}
			<-ctx.Done()
			return kaizen.WorkResult{Result: json.RawMessage(`{"late":true}`)}, nil
		}})
	if err != nil || st.Dropped != 1 {
		t.Fatalf("%v %+v", err, st)
	}
	if c := b.task("c"); c.Status != team.StatusCancelled || c.Result != nil {
		t.Errorf("cancelled task: %s %s", c.Status, c.Result)
	}
}
