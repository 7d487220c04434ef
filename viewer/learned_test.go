package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// scriptedWeek records a week of outcomes through the engine (the
// bundle's clock moves with them): two successes a day splitting by
// feature, a failure every other day splitting by file type, a tracked
// hook session with its own outcome, and a task experience with a lesson.
// It returns the week's heuristic and leaves the clock at the week's end.
func scriptedWeek(t *testing.T, b *testBundle) string {
	t.Helper()
	ctx := context.Background()
	for day := range 7 {
		for n := range 2 {
			b.clock.Set(start.Add(time.Duration(day)*24*time.Hour + time.Duration(n+1)*time.Hour))
			b.record(kaizen.OutcomeInput{TaskID: fmt.Sprintf("feature-%d-%d", day, n), Success: ptr(true), ErrorCount: ptr(0),
				DurationMs: ptr(int64(120_000)), Patterns: []string{"Split by feature"}})
		}
		if day%2 == 1 {
			b.clock.Set(start.Add(time.Duration(day)*24*time.Hour + 5*time.Hour))
			b.record(kaizen.OutcomeInput{TaskID: fmt.Sprintf("filetype-%d", day), Success: ptr(false), ErrorCount: ptr(2),
				Patterns: []string{"Split by file type"}, FailureDetails: "the handlers and their tests drifted apart"})
		}
	}
	// A hook session of the last day, ended by its outcome.
	b.clock.Set(start.Add(6*24*time.Hour + 8*time.Hour))
	for _, ev := range []kaizen.TaskEventInput{
		{Kind: "start", Text: "Add rate limiting to the login endpoint"},
		{Kind: "prompt", Text: "Add rate limiting to the login endpoint, split by feature"},
		{Kind: "tool", ToolName: "Edit"},
		{Kind: "tool_failure", ToolName: "Bash", Message: "go test: FAIL login_test.go"},
		{Kind: "prompt", Text: "fix the failing test"},
	} {
		ev.TaskID, ev.Source = "claude-7f3a9c", "claude"
		if _, err := b.engine.RecordTaskEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(b.clock.Now().Add(3 * time.Minute))
	}
	b.record(kaizen.OutcomeInput{TaskID: "claude-7f3a9c", Success: ptr(true), Patterns: []string{"Split by feature"}, DurationMs: nil})
	res, err := b.engine.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{TaskID: "claude-7f3a9c", Kind: "experience",
		Result: experienceJSON(t, "Rate-limit the login endpoint", "Run the login tests before reporting a rate limit done",
			"changing authentication code", "a lockout shipped once", "go test: FAIL login_test.go")})
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Set(start.Add(7 * 24 * time.Hour))
	return res.Experience.Heuristics[0].HeuristicID
}

// TestOverviewLearned: after a scripted week the overview names the newly
// proven pattern and the new anti-pattern with the outcomes behind them,
// the heuristic created, and the trend with its interval; each item links
// to its explanation.
func TestOverviewLearned(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	heur := scriptedWeek(t, b)
	proven := b.patternID("proj", "Split by feature")
	anti, err := b.engine.GetPattern(context.Background(), "proj", "Split by file type")
	if err != nil {
		t.Fatal(err)
	}
	r := b.must(b.get("/?days=7"), http.StatusOK)
	contains(t, "overview", r.body, "What kaizen learned in the last 7 days",
		`id="new-proven"`, `href="/patterns/`+proven+`?project=proj">Split by feature</a>`, "candidate → proven",
		`id="new-anti-patterns"`, `href="/patterns/`+anti.AntiPatternID+`?project=proj">AVOID: Split by file type`,
		"Failed 3/3 times (100% failure rate)", "3 failed outcome(s) behind it",
		`href="/tasks/filetype-5?project=proj"`, `href="/tasks/feature-6-1?project=proj"`,
		`id="heuristics-created"`, `href="/heuristics/`+heur+`?project=proj">Run the login tests before reporting a rate limit done</a>`,
		`id="trend"`, "This period: 15 of 18 succeeded (83%, 95% interval 61%–94%)", "The period before: no outcomes.",
		`class="area area-interval"`, "Success per bucket with its 95% Wilson interval",
		"No skill was activated.")
	// The items link to their explanations.
	contains(t, "proven pattern's panel", b.must(b.get("/patterns/"+proven), http.StatusOK).body, "feedback says proven")
	// A later period shows nothing new, with what would appear.
	b.clock.Set(start.Add(40 * 24 * time.Hour))
	r = b.must(b.get("/?days=7"), http.StatusOK)
	contains(t, "a quiet week", r.body, "0 new thing(s) learned", "No pattern became proven.", "No pattern was inverted.")
}

