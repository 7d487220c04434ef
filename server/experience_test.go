package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/server"
)

// experienceJSON is an agent's extraction with two heuristics.
const experienceJSON = `{"goal": "Rate-limit the login endpoint",
 "failed_attempts": [{"attempt_label": "global lock", "approach_summary": "a global mutex around the handler",
   "failure_reason": "the user rejected it", "replaced_by": "a per-user token bucket"}],
 "working_approach": "a per-user token bucket in the middleware",
 "transferable_heuristics": [
  {"kind": "avoid", "trigger": "rate limiting an HTTP endpoint", "rule": "do not serialise requests with a global lock",
   "why": "it blocks every user", "evidence": "Don't use a global lock"},
  {"kind": "verify", "trigger": "changing login or authentication code",
   "rule": "run the authentication test suite before reporting success", "why": "login regressions lock users out"}]}`

// capture posts turns of a task in project web.
func (b *testBundle) capture(task string, turns ...map[string]any) map[string]any {
	b.t.Helper()
	return b.must(b.post("/api/v1/turns", map[string]any{"project": "web", "bead_id": task, "source": "claude",
		"turns": turns}), http.StatusOK).json(b.t)
}

func turn(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// The whole experience flow over REST, without a chat model: capture →
// rule signals → extraction request/submit → heuristics merged across two
// tasks → recall → feedback until stale → a skill written by the agent,
// activated, exported and imported elsewhere (idempotently).
func TestExperienceOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// One turn per call, as hooks send them (turns of one call share a
	// timestamp).
	for _, tn := range []map[string]any{turn("user", "请把登录接口改成限流，不要用全局锁"),
		turn("assistant", "I added a global mutex around the login handler."),
		turn("user", "No, that's wrong. Don't use a global lock, use a token bucket per user instead."),
		turn("user", "Great, that works now. Thanks!")} {
		res := b.capture("t1", tn)
		if res["stored"].(float64) != 1 || res["bead_id"] != "t1" || res["project"] != "web" {
			t.Fatalf("capture: %v", res)
		}
		b.clock.Advance(time.Second)
	}
	// The same turn again (same time, no turn id) is a duplicate.
	b.clock.Advance(-time.Second)
	if res := b.capture("t1", turn("user", "Great, that works now. Thanks!")); res["duplicates"].(float64) != 1 {
		t.Fatalf("recapture: %v", res)
	}
	b.clock.Advance(time.Second)
	turns := b.must(b.get("/api/v1/turns?project=web&bead_id=t1&limit=2"), http.StatusOK).json(t)
	if turns["total"].(float64) != 4 || len(turns["items"].([]any)) != 2 {
		t.Fatalf("turns: %v", turns)
	}

	sig := b.must(b.post("/api/v1/signals/extract", map[string]any{"project": "web", "bead_id": "t1", "extractor": "rules"}),
		http.StatusOK).json(t)
	if sig["extractor"] != "rules" || sig["llm_calls"].(float64) != 0 {
		t.Fatalf("signals: %v", sig)
	}
	types := map[string]bool{}
	for _, s := range sig["signals"].([]any) {
		types[s.(map[string]any)["type"].(string)] = true
	}
	for _, want := range []string{"constraint", "correction", "success"} {
		if !types[want] {
			t.Errorf("rule signals lack %s: %v", want, types)
		}
	}
	list := b.must(b.get("/api/v1/signals?project=web&bead_id=t1&type=constraint"), http.StatusOK).json(t)
	if list["total"].(float64) != 1 {
		t.Errorf("constraint signals: %v", list)
	}

	// No chat model: minimal, rule signals, pointing at the agent flow.
	x := b.must(b.post("/api/v1/experiences/extract", map[string]any{"project": "web", "bead_id": "t1"}), http.StatusOK).json(t)
	if x["mode"] != "minimal" || x["experience"] != nil || !strings.Contains(x["message"].(string), "extraction_request") {
		t.Fatalf("extract without a model: %v", x)
	}
	task := b.must(b.post("/api/v1/extraction/request", map[string]any{"project": "web", "bead_id": "t1"}), http.StatusOK).json(t)
	if task["kind"] != "experience" || !strings.Contains(task["transcript"].(string), "请把登录接口改成限流") || task["schema"] == nil {
		t.Fatalf("request: %v", task)
	}
	sub := b.must(b.post("/api/v1/extraction/submit", map[string]any{"project": "web", "bead_id": "t1",
		"result": rawJSON(experienceJSON)}), http.StatusOK).json(t)
	changes := sub["experience"].(map[string]any)["heuristics"].([]any)
	if len(changes) != 2 || changes[0].(map[string]any)["action"] != "created" {
		t.Fatalf("submit: %v", sub)
	}
	hs := b.must(b.get("/api/v1/heuristics?project=web&status=candidate,active"), http.StatusOK).json(t)
	if hs["total"].(float64) != 2 {
		t.Fatalf("heuristics: %v", hs)
	}
	b.must(b.get("/api/v1/experiences/t1?project=web"), http.StatusOK)
	if l := b.must(b.get("/api/v1/experiences?project=web"), http.StatusOK).json(t); l["total"].(float64) != 1 {
		t.Errorf("experiences: %v", l)
	}
	// A second request for the same task is a conflict pointing to the experience.
	if e := b.post("/api/v1/extraction/request", map[string]any{"project": "web", "bead_id": "t1"}); e.status != http.StatusConflict ||
		e.errorOf(t).Error.Next != "get_experience" {
		t.Errorf("second request: %d %s", e.status, e.body)
	}

	// A second task with the same lesson updates it.
	b.capture("t2", turn("user", "Add rate limiting to the search API"))
	sub = b.must(b.post("/api/v1/extraction/submit", map[string]any{"project": "web", "bead_id": "t2", "kind": "experience",
		"result": rawJSON(`{"goal": "Rate-limit search", "transferable_heuristics": [{"kind": "avoid",
		"trigger": "rate limiting an HTTP endpoint", "rule": "do not serialise requests with a global lock"}]}`)}), http.StatusOK).json(t)
	ch := sub["experience"].(map[string]any)["heuristics"].([]any)[0].(map[string]any)
	if ch["action"] != "updated" {
		t.Fatalf("duplicate lesson: %v", ch)
	}
	hid := ch["heuristic_id"].(string)
	d := b.must(b.get("/api/v1/heuristics/"+hid+"?project=web"), http.StatusOK).json(t)
	if h := d["heuristic"].(map[string]any); h["support_task_count"].(float64) != 2 {
		t.Fatalf("support: %v", d)
	}

	// Recall finds it; three misleading verdicts make it stale.
	rc := b.must(b.post("/api/v1/recall", map[string]any{"project": "web", "bead_id": "t3",
		"query": "rate limiting an HTTP upload endpoint", "kinds": []string{"heuristic"}}), http.StatusOK).json(t)
	rid, _ := rc["recall_id"].(string)
	if rid == "" || !strings.Contains(rc["text"].(string), "do not serialise requests with a global lock") {
		t.Fatalf("recall: %v", rc)
	}
	// Misleading on three consecutive recalls (seed 001: recalls, not
	// verdicts, are counted) makes it stale.
	var last map[string]any
	for i := range 3 {
		if i > 0 {
			rc = b.must(b.post("/api/v1/recall", map[string]any{"project": "web", "bead_id": "t3",
				"query": "rate limiting an HTTP upload endpoint", "kinds": []string{"heuristic"}}), http.StatusOK).json(t)
			rid, _ = rc["recall_id"].(string)
		}
		last = b.must(b.post("/api/v1/heuristics/"+hid+"/feedback?project=web", map[string]any{"verdict": "misleading",
			"recall_id": rid}), http.StatusOK).json(t)
	}
	if last["heuristic"].(map[string]any)["status"] != "stale" {
		t.Fatalf("after 3 misleading recalls: %v", last)
	}
	recalls := b.must(b.get("/api/v1/recalls?project=web&ref_id="+hid), http.StatusOK).json(t)
	if recalls["total"].(float64) != 3 {
		t.Errorf("recalls of %s: %v", hid, recalls)
	}
	act := b.must(b.post("/api/v1/heuristics/"+hid+"/action", map[string]any{"project": "web", "heuristic_id": hid,
		"action": "restore"}), http.StatusOK).json(t)
	if act["heuristic"].(map[string]any)["status"] != "candidate" {
		t.Errorf("restore: %v", act)
	}

	// A skill written by the agent.
	if e := b.post("/api/v1/skills/generate", map[string]any{"project": "web", "bead_id": "t1"}); e.status != http.StatusConflict ||
		e.errorOf(t).Error.Next != "extraction_request" {
		t.Errorf("generate without a model: %d %s", e.status, e.body)
	}
	b.must(b.post("/api/v1/extraction/request", map[string]any{"project": "web", "bead_id": "t1", "kind": "skill"}), http.StatusOK)
	sk := b.must(b.post("/api/v1/extraction/submit", map[string]any{"project": "web", "bead_id": "t1", "kind": "skill",
		"result": rawJSON(`{"name": "rate-limiting", "description": "Rate-limit an endpoint.", "when_to_use": "bursts",
		"steps": ["add a token bucket", "return 429"]}`)}), http.StatusOK).json(t)
	if s := sk["skill"].(map[string]any)["skill"].(map[string]any); s["name"] != "rate-limiting" || s["status"] != "draft" {
		t.Fatalf("skill: %v", sk)
	}
	st := b.must(b.post("/api/v1/skills/rate-limiting/status?project=web", map[string]any{"status": "active"}), http.StatusOK).json(t)
	if st["skill"].(map[string]any)["status"] != "active" {
		t.Fatalf("activate: %v", st)
	}
	if e := b.post("/api/v1/skills/rate-limiting/status?project=web", map[string]any{"status": "active"}); e.status != http.StatusConflict ||
		e.errorOf(t).Error.Field != "status" {
		t.Errorf("activate twice: %d %s", e.status, e.body)
	}
	if l := b.must(b.get("/api/v1/skills?project=web&status=active"), http.StatusOK).json(t); l["total"].(float64) != 1 {
		t.Errorf("skills: %v", l)
	}
	if g := b.must(b.get("/api/v1/skills/rate-limiting?project=web"), http.StatusOK).json(t); len(g["versions"].([]any)) != 1 {
		t.Errorf("skill detail: %v", g)
	}
	exp := b.must(b.get("/api/v1/skills/export?project=web&names=rate-limiting"), http.StatusOK)
	if !strings.Contains(string(exp.body), `"format":"kaizen-skill-bundle"`) && !strings.Contains(string(exp.body), `"format": "kaizen-skill-bundle"`) {
		t.Fatalf("bundle: %s", exp.body)
	}
	imp := b.must(b.post("/api/v1/skills/import?project=api", exp.body), http.StatusOK).json(t)
	if len(imp["imported"].([]any)) != 1 {
		t.Fatalf("import: %v", imp)
	}
	imp = b.must(b.post("/api/v1/skills/import?project=api", exp.body), http.StatusOK).json(t)
	if len(imp["imported"].([]any)) != 0 || len(imp["skipped"].([]any)) != 1 {
		t.Errorf("second import: %v", imp)
	}

	re := b.must(b.post("/api/v1/reembed?project=web", nil), http.StatusOK).json(t)
	if ps := re["projects"].([]any); len(ps) != 1 || ps[0] != "web" {
		t.Errorf("reembed: %v", re)
	}
}

