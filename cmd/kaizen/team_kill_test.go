package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/testkit"
)

// TestKilledWorkerTaskComesBackAfterItsLease: a `kaizen worker run`
// process is killed with SIGKILL (with its command, the whole process
// group) while its command runs. Its lease (60 s) holds the task until it
// ends: on the injected clock (--now) a claim 59 s after the grant gets
// nothing, one at the lease's end gets the task with the attempt counted
// (attempts 2, epoch 2), and the dead worker's fencing token is refused.
func TestKilledWorkerTaskComesBackAfterItsLease(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	home, work := t.TempDir(), t.TempDir()
	t0 := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }
	kz := func(now time.Duration, args ...string) []byte {
		t.Helper()
		c := exec.Command(bin, append([]string{"--home", home, "--project", "killtest", "--now", at(now)}, args...)...)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("kaizen %v: %v\n%s", args, err, stderr.String())
		}
		return out
	}
	kz(0, "team", "create", "crew", "--member", "w1:worker", "--member", "w2:worker")
	kz(0, "team", "task", "add", "--team", "crew", "--id", "job", "a long job")

	started := filepath.Join(work, "started")
	worker := exec.Command(bin, "--home", home, "--project", "killtest", "--now", at(0), "worker", "run", "--team", "crew",
		"--member", "w1", "--once", "--cmd", "touch "+started+"; exec sleep 600")
	worker.Dir = work
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var wlog bytes.Buffer
	worker.Stdout, worker.Stderr = &wlog, &wlog
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-worker.Process.Pid, syscall.SIGKILL) })
	testkit.Eventually(t, "the worker's command running", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	if err := syscall.Kill(-worker.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := worker.Wait(); err == nil {
		t.Fatalf("the killed worker exited cleanly:\n%s", wlog.String())
	}

	type claim struct {
		Task *struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Attempts int    `json:"attempts"`
		} `json:"task"`
		Epoch int64 `json:"epoch"`
	}
	claimAt := func(now time.Duration) claim {
		t.Helper()
		var c claim
		if err := json.Unmarshal(kz(now, "--json", "team", "task", "claim", "--team", "crew", "--member", "w2"), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := claimAt(59 * time.Second); c.Task != nil {
		t.Fatalf("claimed while the dead worker's lease holds: %+v", c.Task)
	}
	c := claimAt(60 * time.Second)
	if c.Task == nil || c.Task.ID != "job" || c.Task.Attempts != 2 || c.Epoch != 2 || c.Task.Status != "in_progress" {
		t.Fatalf("claim at the lease's end: %+v epoch %d; want job, attempt 2, epoch 2", c.Task, c.Epoch)
	}
	// the dead worker's token is stale
	stale := exec.Command(bin, "--home", home, "--project", "killtest", "--now", at(61*time.Second), "team", "task", "complete",
		"--team", "crew", "--member", "w1", "--task", "job", "--epoch", "1")
	if out, err := stale.CombinedOutput(); err == nil {
		t.Errorf("a report with the dead worker's epoch was accepted:\n%s", out)
	}
}