// TestOverviewSinceLastVisit: the overview remembers the browser's last
// visit in a cookie and offers what changed since.
func TestOverviewSinceLastVisit(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	r := b.must(b.get("/"), http.StatusOK)
	contains(t, "first visit", r.body, "This is your first visit")
	cookie := r.header.Get("Set-Cookie")
	if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
		t.Fatalf("visit cookie %q", cookie)
	}
	name, value, _ := strings.Cut(strings.Split(cookie, ";")[0], "=")
	visited := b.clock.Now()
	b.clock.Set(visited.Add(2 * time.Hour))
	b.record(kaizen.OutcomeInput{TaskID: "after", Patterns: []string{"Split by feature"}})
	r = b.must(b.do(req{path: "/", header: map[string]string{"Cookie": name + "=" + value}}), http.StatusOK)
	contains(t, "second visit", r.body, "What changed since your last visit ("+visited.UTC().Format("2006-01-02 15:04 UTC")+")",
		`href="/?project=proj&amp;since=visit"`)
	next := strings.Split(r.header.Get("Set-Cookie"), ";")[0]
	r = b.must(b.do(req{path: "/?since=visit", header: map[string]string{"Cookie": next}}), http.StatusOK)
	contains(t, "since the visit", r.body, "What kaizen learned since your last visit", "1 outcome(s)")
	b.must(b.get("/?since=yesterday"), http.StatusBadRequest)
}

// TestTasksPages lists the hook session with its outcome and shows what it
// taught; filters and search narrow the list.
func TestTasksPages(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	scriptedWeek(t, b)
	r := b.must(b.get("/tasks"), http.StatusOK)
	contains(t, "tasks", r.body, `aria-current="page">Tasks`, `href="/tasks/claude-7f3a9c?project=proj">claude-7f3a9c</a>`,
		"Add rate limiting to the login endpoint", "<td class=\"text\">claude</td>", `<span class="ok">success</span>`,
		`known-recorded`, "(1 failed)", `>Split by feature</a>`)
	for path, want := range map[string]string{
		"/tasks?q=rate+limiting":   "claude-7f3a9c",
		"/tasks?source=claude":     "1–1 of 1",
		"/tasks?status=open":       "No tasks match.",
		"/tasks?status=closed":     "1–1 of 1",
		"/tasks?result=failure":    "No tasks match.",
		"/tasks?result=success":    "1–1 of 1",
		"/tasks?q=nothing+like+it": "No tasks match.",
	} {
		contains(t, path, b.must(b.get(path), http.StatusOK).body, want)
	}
	frag := b.must(b.htmx("GET", "/tasks?q=rate", "list", nil), http.StatusOK).body
	if strings.Contains(frag, "<html") || !strings.Contains(frag, "claude-7f3a9c") {
		t.Errorf("list fragment: %s", frag)
	}
	r = b.must(b.get("/tasks/claude-7f3a9c"), http.StatusOK)
	contains(t, "task", r.body, "Task <code class=\"task-id\">claude-7f3a9c</code>", "Add rate limiting to the login endpoint",
		"Tool calls</dt><dd>2, 1 failed", "Retries</dt><dd>1", "Pattern updates", ">Split by feature</a>", "this task: <span class=\"ok\">success</span>",
		"Run the login tests before reporting a rate limit done", "go test: FAIL login_test.go")
	r = b.must(b.get("/tasks/filetype-5"), http.StatusOK)
	contains(t, "explicit outcome", r.body, "Not tracked by hooks", "inverted into", "AVOID: Split by file type")
	b.must(b.get("/tasks/no-such-task"), http.StatusNotFound)
	b.must(b.get("/tasks/"), http.StatusNotFound)
	b.must(b.get("/tasks?status=maybe"), http.StatusBadRequest)
	contains(t, "no tasks", b.must(b.get("/tasks?project=empty"), http.StatusOK).body, "No tasks yet.", "kaizen setup claude")
}

