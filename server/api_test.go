package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

func TestHealthz(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.must(b.get("/healthz"), http.StatusOK)
	if got := r.json(t)["status"]; got != "ok" {
		t.Errorf("status %v", got)
	}
	b.must(b.do(req{method: "HEAD", path: "/healthz"}), http.StatusOK)
	if r := b.post("/healthz", "{}"); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d", r.status)
	}
}

func TestHealthzReportsClosedStore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.engine.Close()
	r := b.must(b.get("/healthz"), http.StatusServiceUnavailable)
	if got := r.json(t)["status"]; got != "unavailable" {
		t.Errorf("status %v", got)
	}
	// Other routes answer 503 with a JSON error, not a 500 with details.
	for _, path := range []string{"/api/v1/outcomes", "/api/v1/export"} {
		e := b.must(b.get(path), http.StatusServiceUnavailable).errorOf(t)
		if e.Error.Code != "unavailable" || strings.Contains(e.Error.Message, "sql") {
			t.Errorf("%s: error %+v", path, e)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var v kaizen.VersionInfo
	b.must(b.get("/api/v1/version"), http.StatusOK).decode(t, &v)
	if v.Version != kaizen.Version || v.Backend != "sqlite" {
		t.Errorf("version %+v", v)
	}
}

func TestOutcomeRecordListShow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.must(b.post("/api/v1/outcomes", map[string]any{
		"bead_id": "bd-1", "duration_ms": 90_000, "error_count": 1, "retry_count": 0, "success": true,
		"files_touched": []string{"a.go", "b.go"}, "strategy": "Split by file type",
		"criteria": []string{"type_safe", "readable"}, "timestamp": start.Add(-time.Hour).Format(time.RFC3339),
	}), http.StatusCreated)
	raw := r.json(t)
	o := raw["outcome"].(map[string]any)
	for _, k := range []string{"id", "project", "bead_id", "duration_ms", "error_count", "retry_count", "success",
		"files_touched", "strategy", "timestamp", "patterns", "criteria", "score", "recorded_at"} {
		if _, ok := o[k]; !ok {
			t.Errorf("outcome lacks %q: %v", k, o)
		}
	}
	for _, k := range []string{"feedback", "weighted", "pattern_updates", "inversions"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	var res kaizen.OutcomeResult
	r.decode(t, &res)
	if res.Outcome.TaskID != "bd-1" || res.Outcome.Project != "proj" || res.Outcome.ErrorCountSource != "input" ||
		len(res.Feedback) != 2 || len(res.Patterns) != 1 || !res.Patterns[0].Created {
		t.Fatalf("result %+v", res)
	}
	loc := r.header.Get("Location")
	if loc != "/api/v1/outcomes/"+res.Outcome.ID+"?project=proj" {
		t.Errorf("Location %q", loc)
	}
	var shown learning.Outcome
	b.must(b.get(loc), http.StatusOK).decode(t, &shown)
	if shown.ID != res.Outcome.ID || shown.Score.Type != res.Outcome.Score.Type {
		t.Errorf("shown %+v", shown)
	}

	b.clock.Advance(time.Minute)
	b.must(b.post("/api/v1/outcomes", outcome("bd-2", false, "")), http.StatusCreated)
	var list kaizen.OutcomeList
	b.must(b.get("/api/v1/outcomes"), http.StatusOK).decode(t, &list)
	if list.Total != 2 || len(list.Items) != 2 || list.Items[0].TaskID != "bd-2" {
		t.Errorf("list %+v", list)
	}
	b.must(b.get("/api/v1/outcomes?bead_id=bd-1&limit=1"), http.StatusOK).decode(t, &list)
	if list.Total != 1 || len(list.Items) != 1 || list.Items[0].TaskID != "bd-1" {
		t.Errorf("filtered list %+v", list)
	}
	b.must(b.get("/api/v1/outcomes?limit=1&offset=1"), http.StatusOK).decode(t, &list)
	if list.Total != 2 || len(list.Items) != 1 || list.Items[0].TaskID != "bd-1" {
		t.Errorf("page 2 %+v", list)
	}
	// Empty lists are [] rather than null.
	if r := b.must(b.get("/api/v1/outcomes?bead_id=none"), http.StatusOK); !strings.Contains(string(r.body), `"items":[]`) {
		t.Errorf("empty list %s", r.body)
	}
	e := b.must(b.get("/api/v1/outcomes/out-missing"), http.StatusNotFound).errorOf(t)
	if e.Error.Code != "not_found" || e.Error.Field != "id" || e.Error.Next != "list_outcomes" {
		t.Errorf("error %+v", e)
	}
	// Another project sees nothing of this one.
	b.must(b.get("/api/v1/outcomes/"+res.Outcome.ID+"?project=other"), http.StatusNotFound)
}

// The seed's inversion example through the API: a pattern used by 2
// successful and 5 failed tasks becomes an anti-pattern ("Failed 5/7 times
// (71% failure rate)"), listed with kind=anti_pattern and in plan guidance.
func TestSeedInversion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var inv *learning.Inversion
	for i, ok := range []bool{true, true, false, false, false, false, false} {
		b.clock.Advance(time.Minute)
		var res kaizen.OutcomeResult
		b.must(b.post("/api/v1/outcomes", outcome("bd-"+string(rune('a'+i)), ok, "Split by file type")), http.StatusCreated).decode(t, &res)
		if len(res.Inversions) > 0 {
			if inv != nil {
				t.Fatalf("outcome %d: second inversion %+v", i, res.Inversions)
			}
			inv = &res.Inversions[0]
		}
	}
	// S,S,F,F,F crosses 3/5 = 60% at the fifth outcome; the anti-pattern is
	// then kept current.
	if inv == nil || inv.Reason != "Failed 3/5 times (60% failure rate)" || inv.Inverted.Kind != learning.KindAntiPattern {
		t.Fatalf("inversion %+v", inv)
	}
	var list kaizen.PatternList
	b.must(b.get("/api/v1/patterns?kind=anti_pattern"), http.StatusOK).decode(t, &list)
	const want = "AVOID: Split by file type. Failed 5/7 times (71% failure rate)"
	if list.Total != 1 || len(list.Items) != 1 || list.Items[0].Content != want ||
		list.Items[0].Reason != "Failed 5/7 times (71% failure rate)" || list.Items[0].SourceID != inv.Original.ID {
		t.Fatalf("anti-patterns %+v", list)
	}
	b.must(b.get("/api/v1/patterns?kind=pattern"), http.StatusOK).decode(t, &list)
	if list.Total != 1 || list.Items[0].SuccessCount != 2 || list.Items[0].FailureCount != 5 ||
		list.Items[0].AntiPatternID != inv.Inverted.ID {
		t.Fatalf("patterns %+v", list)
	}
	var g learning.Guidance
	b.must(b.get("/api/v1/plan?task="+url.QueryEscape("Split by file type, then write tests")), http.StatusOK).decode(t, &g)
	if len(g.AntiPatterns) != 1 || g.AntiPatterns[0].Content != want || !g.AntiPatterns[0].Mentioned || len(g.Warnings) == 0 {
		t.Fatalf("guidance %+v", g)
	}
	md := b.must(b.get("/api/v1/plan?format=markdown"), http.StatusOK)
	if !strings.Contains(string(md.body), want) {
		t.Errorf("markdown lacks the anti-pattern:\n%s", md.body)
	}
	// Recording an outcome that names the anti-pattern itself is refused.
	e := b.must(b.post("/api/v1/outcomes", map[string]any{"bead_id": "x", "duration_ms": 1, "success": true,
		"patterns": []string{inv.Inverted.ID}}), http.StatusBadRequest).errorOf(t)
	if e.Error.Field != "patterns" {
		t.Errorf("error %+v", e)
	}
}

func TestPatternLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var obs kaizen.ObservationResult
	b.must(b.post("/api/v1/patterns/observe", map[string]any{"pattern": "Handle shared types/interfaces first",
		"success": true, "bead_id": "bd-1", "tags": []string{"types"}}), http.StatusOK).decode(t, &obs)
	if !obs.Update.Created || obs.Pattern.SuccessCount != 1 || obs.Inversion != nil {
		t.Fatalf("observe %+v", obs)
	}
	id := obs.Pattern.ID
	b.clock.Advance(time.Minute)
	b.must(b.post("/api/v1/patterns/observe", map[string]any{"pattern": id, "success": false}), http.StatusOK).decode(t, &obs)
	if obs.Update.Created || obs.Pattern.FailureCount != 1 {
		t.Fatalf("second observe %+v", obs)
	}

	var list kaizen.PatternList
	for _, q := range []string{"", "?kind=pattern", "?state=candidate", "?tag=types", "?search=shared", "?limit=1"} {
		b.must(b.get("/api/v1/patterns"+q), http.StatusOK).decode(t, &list)
		if list.Total != 1 || len(list.Items) != 1 || list.Items[0].ID != id || list.Items[0].Maturity.State != learning.Candidate {
			t.Errorf("list %q: %+v", q, list)
		}
	}
	for _, q := range []string{"?state=proven", "?tag=none", "?search=zzz", "?offset=1"} {
		b.must(b.get("/api/v1/patterns"+q), http.StatusOK).decode(t, &list)
		if len(list.Items) != 0 {
			t.Errorf("list %q: %+v", q, list)
		}
	}

	// Show by id and by content (escaped, with a slash).
	var d kaizen.PatternDetail
	for _, ref := range []string{id, url.PathEscape("Handle shared types/interfaces first")} {
		b.must(b.get("/api/v1/patterns/"+ref), http.StatusOK).decode(t, &d)
		if d.ID != id || len(d.RecentObservations) != 2 || d.Label == "" {
			t.Errorf("show %q: %+v", ref, d)
		}
	}
	raw := b.must(b.get("/api/v1/patterns/"+id), http.StatusOK).json(t)
	for _, k := range []string{"id", "content", "kind", "success_count", "failure_count", "maturity", "maturity_record", "recent_observations", "example_beads"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("pattern detail lacks %q", k)
		}
	}
	var x learning.PatternExplanation
	b.must(b.get("/api/v1/patterns/"+id+"/explain"), http.StatusOK).decode(t, &x)
	if x.Pattern.ID != id || len(x.Why) == 0 || len(x.Thresholds) == 0 {
		t.Errorf("explain %+v", x)
	}

	var m kaizen.ManualResult
	b.must(b.post("/api/v1/patterns/promote", map[string]any{"pattern": id, "reason": "reviewed"}), http.StatusOK).decode(t, &m)
	if m.Pattern.Maturity.State != learning.Proven || !m.Pattern.Maturity.Manual {
		t.Errorf("promote %+v", m)
	}
	e := b.must(b.post("/api/v1/patterns/deprecate", map[string]any{"pattern": id}), http.StatusBadRequest).errorOf(t)
	if e.Error.Field != "reason" {
		t.Errorf("deprecate without reason: %+v", e)
	}
	b.must(b.post("/api/v1/patterns/deprecate", map[string]any{"pattern": id, "reason": "breaks builds"}), http.StatusOK).decode(t, &m)
	if m.Pattern.Maturity.State != learning.Deprecated || m.Pattern.Maturity.Multiplier != 0 {
		t.Errorf("deprecate %+v", m)
	}
	e = b.must(b.post("/api/v1/patterns/promote", map[string]any{"pattern": id}), http.StatusConflict).errorOf(t)
	if e.Error.Code != "conflict" || e.Error.Hint == "" {
		t.Errorf("promote deprecated: %+v", e)
	}
	b.must(b.post("/api/v1/patterns/reset", map[string]any{"pattern": id}), http.StatusOK).decode(t, &m)
	if m.Pattern.Maturity.State != learning.Candidate || m.Pattern.SuccessCount != 0 {
		t.Errorf("reset %+v", m)
	}
	b.must(b.post("/api/v1/patterns/promote", map[string]any{"pattern": id}), http.StatusOK)

	for _, path := range []string{"/api/v1/patterns/pattern-missing", "/api/v1/patterns/no%20such%20content/explain"} {
		if e := b.must(b.get(path), http.StatusNotFound).errorOf(t); e.Error.Code != "not_found" {
			t.Errorf("%s: %+v", path, e)
		}
	}
	b.must(b.post("/api/v1/patterns/reset", map[string]any{"pattern": "pattern-missing"}), http.StatusNotFound)
	// A pattern whose content is "observe" is still reachable with GET.
	b.must(b.post("/api/v1/patterns/observe", map[string]any{"pattern": "observe", "success": true}), http.StatusOK)
	b.must(b.get("/api/v1/patterns/observe"), http.StatusOK)
}

