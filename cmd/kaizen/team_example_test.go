package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestThreeScriptedWorkersExample runs examples/team/three-workers.sh (the
// runnable example of docs/team.md): under `kaizen serve`, a planner, an
// executor and a tester started before the graph exists finish plan →
// impl → test (gated); each task is completed on its first attempt by
// the member of its role, with the result its script printed.
func TestThreeScriptedWorkersExample(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	const project = "three-e2e"
	home, work, out := runTeamExample(t, "three-workers.sh", project, 10*time.Minute)
	if !strings.Contains(out, "kaizen serving on ") || !strings.Contains(out, "three workers finished the graph") {
		t.Fatalf("output:\n%s", out)
	}
	c := exec.Command(bin, "--home", home, "--project", project, "--json", "team", "task", "list", "--team", "web")
	raw, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []struct {
			ID       string          `json:"id"`
			Status   string          `json:"status"`
			Attempts int             `json:"attempts"`
			Result   json.RawMessage `json:"result"`
			Lease    struct {
				Holder string `json:"holder"`
				Epoch  int64  `json:"epoch"`
			} `json:"lease"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"plan": `"plan":"Plan the login change: one function"`, "impl": `"files":["impl.txt"]`, "test": `"passed":true`}
	if len(page.Items) != 3 {
		t.Fatalf("%d tasks: %s", len(page.Items), raw)
	}
	for _, tk := range page.Items {
		var res bytes.Buffer
		_ = json.Compact(&res, tk.Result)
		tk.Result = res.Bytes()
		if tk.Status != "completed" || tk.Attempts != 1 || tk.Lease.Epoch != 1 || !strings.Contains(string(tk.Result), want[tk.ID]) {
			t.Errorf("task %s: %s, attempts %d, epoch %d, result %s", tk.ID, tk.Status, tk.Attempts, tk.Lease.Epoch, tk.Result)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "impl.txt")); err != nil || !strings.Contains(string(b), "Login") {
		t.Errorf("the executor's file: %v %q", err, b)
	}
}
