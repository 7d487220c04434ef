package server_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestTeamOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	agent := map[string]any{"kind": "agent"}
	b.must(b.post("/api/v1/teams", map[string]any{"name": "alpha", "members": []any{
		map[string]any{"name": "lead", "role": "coordinator", "worker": agent},
		map[string]any{"name": "ann", "role": "executor", "worker": agent}}}), http.StatusCreated)
	b.must(b.post("/api/v1/teams/alpha/tasks", map[string]any{"tasks": []any{
		map[string]any{"id": "plan", "subject": "plan"}, map[string]any{"id": "impl", "subject": "impl", "blocked_by": []string{"plan"}}}}), http.StatusOK)
	if e := b.post("/api/v1/teams/alpha/tasks", map[string]any{"team": "beta", "tasks": []any{map[string]any{"subject": "x"}}}).errorOf(t); e.Error.Code != "invalid_input" {
		t.Fatalf("team in body contradicting the path: %+v", e)
	}
	if e := b.post("/api/v1/teams/alpha/tasks", map[string]any{"tasks": []any{
		map[string]any{"id": "x", "subject": "x", "blocked_by": []string{"y"}}, map[string]any{"id": "y", "subject": "y", "blocked_by": []string{"x"}}}}).errorOf(t); e.Error.Code != "invalid_input" {
		t.Fatalf("cycle: %+v", e)
	}
	claim := b.must(b.post("/api/v1/teams/alpha/claim", map[string]any{"member": "ann"}), http.StatusOK).json(t)
	task := claim["task"].(map[string]any)
	if task["id"] != "plan" || claim["epoch"].(float64) != 1 {
		t.Fatalf("claim %v", claim)
	}
	b.must(b.post("/api/v1/teams/alpha/heartbeat", map[string]any{"member": "ann", "task": "plan", "epoch": 1, "progress": map[string]any{"percent": 10}}), http.StatusOK)
	if e := b.post("/api/v1/teams/alpha/report", map[string]any{"member": "ann", "task": "plan", "epoch": 7, "status": "completed"}).errorOf(t); e.Error.Code != "conflict" {
		t.Fatalf("stale epoch: %+v", e)
	}
	b.must(b.post("/api/v1/teams/alpha/report", map[string]any{"member": "ann", "task": "plan", "epoch": 1, "status": "completed"}), http.StatusOK)
	b.must(b.post("/api/v1/teams/alpha/messages", map[string]any{"from": "lead", "to": "ann", "type": "fix_required", "data": map[string]any{"suggestion": "x"}}), http.StatusOK)
	inbox := b.must(b.post("/api/v1/teams/alpha/inbox", map[string]any{"member": "ann"}), http.StatusOK).json(t)
	if items := inbox["items"].([]any); len(items) != 1 {
		t.Fatalf("inbox %v", inbox)
	}
	b.must(b.post("/api/v1/teams/alpha/ack", map[string]any{"member": "ann", "seqs": []int{1}}), http.StatusOK)
	var tasks struct {
		Project string           `json:"project"`
		Items   []map[string]any `json:"items"`
		Total   int              `json:"total"`
		Limit   int              `json:"limit"`
		Offset  int              `json:"offset"`
	}
	b.must(b.get("/api/v1/teams/alpha/tasks?status=pending"), http.StatusOK).decode(t, &tasks)
	if len(tasks.Items) != 1 || tasks.Items[0]["id"] != "impl" || tasks.Total != 1 || tasks.Project == "" {
		t.Fatalf("pending tasks %+v", tasks)
	}
	b.must(b.get("/api/v1/teams/alpha/tasks?limit=1&offset=1"), http.StatusOK).decode(t, &tasks)
	if len(tasks.Items) != 1 || tasks.Items[0]["id"] != "impl" || tasks.Total != 2 || tasks.Limit != 1 || tasks.Offset != 1 {
		t.Fatalf("second page of tasks %+v", tasks)
	}
	// Every team listing answers the one page shape.
	for path, total := range map[string]float64{"/api/v1/teams": 1, "/api/v1/teams/alpha/messages?after=0": 1,
		"/api/v1/teams/alpha/events?limit=1": -1, "/api/v1/runs": 0} {
		page := b.must(b.get(path), http.StatusOK).json(t)
		items, ok := page["items"].([]any)
		if !ok || page["project"] == "" || page["limit"] == nil || page["offset"] == nil {
			t.Fatalf("%s: not a page: %v", path, page)
		}
		if got := page["total"].(float64); total >= 0 && got != total || total < 0 && (got <= 1 || len(items) != 1) {
			t.Errorf("%s: total %v (%d items)", path, got, len(items))
		}
	}
	b.must(b.get("/api/v1/teams/alpha/tasks/impl"), http.StatusOK)
	b.must(b.do(req{method: "PATCH", path: "/api/v1/teams/alpha/tasks/impl", body: map[string]any{"status": "cancelled"}}), http.StatusOK)
	show := b.must(b.get("/api/v1/teams/alpha"), http.StatusOK).json(t)
	if show["tasks"].(map[string]any)["cancelled"].(float64) != 1 {
		t.Fatalf("show %v", show)
	}
	b.must(b.post("/api/v1/teams/alpha/dissolve", nil), http.StatusOK)
	if e := b.post("/api/v1/teams/alpha/claim", map[string]any{"member": "ann"}).errorOf(t); e.Error.Code != "conflict" {
		t.Fatalf("claim in a dissolved team: %+v", e)
	}
}

func TestPatternRunsOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	agent := map[string]any{"kind": "agent"}
	b.must(b.post("/api/v1/teams", map[string]any{"name": "alpha", "members": []any{
		map[string]any{"name": "ann", "role": "executor", "worker": agent}, map[string]any{"name": "rev", "role": "reviewer", "worker": agent}}}), http.StatusCreated)
	run := b.must(b.post("/api/v1/teams/alpha/runs", map[string]any{"pattern": "CP-2", "input": map[string]any{"artifact": "login.go"}}), http.StatusOK).json(t)
	id := run["run"].(map[string]any)["id"].(string)
	if run["run"].(map[string]any)["state"] != "REVIEW" || run["mermaid"] == "" {
		t.Fatalf("run %v", run)
	}
	list := b.must(b.get("/api/v1/runs?team=alpha&active=true"), http.StatusOK).body
	if !strings.Contains(string(list), id) {
		t.Fatalf("list %s", list)
	}
	b.must(b.get("/api/v1/runs/"+id), http.StatusOK)
	got := b.must(b.post("/api/v1/runs/"+id+"/cancel", map[string]any{"reason": "changed plans"}), http.StatusOK).json(t)
	if got["finished"] != true {
		t.Fatalf("cancelled run %v", got)
	}
	if e := b.post("/api/v1/teams/alpha/runs", map[string]any{"pattern": "CP-11"}).errorOf(t); e.Error.Code != "invalid_input" {
		t.Fatalf("unknown pattern: %+v", e)
	}
	// a composition: the seed's high-risk template, its first step CP-4
	comp := b.must(b.post("/api/v1/teams/alpha/compositions", map[string]any{"spec": map[string]any{"template": "high-risk",
		"inputs": map[string]any{"CP-4": map[string]any{"proposal": map[string]any{"id": "p", "title": "gateway"}, "voters": []string{"ann", "rev"}},
			"CP-6": map[string]any{"plan": []any{map[string]any{"id": "a"}}}}}}), http.StatusOK).json(t)
	if r := comp["run"].(map[string]any); r["pattern"] != "CP-4" || r["compose"].(map[string]any)["name"] != "high-risk" {
		t.Fatalf("composition %v", comp)
	}
	if e := b.post("/api/v1/teams/alpha/compositions", map[string]any{"spec": map[string]any{"template": "nope"}}).errorOf(t); e.Error.Code != "invalid_input" {
		t.Fatalf("unknown template: %+v", e)
	}
	sel := b.must(b.post("/api/v1/patterns/select", map[string]any{"task_type": "review", "complexity": "low", "risk_level": "high"}), http.StatusOK).json(t)
	if len(sel["patterns"].([]any)) != 4 {
		t.Fatalf("selection %v", sel)
	}
}