func TestCriteria(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var list struct {
		Items []learning.CriterionWeight `json:"items"`
		Total int                        `json:"total"`
	}
	b.must(b.get("/api/v1/criteria"), http.StatusOK).decode(t, &list)
	if list.Total != 0 || list.Items == nil {
		t.Errorf("empty criteria %+v", list)
	}
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "")), http.StatusCreated)
	b.must(b.get("/api/v1/criteria"), http.StatusOK).decode(t, &list)
	if list.Total != 4 || len(list.Items) != 4 || list.Items[0].Criterion != "no_bugs" || list.Items[0].Weight != 1 {
		t.Errorf("criteria %+v", list)
	}
	var x learning.CriterionExplanation
	r := b.must(b.get("/api/v1/criteria/type_safe/explain"), http.StatusOK)
	r.decode(t, &x)
	if _, ok := r.json(t)["weight"]; !ok && len(r.body) < 10 {
		t.Errorf("explain %s", r.body)
	}
	if e := b.must(b.get("/api/v1/criteria/never_seen/explain"), http.StatusNotFound).errorOf(t); e.Error.Field != "criterion" {
		t.Errorf("unknown criterion %+v", e)
	}
	if e := b.must(b.get("/api/v1/criteria/"+url.PathEscape(" padded")+"/explain"), http.StatusBadRequest).errorOf(t); e.Error.Field != "criterion" {
		t.Errorf("invalid criterion %+v", e)
	}
}