// rawJSON embeds a JSON document as is in a request body.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// Invalid requests name the field (400), missing records name the next
// action (404), and nothing is stored.
func TestExperienceErrorsOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		field, next        string
	}{
		{"unknown role", "POST", "/api/v1/turns", map[string]any{"bead_id": "t1", "turns": []any{turn("bot", "hi")}}, 400, "turns[0].role", ""},
		{"missing task", "POST", "/api/v1/turns", map[string]any{"turns": []any{turn("user", "hi")}}, 400, "bead_id", ""},
		{"unknown field", "POST", "/api/v1/turns", `{"bead_id": "t1", "turns": [{"role": "user", "text": "hi"}]}`, 400, "text", ""},
		{"empty body", "POST", "/api/v1/turns", "", 400, "", ""},
		{"bad extractor", "POST", "/api/v1/signals/extract", map[string]any{"bead_id": "t1", "extractor": "magic"}, 400, "extractor", ""},
		{"no model", "POST", "/api/v1/signals/extract", map[string]any{"bead_id": "t1", "extractor": "llm"}, 409, "extractor", "extraction_request"},
		{"no turns", "POST", "/api/v1/signals/extract", map[string]any{"bead_id": "t1"}, 404, "bead_id", "capture"},
		{"bad signal type", "GET", "/api/v1/signals?type=angry", nil, 400, "type", ""},
		{"bad mode", "POST", "/api/v1/experiences/extract", map[string]any{"bead_id": "t1", "mode": "turbo"}, 400, "mode", ""},
		{"no experience", "GET", "/api/v1/experiences/t1", nil, 404, "bead_id", "extract_experience"},
		{"bad kind", "POST", "/api/v1/extraction/request", map[string]any{"bead_id": "t1", "kind": "poem"}, 400, "kind", ""},
		{"bad result", "POST", "/api/v1/extraction/submit", map[string]any{"bead_id": "t1", "result": map[string]any{"working_approach": "x"}}, 400, "result.goal", ""},
		{"no result", "POST", "/api/v1/extraction/submit", map[string]any{"bead_id": "t1"}, 400, "result", ""},
		{"bad status", "GET", "/api/v1/heuristics?status=good", nil, 400, "status", ""},
		{"no heuristic", "GET", "/api/v1/heuristics/heur-nope", nil, 404, "heuristic_id", "list_heuristics"},
		{"bad verdict", "POST", "/api/v1/heuristics/heur-nope/feedback", map[string]any{"verdict": "maybe"}, 400, "verdict", ""},
		{"feedback on nothing", "POST", "/api/v1/heuristics/heur-nope/feedback", map[string]any{"verdict": "helpful"}, 404, "heuristic_id", "list_heuristics"},
		{"path and body disagree", "POST", "/api/v1/heuristics/heur-a/action", map[string]any{"heuristic_id": "heur-b", "action": "restore"}, 400, "heuristic_id", ""},
		{"archive without reason", "POST", "/api/v1/heuristics/heur-a/action", map[string]any{"action": "archive"}, 400, "reason", ""},
		{"bad action", "POST", "/api/v1/heuristics/heur-a/action", map[string]any{"action": "explode"}, 400, "action", ""},
		{"blank query", "POST", "/api/v1/recall", map[string]any{"query": " "}, 400, "query", ""},
		{"bad recall kind", "POST", "/api/v1/recall", map[string]any{"query": "x", "kinds": []string{"everything"}}, 400, "kinds", ""},
		{"unknown parameter", "GET", "/api/v1/recalls?task=t1", nil, 400, "task", ""},
		{"bad limit", "GET", "/api/v1/turns?limit=5000", nil, 400, "limit", ""},
		{"no skill", "GET", "/api/v1/skills/nope", nil, 404, "skill", "list_skills"},
		{"export unknown skill", "GET", "/api/v1/skills/export?names=nope", nil, 404, "skill", "list_skills"},
		{"bad skill status", "POST", "/api/v1/skills/nope/status", map[string]any{"status": "shiny"}, 400, "status", ""},
		{"skill path and body disagree", "POST", "/api/v1/skills/a/status", map[string]any{"skill": "b", "status": "active"}, 400, "skill", ""},
		{"bad bundle", "POST", "/api/v1/skills/import", `{"format": "zip", "version": 1, "skills": []}`, 400, "bundle", ""},
		{"project mismatch", "POST", "/api/v1/recall?project=a", map[string]any{"project": "b", "query": "x"}, 400, "project", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := b.do(req{method: c.method, path: c.path, body: c.body})
			e := r.errorOf(t)
			if r.status != c.status || e.Error.Field != c.field || e.Error.Next != c.next {
				t.Errorf("got %d field %q next %q, want %d %q %q: %s", r.status, e.Error.Field, e.Error.Next,
					c.status, c.field, c.next, r.body)
			}
		})
	}
	if got := b.snapshot(); got != "" {
		t.Errorf("state after rejected requests: %q", got)
	}
	for _, path := range []string{"/api/v1/turns", "/api/v1/signals", "/api/v1/recalls", "/api/v1/heuristics", "/api/v1/skills", "/api/v1/experiences"} {
		m := b.must(b.get(path), http.StatusOK).json(t)
		if m["total"].(float64) != 0 {
			t.Errorf("%s after rejected requests: %v", path, m)
		}
	}
}

