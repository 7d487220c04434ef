package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Failure learning over REST: events from a session, the trace and its
// pattern, the check before the next run, a trace recorded whole, the
// reviews, and typed errors.
func TestTracesOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	at := func(s int) string { return start.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano) }
	fail := "--- FAIL: TestLoad (0.00s)\n    load_test.go:14: open testdata/app.toml: no such file or directory\nFAIL\tweb/config\t0.01s\n"
	events := []map[string]any{
		{"kind": "command", "time": at(1), "command": "go test ./config/", "exit_code": 1, "output": fail},
		{"kind": "edit", "time": at(2), "path": "config/testdata/app.toml"},
		{"kind": "command", "time": at(3), "command": "go test ./config/", "exit_code": 1, "output": fail},
		{"kind": "edit", "time": at(4), "path": "config/testdata/app.toml"},
		{"kind": "command", "time": at(5), "command": "go test ./config/", "exit_code": 0, "output": "ok  \tweb/config\t0.01s"},
	}
	res := b.must(b.post("/api/v1/traces/events", map[string]any{"project": "web", "session_id": "s1", "events": events}), http.StatusOK).json(t)
	if ups := res["updates"].([]any); len(ups) != 3 || ups[2].(map[string]any)["kind"] != "closed" {
		t.Fatalf("updates %v", res)
	}
	list := b.must(b.get("/api/v1/traces?project=web&status=succeeded"), http.StatusOK).json(t)
	items := list["items"].([]any)
	if list["total"].(float64) != 1 || len(items[0].(map[string]any)["attempts"].([]any)) != 3 {
		t.Fatalf("traces %v", list)
	}
	id := items[0].(map[string]any)["id"].(string)
	b.must(b.get("/api/v1/traces/"+id+"?project=web"), http.StatusOK)
	pats := b.must(b.get("/api/v1/failure-patterns?project=web&command_family=go+test"), http.StatusOK).json(t)
	if pats["total"].(float64) != 1 {
		t.Fatalf("patterns %v", pats)
	}
	pid := pats["items"].([]any)[0].(map[string]any)["id"].(string)
	b.must(b.get("/api/v1/failure-patterns/"+pid+"?project=web"), http.StatusOK)
	chk := b.must(b.post("/api/v1/traces/check", map[string]any{"project": "web", "session_id": "s2", "command": "go test ./config/"}), http.StatusOK).json(t)
	if ws := chk["warnings"].([]any); len(ws) != 1 || !strings.Contains(chk["context"].(string), "app.toml") {
		t.Fatalf("check %v", chk)
	}
	rec := b.must(b.post("/api/v1/traces", map[string]any{"project": "web", "trace": map[string]any{"skill_id": "skill:deploy",
		"attempts": []map[string]any{{"timestamp": at(10), "error": "Error: connect ECONNREFUSED 127.0.0.1:5432"},
			{"timestamp": at(20), "success": true, "fix_applied": "start the database first", "fix_source": "user_hint"}}}}), http.StatusCreated).json(t)
	if rec["created"] != true || rec["trace"].(map[string]any)["final_success"] != true {
		t.Fatalf("record %v", rec)
	}
	b.must(b.get("/api/v1/trace-skills?project=web"), http.StatusOK)
	tr := b.must(b.post("/api/v1/reviews/task", map[string]any{"project": "web", "task_id": "s1"}), http.StatusOK).json(t)
	if tr["traces"].(float64) != 1 {
		t.Fatalf("task review %v", tr)
	}
	b.clock.Advance(48 * time.Hour)
	run := b.must(b.post("/api/v1/reviews/run", map[string]any{"project": "web", "kind": "weekly"}), http.StatusOK).json(t)
	rid := run["review"].(map[string]any)["id"].(string)
	md := b.must(b.do(req{method: "GET", path: "/api/v1/reviews/" + rid + "?project=web", header: map[string]string{"Accept": "text/markdown"}}), http.StatusOK)
	if !strings.HasPrefix(string(md.body), "# kaizen weekly review") {
		t.Errorf("report %s", md.body)
	}
	revs := b.must(b.get("/api/v1/reviews?project=web"), http.StatusOK).json(t)
	if len(revs["items"].([]any)) != 2 {
		t.Errorf("reviews %v", revs)
	}
	for _, c := range []struct {
		r     response
		code  string
		field string
	}{
		{b.post("/api/v1/traces/events", map[string]any{"project": "web", "session_id": "s1", "events": []map[string]any{{"kind": "nope", "time": at(99)}}}), "invalid_input", "events[0].event.kind"},
		{b.post("/api/v1/traces/check", map[string]any{"command": ""}), "invalid_input", "command"},
		{b.post("/api/v1/reviews/run", map[string]any{"kind": "hourly"}), "invalid_input", "kind"},
		{b.get("/api/v1/traces/nope?project=web"), "not_found", ""},
		{b.get("/api/v1/traces?status=maybe"), "invalid_input", "status"},
	} {
		e := c.r.errorOf(t)
		if e.Error.Code != c.code || (c.field != "" && e.Error.Field != c.field) {
			t.Errorf("want %s on %q: %d %+v", c.code, c.field, c.r.status, e)
		}
	}
}