// The error accumulator through the API: errors recorded for a task feed
// its context, stats and the error_count of an outcome that omits it.
func TestErrorAccumulator(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var e1, e2 learning.ErrorEntry
	r := b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "bd-7", "error_type": "validation",
		"message": "type mismatch in user.go", "tool_name": "go build"}), http.StatusCreated)
	r.decode(t, &e1)
	raw := r.json(t)
	for _, k := range []string{"id", "bead_id", "error_type", "message", "tool_name", "timestamp", "resolved"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("error entry lacks %q: %s", k, r.body)
		}
	}
	b.clock.Advance(time.Second)
	b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "bd-7", "error_type": "timeout",
		"message": "tests timed out", "stack_trace": "goroutine 1 [running]"}), http.StatusCreated).decode(t, &e2)
	b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "bd-other", "message": "elsewhere"}), http.StatusCreated)

	var list kaizen.ErrorList
	b.must(b.get("/api/v1/errors?bead_id=bd-7"), http.StatusOK).decode(t, &list)
	if list.Total != 2 || list.Items[0].ID != e2.ID {
		t.Errorf("list %+v", list)
	}
	b.must(b.get("/api/v1/errors?error_type=timeout"), http.StatusOK).decode(t, &list)
	if list.Total != 1 || list.Items[0].ID != e2.ID {
		t.Errorf("by type %+v", list)
	}
	b.must(b.get("/api/v1/errors?search=mismatch"), http.StatusOK).decode(t, &list)
	if list.Total != 1 || list.Items[0].ID != e1.ID {
		t.Errorf("search %+v", list)
	}

	var stats learning.ErrorStats
	b.must(b.get("/api/v1/tasks/bd-7/error-stats"), http.StatusOK).decode(t, &stats)
	if stats.Total != 2 || stats.Unresolved != 2 || stats.ByType[learning.ErrValidation] != 1 {
		t.Errorf("stats %+v", stats)
	}
	var ec kaizen.ErrorContextResult
	b.must(b.get("/api/v1/tasks/bd-7/error-context"), http.StatusOK).decode(t, &ec)
	if ec.TaskID != "bd-7" || len(ec.Errors) != 2 || !strings.Contains(ec.Markdown, "type mismatch in user.go") {
		t.Errorf("context %+v", ec)
	}
	md := b.must(b.do(req{method: "GET", path: "/api/v1/tasks/bd-7/error-context", header: map[string]string{"Accept": "text/markdown"}}), http.StatusOK)
	if ct := md.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/markdown") || string(md.body) != ec.Markdown {
		t.Errorf("markdown %q: %q", ct, md.body)
	}

	var resolved learning.ErrorEntry
	b.must(b.post("/api/v1/errors/"+e1.ID+"/resolve", nil), http.StatusOK).decode(t, &resolved)
	if !resolved.Resolved || resolved.ResolvedAt == nil {
		t.Errorf("resolved %+v", resolved)
	}
	b.must(b.post("/api/v1/errors/"+e1.ID+"/resolve", map[string]any{"project": "proj"}), http.StatusOK)
	b.must(b.get("/api/v1/errors?bead_id=bd-7&unresolved=true"), http.StatusOK).decode(t, &list)
	if list.Total != 1 || list.Items[0].ID != e2.ID {
		t.Errorf("unresolved %+v", list)
	}
	b.must(b.get("/api/v1/tasks/bd-7/error-context"), http.StatusOK).decode(t, &ec)
	if len(ec.Errors) != 1 || strings.Contains(ec.Markdown, "type mismatch") {
		t.Errorf("context after resolve %+v", ec)
	}
	b.must(b.get("/api/v1/tasks/bd-7/error-context?include_resolved=true"), http.StatusOK).decode(t, &ec)
	if len(ec.Errors) != 2 {
		t.Errorf("context with resolved %+v", ec)
	}
	b.must(b.post("/api/v1/errors/err-missing/resolve", nil), http.StatusNotFound)

	// An outcome without error_count takes it from the accumulator.
	var res kaizen.OutcomeResult
	b.must(b.post("/api/v1/outcomes", map[string]any{"bead_id": "bd-7", "duration_ms": 60_000, "success": true}),
		http.StatusCreated).decode(t, &res)
	if res.Outcome.ErrorCount != 2 || res.Outcome.ErrorCountSource != "accumulator" {
		t.Errorf("error_count %d from %q", res.Outcome.ErrorCount, res.Outcome.ErrorCountSource)
	}
	// Plan guidance for the task shows its open errors.
	var g learning.Guidance
	b.must(b.get("/api/v1/plan?bead_id=bd-7"), http.StatusOK).decode(t, &g)
	if len(g.OpenErrors) != 1 || g.OpenErrors[0].ID != e2.ID || !strings.Contains(g.ErrorContext, "tests timed out") {
		t.Errorf("guidance errors %+v", g)
	}
}

