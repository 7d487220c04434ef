package viewer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// experienceSeed is what seedExperience recorded.
type experienceSeed struct {
	heuristic string // the heuristic both experiences taught
	skill     string // the skill's id
	recall    string // a stored recall that considered the heuristic
}

// experienceJSON is an agent's experience submission with one lesson.
func experienceJSON(t *testing.T, goal, rule, trigger, why, evidence string) json.RawMessage {
	t.Helper()
	doc := map[string]any{
		"goal":             goal,
		"success_criteria": []string{"the login test passes 100 times in a row"},
		"failed_attempts": []map[string]string{{"attempt_label": "retry", "approach_summary": "retried the failing test",
			"failure_reason": "retries hid the race", "replaced_by": "fixing the race"}},
		"working_approach": "found the race in the session cache and locked it",
		"transferable_heuristics": []map[string]string{{"kind": "avoid", "trigger": trigger, "rule": rule,
			"why": why, "evidence": evidence}},
		"feedback_signals": []map[string]any{{"type": "reject", "source": "user", "evidence": evidence, "turn_id": "t1", "confidence": 0.9}},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// seedExperience records, through the engine, two tasks' turns and experiences
// teaching the same lesson, a skill, a recall and a helpful verdict.
func seedExperience(t *testing.T, b *testBundle, project string) experienceSeed {
	t.Helper()
	ctx := context.Background()
	e := b.engine
	for _, task := range []string{"bd-1", "bd-2"} {
		if _, err := e.Capture(ctx, kaizen.CaptureInput{Project: project, TaskID: task, Source: "cli", Turns: []kaizen.TurnInput{
			{Role: "user", Content: "Please fix the flaky login test in " + task, TurnID: "t1"},
			{Role: "assistant", Content: "I retried the test three times and it passed.", TurnID: "t1"},
			{Role: "user", Content: "No, do not just retry it; find the race condition.", TurnID: "t2"},
		}}); err != nil {
			t.Fatal(err)
		}
		res, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: task, Kind: "experience",
			Result: experienceJSON(t, "Fix the flaky login test ("+task+")", "Do not retry flaky tests to make them pass",
				"a test fails intermittently", "retries hide races", "the user rejected the retry")})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Experience.Heuristics) != 1 {
			t.Fatalf("experience of %s: %+v", task, res.Experience.Heuristics)
		}
	}
	list, err := e.ListHeuristics(ctx, kaizen.HeuristicQuery{Project: project})
	if err != nil || list.Total != 1 {
		t.Fatalf("heuristics after two experiences: %+v %v", list, err)
	}
	s := experienceSeed{heuristic: list.Items[0].ID}
	skill, err := json.Marshal(map[string]any{"name": "fix-flaky-tests", "description": "Fix a flaky test at its cause",
		"when_to_use": "A test passes and fails without code changes.",
		"steps":       []string{"Run the test in a loop until it fails.", "Find the shared state with `go test -race`."},
		"changelog":   "first version", "heuristic_ids": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	sk, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: "bd-1", Kind: "skill", Result: skill})
	if err != nil {
		t.Fatal(err)
	}
	s.skill = sk.Skill.Skill.ID
	rc, err := e.Recall(ctx, kaizen.RecallInput{Project: project, TaskID: "bd-3", Query: "the login test is flaky; retry it?"})
	if err != nil {
		t.Fatal(err)
	}
	s.recall = rc.ID
	if _, err := e.HeuristicFeedback(ctx, kaizen.HeuristicFeedbackInput{Project: project, HeuristicID: s.heuristic,
		Verdict: "helpful", RecallID: rc.ID, Note: "kept me from retrying", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExperiencePages(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	s := seedExperience(t, b, "proj")
	h, err := b.engine.GetHeuristic(context.Background(), "proj", s.heuristic)
	if err != nil {
		t.Fatal(err)
	}

	// Heuristics: the list with its numbers and filters.
	r := b.must(b.get("/heuristics"), http.StatusOK)
	contains(t, "heuristics", r.body, "<title>Heuristics · kaizen</title>", `aria-current="page">Heuristics`,
		`href="/heuristics/`+s.heuristic+`?project=proj">Do not retry flaky tests to make them pass</a>`,
		"when a test fails intermittently", `<span class="state state-`+string(h.Heuristic.Status)+`">`,
		"<td>2</td>", // support tasks and evidence
		`<span class="ok">1</span> / <span class="bad">0</span>`, "1–1 of 1")
	for path, want := range map[string]string{
		"/heuristics?q=flaky":                                          "1–1 of 1",
		"/heuristics?q=nothing+like+it":                                "No heuristics match.",
		"/heuristics?kind=avoid":                                       "1–1 of 1",
		"/heuristics?kind=prefer":                                      "No heuristics match.",
		"/heuristics?status=" + string(h.Heuristic.Status):             "1–1 of 1",
		"/heuristics?status=archived":                                  "No heuristics match.",
		"/heuristics?project=other":                                    "No heuristics match.",
		"/skills?status=archived":                                      "No skills match.",
		"/skills?q=flaky":                                              "1–1 of 1",
		"/signals?task=bd-2":                                           "1–1 of 1",
		"/signals?type=success":                                        "No signals match.",
		"/turns?task=bd-9":                                             "No turns captured.",
		"/recalls?task=bd-9":                                           "No recalls match.",
		"/recalls?ref=" + s.heuristic:                                  "1–1 of 1",
		"/experiences?limit=1&offset=1":                                "2–2 of 2",
		"/heuristics?project=proj&limit=1&q=retry&kind=avoid":          "1–1 of 1",
		"/recalls?project=proj&task=bd-3":                              "1–1 of 1",
		"/signals?project=proj&task=bd-1&type=reject&limit=5":          "1–1 of 1",
		"/turns?project=proj&task=bd-1&limit=2":                        "1–2 of 3",
		"/turns?project=proj&task=bd-1&limit=2&offset=2":               "3–3 of 3",
		"/skills?project=proj&status=" + string(experience.SkillDraft): "1–1 of 1",
	} {
		r := b.must(b.get(path), http.StatusOK)
		contains(t, path, r.body, want)
	}
	r = b.must(b.get("/experiences?limit=1"), http.StatusOK)
	contains(t, "experiences paged", r.body, "1–1 of 2", "Next →", "offset=1")

	// A heuristic's page: rule, trigger, why, numbers, history and forms.
	r = b.must(b.get("/heuristics/"+s.heuristic), http.StatusOK)
	contains(t, "heuristic", r.body, `<h2 id="heuristic-title">Do not retry flaky tests to make them pass</h2>`,
		`<dd class="trigger">a test fails intermittently</dd>`, `<dd class="why-text">retries hide races</dd>`,
		"<dt>Quality weight</dt><dd>"+strconvF2(h.Quality)+"</dd>",
		"2 task(s) · 2 evidence record(s)", `<span class="ok">1 helpful</span>`,
		// lifecycle: created, evidence from bd-2, the verdict on the recall
		"<strong>created</strong>", "<strong>evidence</strong>", "<strong>feedback</strong>",
		"verdict: helpful — kept me from retrying",
		// evidence with similarity and task links
		`<a href="/experiences/bd-1?project=proj">bd-1</a>`, `<a href="/experiences/bd-2?project=proj">bd-2</a>`,
		"<td>created</td><td>1.000</td>",
		// verdicts and recall history link to the recall
		`<a href="/recalls/`+s.recall+`?project=proj">`+s.recall+`</a>`,
		// forms
		`action="/heuristics/`+s.heuristic+`/feedback?project=proj"`, `name="verdict" value="helpful"`,
		`name="verdict" value="misleading"`, `<option value="`+s.recall+`">`,
		`<input type="hidden" name="action" value="archive">`)
	if strings.Contains(r.body, `value="restore"`) {
		t.Error("a live heuristic offers restore")
	}
	if len(h.Evidence) != 2 || h.Evidence[1].Action == experience.EvidenceCreated {
		t.Fatalf("the engine's evidence changed: %+v", h.Evidence)
	}
	contains(t, "heuristic evidence", r.body, "<td>"+string(h.Evidence[1].Action)+"</td><td>"+strconvF3(h.Evidence[1].Similarity)+"</td>")
	// The panel alone for htmx.
	r = b.must(b.htmx("GET", "/heuristics/"+s.heuristic+"?project=proj", "heuristic-panel", nil), http.StatusOK)
	if !strings.HasPrefix(r.body, `<section id="heuristic-panel"`) || strings.Contains(r.body, "<html") {
		t.Errorf("htmx panel request answered more than the panel:\n%.300s", r.body)
	}

	// Skills: list and page with the rendered SKILL.md and its versions.
	r = b.must(b.get("/skills"), http.StatusOK)
	contains(t, "skills", r.body, `href="/skills/`+s.skill+`?project=proj">fix-flaky-tests</a>`,
		`<span class="state state-draft">draft</span>`, "<td>1</td>", "Fix a flaky test at its cause")
	r = b.must(b.get("/skills/"+s.skill), http.StatusOK)
	contains(t, "skill", r.body, `<h2 id="skill-title">fix-flaky-tests</h2>`,
		`<pre class="front-matter">`, "<h3>fix-flaky-tests</h3>", "<h4>When to use</h4>", "<h4>Steps</h4>",
		"<ol><li>Run the test in a loop until it fails.</li><li>Find the shared state with <code>go test -race</code>.</li></ol>",
		`<p>A test passes and fails without code changes.</p>`,
		"<td>1</td>", "first version", `<a href="/experiences/bd-1?project=proj">bd-1</a>`,
		`<input type="hidden" name="status" value="active">`, `<input type="hidden" name="status" value="archived">`,
		`href="/skills/bundle?project=proj&amp;skill=`+s.skill+`"`)
	// By name too.
	b.must(b.get("/skills/fix-flaky-tests"), http.StatusOK)

	// The bundle download.
	r = b.must(b.get("/skills/bundle?skill="+s.skill), http.StatusOK)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("bundle content type %q", ct)
	}
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="fix-flaky-tests.json"` {
		t.Errorf("bundle disposition %q", cd)
	}
	var bundle struct {
		Format string `json:"format"`
		Skills []struct {
			Skill experience.Skill `json:"skill"`
		} `json:"skills"`
	}
	if err := json.Unmarshal([]byte(r.body), &bundle); err != nil || len(bundle.Skills) != 1 || bundle.Skills[0].Skill.Name != "fix-flaky-tests" {
		t.Errorf("bundle: %v %+v", err, bundle)
	}
	r = b.must(b.get("/skills/bundle"), http.StatusOK)
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename="skills.json"` {
		t.Errorf("whole bundle disposition %q", cd)
	}

	// Experiences.
	r = b.must(b.get("/experiences"), http.StatusOK)
	contains(t, "experiences", r.body, `href="/experiences/bd-1?project=proj">bd-1</a>`, "Fix the flaky login test (bd-2)",
		"<td>agent</td>", "1–2 of 2")
	r = b.must(b.get("/experiences/bd-1"), http.StatusOK)
	contains(t, "experience", r.body, `<code class="task-id">bd-1</code>`, "Fix the flaky login test (bd-1)",
		"the login test passes 100 times in a row", "<td class=\"text\">retry</td><td class=\"text\">retried the failing test</td><td class=\"text\">retries hid the race</td><td class=\"text\">fixing the race</td>",
		"found the race in the session cache and locked it",
		"<td>avoid</td><td class=\"text\">a test fails intermittently</td><td class=\"text\">Do not retry flaky tests to make them pass</td>",
		"<td>reject</td><td>user</td><td class=\"text\">the user rejected the retry</td><td><code>t1</code></td><td>0.90</td>",
		`href="/signals?project=proj&amp;task=bd-1"`, `href="/turns?project=proj&amp;task=bd-1"`)

	// Signals and turns.
	r = b.must(b.get("/signals"), http.StatusOK)
	contains(t, "signals", r.body, "1–2 of 2", "the user rejected the retry", "<td>0.90</td>")
	r = b.must(b.get("/turns?task=bd-1"), http.StatusOK)
	contains(t, "turns", r.body, `<code class="task-id">bd-1</code>`, "Please fix the flaky login test in bd-1",
		"No, do not just retry it; find the race condition.", "1–3 of 3")
	if strings.Contains(r.body, "in bd-2") {
		t.Error("the turns of bd-1 show bd-2's")
	}

	// Recalls.
	recalls, err := b.engine.ListRecalls(context.Background(), kaizen.RecallQuery{Project: "proj"})
	if err != nil || recalls.Total != 1 {
		t.Fatalf("recalls: %+v %v", recalls, err)
	}
	rc := recalls.Items[0]
	r = b.must(b.get("/recalls"), http.StatusOK)
	contains(t, "recalls", r.body, `href="/recalls/`+s.recall+`?project=proj">`, "the login test is flaky; retry it?",
		"<td>"+itoa(len(rc.Items))+"</td>")
	r = b.must(b.get("/recalls/"+s.recall), http.StatusOK)
	contains(t, "recall", r.body, "<h1>Recall <code>"+s.recall+"</code></h1>", `<pre class="query">the login test is flaky; retry it?</pre>`,
		itoa(len(rc.Items))+" considered")
	for _, it := range rc.Items {
		switch it.Kind {
		case experience.ItemHeuristic:
			contains(t, "recall heuristic", r.body, `<a href="/heuristics/`+it.RefID+`?project=proj">Do not retry flaky tests to make them pass</a>`,
				"<td>"+strconvF3(it.Score)+"</td>\n        <td>"+strconvF3(it.Topic)+"</td>\n        <td>"+strconvF3(it.Trigger)+"</td>\n        <td>"+strconvF3(it.Quality)+"</td>")
		case experience.ItemMemory:
			contains(t, "recall memory", r.body, "<code>"+it.RefID+"</code>")
		}
	}
	if !slices.ContainsFunc(rc.Items, func(it experience.RecallItem) bool {
		return it.Kind == experience.ItemHeuristic && it.RefID == s.heuristic
	}) {
		t.Errorf("the recall did not consider the heuristic: %+v", rc.Items)
	}
}

func TestExperienceNotFoundAndBadQueries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seedExperience(t, b, "proj")
	for _, path := range []string{
		"/heuristics?status=bogus", "/heuristics?kind=bogus", "/heuristics?limit=0", "/heuristics?offset=-1",
		"/heuristics?q=" + url.QueryEscape(strings.Repeat("x", 300)), // over the engine's 256 bytes
		"/skills?status=bogus", "/signals?type=bogus", "/experiences?limit=201", "/turns?limit=x", "/recalls?offset=x",
		"/heuristics?%zz",
	} {
		r := b.get(path)
		if r.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400\n%.500s", path, r.status, r.body)
			continue
		}
		contains(t, path, r.body, `class="flash flash-error"`)
	}
	for _, path := range []string{
		"/heuristics/heur-nope", "/heuristics/", "/skills/nope", "/skills/", "/experiences/bd-nope", "/experiences/",
		"/recalls/recall-nope", "/recalls/", "/skills/bundle?skill=nope", "/skills/bundle?skill=" + url.QueryEscape("two\nlines"),
		"/heuristics/heur-nope?project=other",
	} {
		r := b.get(path)
		if r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404\n%.500s", path, r.status, r.body)
		}
	}
	// Ids are per project.
	list, err := b.engine.ListHeuristics(context.Background(), kaizen.HeuristicQuery{Project: "proj"})
	if err != nil {
		t.Fatal(err)
	}
	if r := b.get("/heuristics/" + list.Items[0].ID + "?project=other"); r.status != http.StatusNotFound {
		t.Errorf("a heuristic of proj shown in other: %d", r.status)
	}
	// The not-found page of the engine names the listing.
	r := b.get("/heuristics/heur-nope")
	contains(t, "not found", r.body, "no heuristic heur-nope in project proj")
}

func TestExperienceEmptyPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for path, want := range map[string]string{
		"/heuristics":  "No heuristics match.",
		"/skills":      "No skills match.",
		"/experiences": "No experiences yet.",
		"/signals":     "No signals match.",
		"/turns":       "No turns captured.",
		"/recalls":     "No recalls match.",
	} {
		r := b.must(b.get(path), http.StatusOK)
		contains(t, path, r.body, want, `data-live hx-get="`+path+`?project=proj"`)
		// htmx asks for the list only.
		r = b.must(b.htmx("GET", path, "list", nil), http.StatusOK)
		if !strings.HasPrefix(r.body, `<div id="list"`) {
			t.Errorf("%s: htmx list: %.200s", path, r.body)
		}
	}
}

func TestExperienceHeuristicActions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := seedExperience(t, b, "proj")
	ctx := context.Background()
	path := "/heuristics/" + s.heuristic
	get := func() *kaizen.HeuristicDetail {
		t.Helper()
		d, err := b.engine.GetHeuristic(ctx, "proj", s.heuristic)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	// A misleading verdict through htmx: the panel with the result.
	r := b.must(b.htmx("POST", path+"/feedback?project=proj", "heuristic-panel",
		url.Values{"verdict": {"misleading"}, "note": {"it was a real timeout"}, "recall_id": {s.recall}}), http.StatusOK)
	if !strings.HasPrefix(r.body, `<section id="heuristic-panel"`) {
		t.Errorf("feedback answered more than the panel: %.200s", r.body)
	}
	contains(t, "feedback", r.body, "Verdict recorded: misleading.", `<span class="bad">1 misleading</span>`, "it was a real timeout")
	if r.header.Get("HX-Trigger") != "kaizen-refresh" {
		t.Errorf("feedback HX-Trigger %q", r.header.Get("HX-Trigger"))
	}
	d := get()
	if d.Heuristic.MisleadingCount != 1 || len(d.Feedback) != 2 {
		t.Fatalf("after a misleading verdict: %+v", d.Heuristic)
	}
	last := d.Feedback[len(d.Feedback)-1]
	if last.Verdict != experience.VerdictMisleading || last.Source != "viewer" || last.RecallID != s.recall || last.TaskID != "bd-3" {
		t.Errorf("the stored verdict: %+v", last)
	}

	// The engine's refusals are shown in the panel with its status.
	r = b.must(b.htmx("POST", path+"/feedback?project=proj", "heuristic-panel", url.Values{"verdict": {"great"}}), http.StatusBadRequest)
	contains(t, "bad verdict", r.body, `class="flash flash-error"`, "must be helpful or misleading")
	r = b.must(b.htmx("POST", path+"/action?project=proj", "heuristic-panel", url.Values{"action": {"archive"}}), http.StatusBadRequest)
	contains(t, "archive without reason", r.body, `class="flash flash-error"`, "reason")
	r = b.must(b.htmx("POST", path+"/action?project=proj", "heuristic-panel", url.Values{"action": {"restore"}}), http.StatusConflict)
	contains(t, "restore a live heuristic", r.body, "only stale or archived heuristics can be restored")
	r = b.must(b.htmx("POST", path+"/action?project=proj", "heuristic-panel", url.Values{"action": {"supersede"}, "by": {"heur-nope"}}), http.StatusNotFound)
	contains(t, "supersede by an unknown heuristic", r.body, "no heuristic heur-nope")
	if got := get().Heuristic.Status; got == experience.StatusArchived || got == experience.StatusStale {
		t.Fatalf("a refused action changed the status: %s", got)
	}

	// Archive with a reason, as a plain form post: 303 back to the page.
	r = b.must(b.do(req{method: "POST", path: path + "/action?project=proj",
		form: url.Values{"action": {"archive"}, "reason": {"the login flow was rewritten"}}}), http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != path+"?project=proj" {
		t.Errorf("archive redirects to %q", loc)
	}
	if h := get().Heuristic; h.Status != experience.StatusArchived || !strings.Contains(h.StatusReason, "the login flow was rewritten") {
		t.Fatalf("after archive: %s %q", h.Status, h.StatusReason)
	}
	r = b.must(b.get(path), http.StatusOK)
	contains(t, "archived page", r.body, `<span class="state state-archived">archived</span>`, "not recalled",
		`value="restore"`, "the login flow was rewritten")
	if strings.Contains(r.body, `value="archive"`) {
		t.Error("an archived heuristic offers archive")
	}
	// Restore through htmx: the transition is shown.
	r = b.must(b.htmx("POST", path+"/action?project=proj", "heuristic-panel", url.Values{"action": {"restore"}}), http.StatusOK)
	restored := get().Heuristic
	if restored.Status == experience.StatusArchived {
		t.Fatal("restore did not change the status")
	}
	contains(t, "restore", r.body, "Action done: restore.", "archived → "+string(restored.Status))

	// Unknown heuristic: 404 page; wrong content type: 415.
	b.must(b.htmx("POST", "/heuristics/heur-nope/feedback?project=proj", "heuristic-panel", url.Values{"verdict": {"helpful"}}), http.StatusNotFound)
	b.must(b.do(req{method: "POST", path: path + "/feedback", header: map[string]string{"Content-Type": "application/json"}}), http.StatusUnsupportedMediaType)
	// Cross-origin posts are refused before the viewer.
	r = b.do(req{method: "POST", path: path + "/feedback", form: url.Values{"verdict": {"helpful"}},
		header: map[string]string{"Sec-Fetch-Site": "cross-site"}})
	if r.status != http.StatusForbidden {
		t.Errorf("cross-site feedback: %d", r.status)
	}
	if n := get().Heuristic.HelpfulCount; n != 1 {
		t.Errorf("helpful count %d after refused posts, want 1", n)
	}
}

func TestExperienceSkillStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := seedExperience(t, b, "proj")
	path := "/skills/" + s.skill
	r := b.must(b.htmx("POST", path+"/status?project=proj", "skill-panel", url.Values{"status": {"active"}}), http.StatusOK)
	contains(t, "activate", r.body, "Skill active.", `<span class="state state-active">active</span>`)
	if strings.Contains(r.body, `name="status" value="active"`) {
		t.Error("an active skill offers activate")
	}
	// active → draft is refused by the engine.
	r = b.must(b.htmx("POST", path+"/status?project=proj", "skill-panel", url.Values{"status": {"draft"}}), http.StatusConflict)
	contains(t, "refused", r.body, `class="flash flash-error"`, "cannot become draft")
	r = b.must(b.htmx("POST", path+"/status?project=proj", "skill-panel", url.Values{"status": {"bogus"}}), http.StatusBadRequest)
	contains(t, "bad status", r.body, "unknown status")
	// Archive as a plain form post.
	r = b.must(b.do(req{method: "POST", path: path + "/status?project=proj", form: url.Values{"status": {"archived"}}}), http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != path+"?project=proj" {
		t.Errorf("archive redirects to %q", loc)
	}
	d, err := b.engine.GetSkill(context.Background(), "proj", s.skill)
	if err != nil || d.Skill.Status != experience.SkillArchived {
		t.Fatalf("after archive: %+v %v", d, err)
	}
	r = b.must(b.get("/skills?status=archived"), http.StatusOK)
	contains(t, "archived list", r.body, "fix-flaky-tests", "1–1 of 1")
}

func strconvF2(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
func strconvF3(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
func itoa(n int) string          { return strconv.Itoa(n) }