// TestProjectsAndEmptyState: the switcher and the projects page list every
// project with data and its last activity; an empty project tells the
// next steps and where the data is.
func TestProjectsAndEmptyState(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	b.record(kaizen.OutcomeInput{Project: "api", TaskID: "a1", Patterns: []string{"Split by feature"}})
	b.clock.Set(start.Add(3 * time.Hour))
	b.record(kaizen.OutcomeInput{Project: "web", TaskID: "w1", Success: ptr(false)})
	r := b.must(b.get("/"), http.StatusOK)
	contains(t, "empty default project", r.body, "Project proj has no data yet", "its default project",
		"the SQLite file ", "kaizen setup claude", `href="/?project=web">web</a>`, "last active just now",
		`href="/?project=api">api</a>`, "last active 3 h ago",
		`<option value="api">api · 3 h ago</option>`, `<option value="proj" selected>proj · no data yet</option>`)
	r = b.must(b.get("/projects"), http.StatusOK)
	contains(t, "projects", r.body, `aria-current="page">All projects`, `href="/?project=web">web</a>`, "0/1 (0%)", "1/1 (100%)",
		`class="sparkline"`, `aria-label="Success over the last 30 days: 1 of 1 outcomes (100%) on 1 day(s) with outcomes"`)
	if strings.Index(r.body, "?project=web") > strings.Index(r.body, "?project=api\">api") {
		t.Error("projects are not listed most recently active first")
	}
	if strings.Contains(b.must(b.get("/?project=api"), http.StatusOK).body, "has no data yet") {
		t.Error("a project with data shows the empty state")
	}
}