func TestPlanGuidance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 3 {
		b.clock.Advance(time.Minute)
		b.must(b.post("/api/v1/outcomes", outcome("bd-"+string(rune('0'+i)), true, "Handle shared types first")), http.StatusCreated)
	}
	var g learning.Guidance
	r := b.must(b.get("/api/v1/plan?task=refactor&limit=5"), http.StatusOK)
	r.decode(t, &g)
	if g.Project != "proj" || g.Task != "refactor" || len(g.Patterns) != 1 || g.Patterns[0].Content != "Handle shared types first" ||
		g.Patterns[0].SuccessCount != 3 || g.Patterns[0].FinalScore <= 0 || g.Patterns[0].Multiplier == 0 {
		t.Fatalf("guidance %+v", g)
	}
	raw := r.json(t)["patterns"].([]any)[0].(map[string]any)
	for _, k := range []string{"base_score", "multiplier", "final_score", "state", "helpful_count", "harmful_count", "success_count", "failure_count"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("ranked pattern lacks %q", k)
		}
	}
	want := g.Markdown()
	for name, rq := range map[string]req{
		"format":      {method: "GET", path: "/api/v1/plan?task=refactor&limit=5&format=markdown"},
		"accept":      {method: "GET", path: "/api/v1/plan?task=refactor&limit=5", header: map[string]string{"Accept": "text/markdown, application/json;q=0.5"}},
		"post-format": {method: "POST", path: "/api/v1/plan?format=md", body: map[string]any{"task": "refactor", "limit": 5}},
	} {
		r := b.must(b.do(rq), http.StatusOK)
		if ct := r.header.Get("Content-Type"); ct != "text/markdown; charset=utf-8" || string(r.body) != want {
			t.Errorf("%s: %q\n%s\nwant\n%s", name, ct, r.body, want)
		}
		if !strings.Contains(string(r.body), "Handle shared types first") {
			t.Errorf("%s: markdown lacks the pattern", name)
		}
	}
	// JSON wins when Accept prefers it; POST with a body gives JSON too.
	r = b.must(b.do(req{method: "GET", path: "/api/v1/plan", header: map[string]string{"Accept": "application/json, text/markdown"}}), http.StatusOK)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("content type %q", r.header.Get("Content-Type"))
	}
	var g2 learning.Guidance
	b.must(b.post("/api/v1/plan", map[string]any{"task": "refactor", "limit": 5}), http.StatusOK).decode(t, &g2)
	if len(g2.Patterns) != 1 {
		t.Errorf("POST guidance %+v", g2)
	}
	b.must(b.get("/api/v1/plan?format=html"), http.StatusBadRequest)
	b.must(b.get("/api/v1/plan?limit=5000"), http.StatusBadRequest)
	b.must(b.post("/api/v1/plan", map[string]any{"limit": -1}), http.StatusBadRequest)
}

