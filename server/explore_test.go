package server_test

import (
	"net/http"
	"testing"
)

func TestExplorationOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.do(req{method: "PUT", path: "/api/v1/explore/settings", body: map[string]any{"project": "web", "enabled": true,
		"strategy": "analyst", "budget_toml": "max_iterations = 4\nsearch_budget = 2\nsearch_budget_grace = 1\n"}}), http.StatusOK)
	got := b.must(b.get("/api/v1/explore/settings?project=web"), http.StatusOK).json(t)
	if got["enabled"] != true || got["strategy"] != "analyst" {
		t.Fatalf("settings %v", got)
	}
	round := []map[string]any{{"type": "tick"}, {"type": "tool_call", "name": "Grep", "args": map[string]any{"pattern": "x"}}, {"type": "end_round"}}
	var last map[string]any
	for range 8 {
		last = b.must(b.post("/api/v1/explore/events", map[string]any{"project": "web", "session_id": "s1", "auto_start": true, "events": round}), http.StatusOK).json(t)
		if last["session"].(map[string]any)["done"] == true {
			break
		}
	}
	if last["session"].(map[string]any)["done"] != true {
		t.Fatalf("session did not end within its budget: %v", last)
	}
	st := b.must(b.get("/api/v1/explore/sessions/s1?project=web"), http.StatusOK).json(t)
	if st["timeline"] == nil {
		t.Fatalf("state without timeline: %v", st)
	}
	list := b.must(b.get("/api/v1/explore/sessions?project=web&active=false"), http.StatusOK).json(t)
	if list["total"].(float64) != 1 {
		t.Fatalf("list %v", list)
	}
	tl := b.must(b.post("/api/v1/explore/replay", map[string]any{"strategy": "bootstrap", "events": round}), http.StatusOK).json(t)
	if len(tl["rounds"].([]any)) != 1 {
		t.Fatalf("replay %v", tl)
	}
	if e := b.post("/api/v1/explore/events", map[string]any{"project": "web", "session_id": "s2", "events": round}).errorOf(t); e.Error.Code != "not_found" {
		t.Errorf("unknown session without auto_start: %+v", e)
	}
	if e := b.post("/api/v1/explore/sessions", map[string]any{"session_id": "s3", "strategy": "nope"}).errorOf(t); e.Error.Field != "strategy" {
		t.Errorf("bad strategy: %+v", e)
	}
}