// TestDataActions deletes an outcome, a turn and a memory, edits and
// deletes a heuristic and deletes a skill through the viewer's forms;
// cross-origin posts are refused and change nothing.
func TestDataActions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := seedExperience(t, b, "proj")
	for _, p := range []string{"/outcomes/x/delete", "/turns/x/delete", "/turns/x/forget", "/heuristics/" + s.heuristic + "/edit",
		"/heuristics/" + s.heuristic + "/delete", "/skills/" + s.skill + "/delete"} {
		if r := b.do(req{method: "POST", path: p, form: url.Values{"rule": {"x"}}, header: map[string]string{"Sec-Fetch-Site": "cross-site"}}); r.status != http.StatusForbidden {
			t.Errorf("cross-origin POST %s: %d", p, r.status)
		}
	}
	if _, err := b.engine.GetHeuristic(ctx, "proj", s.heuristic); err != nil {
		t.Fatalf("a cross-origin request deleted the heuristic: %v", err)
	}

	// Delete an outcome: a flash says what was recomputed; the list refreshes.
	res := b.record(kaizen.OutcomeInput{TaskID: "bd-9", Success: ptr(false), Patterns: []string{"Only here"}})
	r := b.must(b.htmx("POST", "/outcomes/"+res.Outcome.ID+"/delete?project=proj", "list", url.Values{}), http.StatusOK)
	contains(t, "delete outcome", r.body, `id="action-flash"`, "Outcome "+res.Outcome.ID+" of task bd-9 deleted", "only this outcome had used it")
	if r.header.Get("HX-Trigger") != "kaizen-refresh" || r.header.Get("HX-Retarget") != "#action-flash" {
		t.Errorf("delete outcome headers: %v", r.header)
	}
	r = b.must(b.htmx("POST", "/outcomes/"+res.Outcome.ID+"/delete?project=proj", "list", url.Values{}), http.StatusNotFound)
	contains(t, "delete twice", r.body, "flash-error", "no outcome")
	// Without JavaScript: 303 back.
	res = b.record(kaizen.OutcomeInput{TaskID: "bd-10"})
	r = b.must(b.do(req{method: "POST", path: "/outcomes/" + res.Outcome.ID + "/delete?project=proj", form: url.Values{"back": {"/tasks/bd-10?project=proj"}},
		header: map[string]string{"Origin": b.ts.URL}}), http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/tasks/bd-10?project=proj" {
		t.Errorf("redirect after delete: %q", loc)
	}
	r = b.must(b.do(req{method: "POST", path: "/outcomes/x/delete", form: url.Values{"back": {"https://evil.example/"}},
		header: map[string]string{"Origin": b.ts.URL}}), http.StatusNotFound)

	// Turns: forget a memory, delete a turn.
	turns, err := b.engine.ListTurns(ctx, kaizen.TurnQuery{Project: "proj", TaskID: "bd-1"})
	if err != nil || len(turns.Items) < 3 {
		t.Fatalf("turns: %v %v", turns, err)
	}
	contains(t, "turns page", b.must(b.get("/turns"), http.StatusOK).body, "Forget memory", `hx-confirm="Delete this turn?`)
	r = b.must(b.htmx("POST", "/turns/"+turns.Items[0].ID+"/forget?project=proj", "", url.Values{}), http.StatusOK)
	contains(t, "forget memory", r.body, "Memory forgotten (the turn is kept): "+turns.Items[0].ID)
	r = b.must(b.htmx("POST", "/turns/"+turns.Items[2].ID+"/delete?project=proj", "", url.Values{}), http.StatusOK)
	contains(t, "delete turn", r.body, "Turn deleted: "+turns.Items[2].ID, "Out of recall")
	if after, _ := b.engine.ListTurns(ctx, kaizen.TurnQuery{Project: "proj", TaskID: "bd-1"}); after.Total != turns.Total-1 {
		t.Errorf("turns after the deletion: %d, want %d", after.Total, turns.Total-1)
	}

	// A heuristic: edited in its panel, then deleted (to its list).
	page := b.must(b.get("/heuristics/"+s.heuristic), http.StatusOK).body
	contains(t, "heuristic page", page, "Edit or delete", `name="rule"`, "Delete heuristic")
	r = b.must(b.htmx("POST", "/heuristics/"+s.heuristic+"/edit?project=proj", "heuristic-panel",
		url.Values{"rule": {"Find the race before you retry a flaky test"}}), http.StatusOK)
	contains(t, "edit", r.body, "Heuristic edited", "Find the race before you retry a flaky test")
	r = b.must(b.htmx("POST", "/heuristics/"+s.heuristic+"/edit?project=proj", "heuristic-panel", url.Values{}), http.StatusBadRequest)
	contains(t, "empty edit", r.body, "give at least one of trigger, rule or why")
	r = b.must(b.htmx("POST", "/heuristics/"+s.heuristic+"/delete?project=proj", "action-flash", url.Values{}), http.StatusOK)
	if r.header.Get("HX-Redirect") != "/heuristics?project=proj" {
		t.Errorf("delete heuristic: HX-Redirect %q", r.header.Get("HX-Redirect"))
	}
	b.must(b.get("/heuristics/"+s.heuristic), http.StatusNotFound)
	// A skill.
	contains(t, "skill page", b.must(b.get("/skills/"+s.skill), http.StatusOK).body, "Delete skill")
	b.must(b.do(req{method: "POST", path: "/skills/" + s.skill + "/delete?project=proj", form: url.Values{},
		header: map[string]string{"Origin": b.ts.URL}}), http.StatusSeeOther)
	b.must(b.get("/skills/"+s.skill), http.StatusNotFound)
}