func TestExtract(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var res struct {
		Patterns   []string             `json:"patterns"`
		Strategies []learning.Extracted `json:"strategies"`
	}
	b.must(b.post("/api/v1/extract", map[string]any{"description": "Split by file type, then handle shared types first"}), http.StatusOK).decode(t, &res)
	if len(res.Patterns) < 2 || len(res.Strategies) != len(res.Patterns) {
		t.Errorf("english %+v", res)
	}
	b.must(b.post("/api/v1/extract", map[string]any{"description": "按文件类型拆分"}), http.StatusOK).decode(t, &res)
	if len(res.Patterns) != 1 || res.Strategies[0].Language != learning.LocaleZH {
		t.Errorf("chinese %+v", res)
	}
	b.must(b.post("/api/v1/extract", map[string]any{"description": "nothing in here"}), http.StatusOK).decode(t, &res)
	if res.Patterns == nil || len(res.Patterns) != 0 {
		t.Errorf("none %+v", res)
	}
	b.must(b.post("/api/v1/extract", map[string]any{"description": "  "}), http.StatusBadRequest)
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	src := setup(t)
	for i, ok := range []bool{true, true, false, false, false, false, false} {
		src.clock.Advance(time.Minute)
		src.must(src.post("/api/v1/outcomes", outcome("bd-"+string(rune('a'+i)), ok, "Split by file type")), http.StatusCreated)
	}
	src.must(src.post("/api/v1/errors", map[string]any{"bead_id": "bd-a", "message": "boom"}), http.StatusCreated)
	src.must(src.post("/api/v1/outcomes?project=second", outcome("bd-z", true, "Respect dependency chain")), http.StatusCreated)

	r := src.must(src.get("/api/v1/export"), http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("content type %q", ct)
	}
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if len(lines) < 10 || !strings.Contains(lines[0], kaizen.ExportFormat) || strings.Contains(string(r.body), `"second"`) {
		t.Fatalf("export of the default project: %d lines\n%s", len(lines), r.body)
	}
	export := r.body

	dst := setup(t)
	dst.clock.Advance(time.Hour)
	var res kaizen.ImportResult
	dst.must(dst.do(req{method: "POST", path: "/api/v1/import", body: export,
		header: map[string]string{"Content-Type": "application/x-ndjson"}}), http.StatusOK).decode(t, &res)
	if res.Records["outcome"].Inserted != 7 || res.Records["error"].Inserted != 1 || res.Records["pattern"].Inserted != 2 {
		t.Fatalf("import %+v", res)
	}
	// Importing again changes nothing.
	dst.must(dst.do(req{method: "POST", path: "/api/v1/import", body: export}), http.StatusOK).decode(t, &res)
	if res.Records["outcome"].Inserted != 0 || res.Records["outcome"].Skipped != 7 {
		t.Errorf("second import %+v", res)
	}
	var a, c kaizen.PatternList
	src.must(src.get("/api/v1/patterns?kind=anti_pattern"), http.StatusOK).decode(t, &a)
	dst.must(dst.get("/api/v1/patterns?kind=anti_pattern"), http.StatusOK).decode(t, &c)
	if len(a.Items) != 1 || len(c.Items) != 1 || a.Items[0].Content != c.Items[0].Content || a.Items[0].ID != c.Items[0].ID {
		t.Errorf("anti-patterns differ:\n%+v\n%+v", a, c)
	}
	var s1, s2 learning.ErrorStats
	src.must(src.get("/api/v1/tasks/bd-a/error-stats"), http.StatusOK).decode(t, &s1)
	dst.must(dst.get("/api/v1/tasks/bd-a/error-stats"), http.StatusOK).decode(t, &s2)
	if s1.Total != 1 || s2.Total != 1 {
		t.Errorf("stats %+v %+v", s1, s2)
	}

	// Import into another project of the target.
	dst.must(dst.do(req{method: "POST", path: "/api/v1/import?project=copy", body: export}), http.StatusOK).decode(t, &res)
	if len(res.Projects) != 1 || res.Projects[0] != "copy" || res.Records["outcome"].Inserted != 7 {
		t.Errorf("import into copy %+v", res)
	}
	dst.must(dst.get("/api/v1/outcomes?project=copy"), http.StatusOK)

	// Project selection of the export.
	r = src.must(src.get("/api/v1/export?project=proj&project=second"), http.StatusOK)
	if !strings.Contains(string(r.body), `"second"`) || !strings.Contains(string(r.body), `"proj"`) {
		t.Errorf("two-project export lacks one")
	}
	all := src.must(src.get("/api/v1/export?all=true"), http.StatusOK)
	if bytes.Count(all.body, []byte("\n")) != bytes.Count(r.body, []byte("\n")) {
		t.Errorf("all=true exported %d lines, the two projects %d", bytes.Count(all.body, []byte("\n")), bytes.Count(r.body, []byte("\n")))
	}
	src.must(src.get("/api/v1/export?all=true&project=proj"), http.StatusBadRequest)
	if e := src.must(src.get("/api/v1/export?project=%20padded"), http.StatusBadRequest).errorOf(t); e.Error.Field != "project" {
		t.Errorf("bad project %+v", e)
	}
}