// JSON bodies over MaxBodyBytes get 413; a skill bundle is bounded by the
// separate, larger import limit.
func TestExperienceBodyLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.MaxBodyBytes = 1000; o.MaxImportBytes = 4000 }))
	big := `{"bead_id": "t1", "turns": [{"role": "user", "content": "` + strings.Repeat("x", 2000) + `"}]}`
	for name, body := range map[string]any{
		"with length": big,
		"chunked":     io.MultiReader(strings.NewReader(big)),
	} {
		r := b.post("/api/v1/turns", body)
		if r.status != http.StatusRequestEntityTooLarge || r.errorOf(t).Error.Code != "payload_too_large" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	bundle := `{"format": "kaizen-skill-bundle", "version": 1, "skills": []}`
	r := b.post("/api/v1/skills/import", bundle+strings.Repeat(" ", 1500))
	if r.status != http.StatusOK {
		t.Errorf("bundle under the import limit: %d %s", r.status, r.body)
	}
	r = b.post("/api/v1/skills/import", io.MultiReader(strings.NewReader(bundle+strings.Repeat(" ", 5000))))
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized bundle: %d %s", r.status, r.body)
	}
	r = b.do(req{method: "POST", path: "/api/v1/skills/import", body: bundle, header: map[string]string{"Content-Type": "text/plain"}})
	if r.status != http.StatusUnsupportedMediaType {
		t.Errorf("bundle as text/plain: %d %s", r.status, r.body)
	}
	if got := b.snapshot(); got != "" {
		t.Errorf("state after rejected bodies: %q", got)
	}
}
