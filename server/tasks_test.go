package server_test

import (
	"net/http"
	"testing"
	"time"
)

// Task events over REST, then an outcome recorded with only the task id
// and success: duration, retries and errors come from the tracked task.
func TestTrackedTaskOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ev := func(kind, text, tool, msg string) map[string]any {
		t.Helper()
		return b.must(b.post("/api/v1/tasks/events", map[string]any{"project": "web", "bead_id": "sess-1", "kind": kind,
			"text": text, "tool_name": tool, "message": msg, "source": "claude"}), http.StatusOK).json(t)
	}
	ev("start", "", "", "")
	b.clock.Advance(time.Minute)
	ev("prompt", "add a login page", "", "")
	res := ev("tool_failure", "", "Bash", "go test: FAIL")
	if res["error"].(map[string]any)["error_type"] != "tool_failure" {
		t.Fatalf("tool failure not recorded as an error: %v", res)
	}
	b.clock.Advance(time.Minute)
	ev("prompt", "tests still fail", "", "")
	b.clock.Advance(time.Minute)
	ev("stop", "", "", "")
	task := b.must(b.get("/api/v1/tasks/sess-1?project=web"), http.StatusOK).json(t)
	if task["duration_ms"].(float64) != 180000 || task["retry_count"].(float64) != 1 || task["error_count"].(float64) != 1 {
		t.Fatalf("task %v", task)
	}
	out := b.must(b.post("/api/v1/outcomes", map[string]any{"project": "web", "bead_id": "sess-1", "success": true}), http.StatusCreated).json(t)
	o := out["outcome"].(map[string]any)
	if o["duration_ms"].(float64) != 180000 || o["retry_count"].(float64) != 1 || o["error_count"].(float64) != 1 {
		t.Fatalf("outcome %v", o)
	}
	list := b.must(b.get("/api/v1/tasks?project=web&open=true"), http.StatusOK).json(t)
	if list["total"].(float64) != 0 {
		t.Errorf("the outcome must end the task: %v", list)
	}
	if e := b.post("/api/v1/tasks/events", map[string]any{"bead_id": "s", "kind": "explode"}).errorOf(t); e.Error.Field != "kind" {
		t.Errorf("bad kind: %+v", e)
	}
	b.must(b.get("/api/v1/tasks/nope?project=web"), http.StatusNotFound)
}

// A task closed over REST gets its inferred outcome once; the idle sweep
// closes the tasks idle for longer than its timeout.
func TestCloseTaskOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, ev := range []map[string]any{
		{"kind": "prompt", "text": "split by feature", "bead_id": "s1"},
		{"kind": "tool_failure", "tool_name": "Bash", "message": "FAIL", "signal": "test_fail", "bead_id": "s1"},
		{"kind": "prompt", "text": "rename it", "bead_id": "s2"},
	} {
		ev["project"] = "web"
		b.must(b.post("/api/v1/tasks/events", ev), http.StatusOK)
	}
	res := b.must(b.post("/api/v1/tasks/close", map[string]any{"project": "web", "bead_id": "s1", "reason": "session_end"}), http.StatusOK).json(t)
	o := res["outcome"].(map[string]any)["outcome"].(map[string]any)
	if o["inferred"] != true || o["success"] != false || len(o["patterns"].([]any)) != 1 {
		t.Fatalf("closed task %v", res)
	}
	again := b.must(b.post("/api/v1/tasks/close", map[string]any{"project": "web", "bead_id": "s1"}), http.StatusOK).json(t)
	if again["outcome"] != nil || again["skipped"] == "" {
		t.Fatalf("closing again %v", again)
	}
	b.must(b.post("/api/v1/tasks/close", map[string]any{"project": "web", "bead_id": "nope"}), http.StatusNotFound)
	b.clock.Advance(2 * time.Hour)
	idle := b.must(b.post("/api/v1/tasks/close-idle", map[string]any{"project": "web", "idle_ms": 3600000}), http.StatusOK).json(t)
	if closed := idle["closed"].([]any); len(closed) != 1 || closed[0].(map[string]any)["task"].(map[string]any)["bead_id"] != "s2" {
		t.Fatalf("idle sweep %v", idle)
	}
	b.must(b.post("/api/v1/tasks/close-idle", map[string]any{"project": "web", "idle_ms": 0}), http.StatusBadRequest)
}