func TestRebuild(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "Split by file type")), http.StatusCreated)
	before := b.snapshot("proj")
	var res kaizen.RebuildResult
	b.must(b.post("/api/v1/rebuild", nil), http.StatusOK).decode(t, &res)
	if res.Project != "proj" || res.Patterns != 1 || res.Criteria != 4 {
		t.Errorf("rebuild %+v", res)
	}
	b.must(b.post("/api/v1/rebuild?project=proj", map[string]any{"project": "proj"}), http.StatusOK)
	b.must(b.post("/api/v1/rebuild", map[string]any{"project": "empty"}), http.StatusOK).decode(t, &res)
	if res.Project != "empty" || res.Patterns != 0 {
		t.Errorf("rebuild of an empty project %+v", res)
	}
	if after := b.snapshot("proj"); after != before {
		t.Errorf("rebuild changed the records")
	}
}

// Projects come from ?project=, else the body's project, else the
// engine's default, and never leak into each other.
func TestProjectSelection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var res kaizen.OutcomeResult
	b.must(b.post("/api/v1/outcomes?project=alpha", outcome("bd-1", true, "")), http.StatusCreated).decode(t, &res)
	if res.Outcome.Project != "alpha" {
		t.Errorf("query project: %q", res.Outcome.Project)
	}
	in := outcome("bd-2", true, "")
	in["project"] = "beta"
	b.must(b.post("/api/v1/outcomes", in), http.StatusCreated).decode(t, &res)
	if res.Outcome.Project != "beta" {
		t.Errorf("body project: %q", res.Outcome.Project)
	}
	in2 := outcome("bd-4", true, "")
	b.must(b.post("/api/v1/outcomes?project=beta", in2), http.StatusCreated)
	before := b.snapshot()
	e := b.must(b.post("/api/v1/outcomes?project=alpha", in), http.StatusBadRequest).errorOf(t)
	if e.Error.Field != "project" {
		t.Errorf("conflicting projects: %+v", e)
	}
	if b.snapshot() != before {
		t.Error("a rejected request changed state")
	}
	b.must(b.post("/api/v1/outcomes", outcome("bd-3", true, "")), http.StatusCreated).decode(t, &res)
	if res.Outcome.Project != "proj" {
		t.Errorf("default project: %q", res.Outcome.Project)
	}
	var list kaizen.OutcomeList
	for p, n := range map[string]int64{"alpha": 1, "beta": 2, "proj": 1, "gamma": 0} {
		b.must(b.get("/api/v1/outcomes?project="+p), http.StatusOK).decode(t, &list)
		if list.Total != n {
			t.Errorf("project %s: %d outcomes, want %d", p, list.Total, n)
		}
	}
	b.must(b.get("/api/v1/outcomes?project="+url.QueryEscape("tab\there")), http.StatusBadRequest)
}

// The REST answers equal the engine's for the same action.
func TestRESTMatchesEngine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "Split by file type")), http.StatusCreated)
	want, err := b.engine.PlanGuidance(context.Background(), kaizen.PlanInput{Task: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r := b.must(b.get("/api/v1/plan?task=x&format=markdown"), http.StatusOK)
	if string(r.body) != want.Markdown() {
		t.Errorf("markdown differs:\n%s\nwant\n%s", r.body, want.Markdown())
	}
}
