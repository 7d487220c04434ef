package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

// tightBudget ends an analyst session within a few rounds (the sequence of
// the engine's own exploration test).
const tightBudget = "max_iterations = 6\nsearch_budget = 4\nsearch_budget_grace = 2\nmax_submits = 0\nsoft_submit_limit = 0\nidle_rounds_to_exit = 2\n"

// toolRound is one round with one tool call.
func toolRound(name string, args map[string]any) []explore.Event {
	return []explore.Event{{Type: explore.EventTick}, {Type: explore.EventToolCall, ToolCall: explore.ToolCall{Name: name, Args: args}},
		{Type: explore.EventEndRound}}
}

// explore feeds events to a session through the engine.
func (b *testBundle) explore(project, id string, events ...explore.Event) *kaizen.ExploreEventResult {
	b.t.Helper()
	b.clock.Advance(10 * time.Second)
	res, err := b.engine.ExploreEvent(context.Background(), kaizen.ExploreEventInput{Project: project, SessionID: id, Events: events})
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// startSession starts a session with a strategy (name or TOML) and budget.
func (b *testBundle) startSession(in kaizen.ExploreStartInput) {
	b.t.Helper()
	if _, err := b.engine.ExploreStart(context.Background(), in); err != nil {
		b.t.Fatal(err)
	}
}

// finishedSession runs Grep rounds on an analyst session with the tight
// budget until it ends: SCAN → EXPLORE → VERIFY → SUMMARIZE, graceful exit
// at round 6, hard_limit in round 8.
func finishedSession(t *testing.T, b *testBundle, project, id string) *kaizen.ExploreEventResult {
	t.Helper()
	b.startSession(kaizen.ExploreStartInput{Project: project, SessionID: id, Strategy: "analyst", BudgetTOML: tightBudget})
	for i := range 12 {
		res := b.explore(project, id, toolRound("Grep", map[string]any{"pattern": fmt.Sprintf("term%d", i%3)})...)
		if res.Session.Done {
			return res
		}
	}
	t.Fatal("the session did not end within its budget")
	return nil
}

// seedExplore records a finished and an active session in proj, and one in
// another project.
func seedExplore(t *testing.T, b *testBundle) {
	t.Helper()
	res := finishedSession(t, b, "proj", "sess-done")
	if res.Session.Exit != "hard_limit" || res.Session.Iteration != 8 {
		t.Fatalf("the engine's session changed: %+v", res.Session)
	}
	b.startSession(kaizen.ExploreStartInput{Project: "proj", SessionID: "sess-active", Strategy: "analyst"})
	b.explore("proj", "sess-active", toolRound("Read", map[string]any{"file_path": "explore/tracker.go"})...)
	b.startSession(kaizen.ExploreStartInput{Project: "other", SessionID: "secret-session", Strategy: "producer"})
}

func TestExplorePages(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	seedExplore(t, b)

	// The list: most recently updated first, with the numbers of each.
	r := b.must(b.get("/explore"), http.StatusOK)
	contains(t, "list", r.body, `aria-current="page">Exploration</a>`, "1–2 of 2",
		`<a class="session-link" href="/explore/sess-done?project=proj">sess-done</a>`,
		`href="/explore/sess-active?project=proj">sess-active</a>`, "ended: hard_limit", `<span class="ok">active</span>`,
		"analyst", "SUMMARIZE", "SCAN", "<td>8</td>", "<td>7</td>", "43%", "2025-03-01 09:01 UTC",
		`data-events="/events?project=proj"`, `id="list" data-live`)
	if i, j := strings.Index(r.body, "sess-active"), strings.Index(r.body, "sess-done"); i < 0 || j < i {
		t.Error("the most recently updated session is not first")
	}
	if strings.Contains(r.body, "secret") {
		t.Error("the list shows another project's session")
	}
	r = b.must(b.get("/explore?status=active"), http.StatusOK)
	contains(t, "active only", r.body, "1–1 of 1", "sess-active", `<option value="active" selected>active only</option>`)
	if strings.Contains(r.body, "sess-done") {
		t.Error("active only shows a finished session")
	}
	r = b.must(b.get("/explore?q=DONE"), http.StatusOK)
	contains(t, "search", r.body, "1–1 of 1", "sess-done")
	r = b.must(b.get("/explore?q=hard_limit&status=active"), http.StatusOK)
	contains(t, "search and filter", r.body, "No exploration sessions match.")
	r = b.must(b.get("/explore?project=other"), http.StatusOK)
	contains(t, "other project", r.body, "secret-session", `<option value="other" selected>other · `)

	// The session page.
	r = b.must(b.get("/explore/sess-done"), http.StatusOK)
	contains(t, "session", r.body,
		"<title>Exploration session sess-done · kaizen</title>", `aria-current="page">Exploration</a>`,
		// Header.
		`<code class="session-id">sess-done</code>`, "ended in round 8: hard_limit</span> · graceful exit started", "<dd><strong>analyst</strong> · pipeline analyst</dd>",
		"<dd>8 of 6 · exit <span class=\"exit\">hard_limit</span> in round 8</dd>", "7 (7 succeeded) · 7 search round(s)", "43% of rounds (3 of 7)",
		"2025-03-01 09:00 UTC / 2025-03-01 09:01 UTC", "2 event(s) after the exit",
		// Budget use: rounds 8 of 6 with the hard limit at 8, search rounds
		// of the current phase against the search budget, no submits.
		"<th scope=\"row\" class=\"text\">Rounds</th>", `<td class="num">8 / 6</td>`, "max_iterations &#43; hard_exit_rounds = 8 rounds",
		"Search rounds in SUMMARIZE", `<td class="num">2 / 4</td>`, "<code>search_budget</code>",
		"This budget allows no submits.", `class="meter meter-over"`, `aria-label="rounds used"`,
		// Timeline: bands per phase, markers, nudges, new information.
		"Phase timeline", `<g class="band phase-0">`, "SCAN: rounds 1–2", "EXPLORE: rounds 3–5", "SUMMARIZE: rounds 6–8",
		`<g class="marker marker-change">`, "round 2: SCAN → EXPLORE (metrics)", "round 6: VERIFY → SUMMARIZE (max_iterations)",
		`<g class="marker marker-exit">`, "exit: hard_limit", `class="mark mark-info"`, "round 1: new information (Grep)",
		`class="mark nudge nudge-force-exit"`, "round 6 · force_exit nudge (SUMMARIZE): The exploration budget is spent.",
		`<span class="key key-phase-2">VERIFY</span>`,
		// Rounds.
		"1–8 of 8", `<tr id="round-6">`, `<span class="call">Grep</span> <span class="muted">search</span> <span class="ok" title="new information">new</span>`,
		`SCAN → EXPLORE <span class="muted">(metrics)</span>`, `<div class="exit">exit: hard_limit</div>`,
		`<span class="nudge-kind nudge-budget-warning">budget_warning</span>`,
		// Nudges given.
		"Nudges given", "Round 6 · <span class=\"nudge-kind nudge-force-exit\">force_exit</span> · phase <span class=\"phase-name\">SUMMARIZE</span>",
		"Do not call any more tools: give your final answer now.", "Write your complete analysis report in Markdown now",
		"<span class=\"nudge-kind nudge-force-exit\">force_exit</span> ×2",
		// Live regions and the project switcher, which leaves the session.
		`id="session-live" data-live hx-get="/explore/sess-done?project=proj"`, `id="nudges" data-live`, `id="list" data-live`,
		`<form class="switcher" method="get" action="/explore">`, `data-events="/events?project=proj"`)
	if strings.Contains(r.body, "secret") {
		t.Error("the session page shows another project")
	}

	// The active session: no exit, new information so far.
	r = b.must(b.get("/explore/sess-active?project=proj"), http.StatusOK)
	contains(t, "active session", r.body, `<span class="ok">active</span>`, "<dd>1 of 24</dd>", "Read",
		"Search rounds in SCAN", "No submit yet.", "max_session_input_tokens</code> 345600")
	if strings.Contains(r.body, "marker-exit") {
		t.Error("an active session shows an exit")
	}

	// The rounds table is filtered, searched and paged on the server.
	r = b.must(b.get("/explore/sess-done?phase=SCAN"), http.StatusOK)
	contains(t, "phase filter", r.body, "1–2 of 2", `<tr id="round-2">`, `<option value="SCAN" selected>SCAN</option>`)
	if strings.Contains(r.body, `<tr id="round-3">`) {
		t.Error("the phase filter shows a round of another phase")
	}
	r = b.must(b.get("/explore/sess-done?q=FORCE_EXIT"), http.StatusOK)
	contains(t, "round search", r.body, "1–2 of 2", `<tr id="round-6">`, `<tr id="round-7">`)
	r = b.must(b.get("/explore/sess-done?limit=3&offset=3"), http.StatusOK)
	contains(t, "round paging", r.body, "4–6 of 8", `rel="prev" href="/explore/sess-done?limit=3&amp;project=proj"`,
		`rel="next" href="/explore/sess-done?limit=3&amp;offset=6&amp;project=proj"`)

	// htmx asks for one live region at a time.
	for target, prefix := range map[string]string{
		"list":         `<div id="list" data-live hx-get="/explore/sess-done?phase=EXPLORE&amp;project=proj"`,
		"session-live": `<div id="session-live" data-live`,
		"nudges":       `<section id="nudges" data-live`,
	} {
		r = b.must(b.htmx("GET", "/explore/sess-done?phase=EXPLORE", target, nil), http.StatusOK)
		if !strings.HasPrefix(r.body, prefix) || strings.Contains(r.body, "<html") {
			t.Errorf("htmx %s: answered\n%.300s", target, r.body)
		}
	}
	r = b.must(b.htmx("GET", "/explore?q=sess", "list", nil), http.StatusOK)
	if !strings.HasPrefix(r.body, `<div id="list"`) {
		t.Errorf("htmx list: %.200s", r.body)
	}
}

// TestExploreNotFound: unknown and missing sessions get the viewer's
// not-found page, and ids are per project.
func TestExploreNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seedExplore(t, b)
	for _, path := range []string{"/explore/nope", "/explore/", "/explore/sess-done?project=other", "/explore/secret-session"} {
		r := b.get(path)
		if r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.status)
			continue
		}
		contains(t, path, r.body, "<h1>404</h1>", `class="flash flash-error"`, `<nav aria-label="Pages">`, `class="switcher"`)
	}
	r := b.must(b.get("/explore/nope"), http.StatusNotFound)
	contains(t, "message", r.body, "no exploration session &#34;nope&#34; in project &#34;proj&#34;")
	// htmx gets an error fragment.
	r = b.htmx("GET", "/explore/nope", "session-live", nil)
	if r.status != http.StatusNotFound || !strings.HasPrefix(r.body, `<div class="flash flash-error" role="alert" id="session-live">`) {
		t.Errorf("htmx not found: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/explore?status=done", "/explore?limit=0", "/explore/sess-done?phase=NOPE",
		"/explore/sess-done?offset=-1", "/explore/" + url.PathEscape(" padded")} {
		if r := b.get(path); r.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, r.status)
		}
	}
}

func TestExploreEmptyAndPaged(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	r := b.must(b.get("/explore"), http.StatusOK)
	contains(t, "empty", r.body, "No exploration sessions match.", "No results")
	for i := range 30 {
		b.clock.Advance(time.Second)
		b.startSession(kaizen.ExploreStartInput{SessionID: fmt.Sprintf("s-%02d", i), Strategy: "producer"})
	}
	r = b.must(b.get("/explore"), http.StatusOK)
	contains(t, "page 1", r.body, "1–25 of 30", "s-29", "s-05", "Next →", "offset=25")
	if strings.Contains(r.body, ">s-04<") {
		t.Error("page 1 shows the 26th session")
	}
	r = b.must(b.get("/explore?offset=25"), http.StatusOK)
	contains(t, "page 2", r.body, "26–30 of 30", "s-04", "s-00", "← Previous")
	// Search pages its matches.
	r = b.must(b.get("/explore?q=s-1&limit=4"), http.StatusOK)
	contains(t, "search page", r.body, "1–4 of 10", "s-19", "s-16", "Next →")
	r = b.must(b.get("/explore?q=s-1&limit=4&offset=8"), http.StatusOK)
	contains(t, "search last page", r.body, "9–10 of 10", "s-11", "s-10")
	// A session without rounds has an empty timeline.
	r = b.must(b.get("/explore/s-00"), http.StatusOK)
	contains(t, "new session", r.body, "No rounds yet.", "No rounds match.", "No nudges yet.", "<dd>0 of 24</dd>")
}

// TestExploreLiveUpdate: an event fed to a session changes the project's
// signature, so open pages refresh their live regions.
func TestExploreLiveUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.startSession(kaizen.ExploreStartInput{SessionID: "live", Strategy: "analyst"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, _ := openStream(ctx, t, b.ts.Client(), b.ts.URL+"/events?project=proj", nil)
	first := next(t, ch)
	page := b.must(b.get("/explore/live"), http.StatusOK).body
	contains(t, "page version", page, `data-version="`+first.data+`"`)
	b.explore("proj", "live", toolRound("Grep", map[string]any{"pattern": "Tracker"})...)
	ev := next(t, ch)
	if ev.name != "version" || ev.data == first.data {
		t.Fatalf("after an exploration event: %+v (before %q)", ev, first.data)
	}
	// The refreshed region shows the round.
	r := b.must(b.htmx("GET", "/explore/live?project=proj", "session-live", nil), http.StatusOK)
	contains(t, "refreshed region", r.body, "<dd>1 of 24</dd>", "round 1: new information (Grep)")
}

// rawTag matches payload tags that the shared rawMarkup pattern misses
// (phase names cannot hold spaces, so their payloads use slashes).
var rawTag = regexp.MustCompile(`(?i)<img[\s/]|<svg/|<script>alert`)

// payloadStrategy is a valid custom strategy whose name, pipeline, phase
// names and nudge texts are payloads.
const payloadStrategy = `
name = '''<script>alert(1)</script>'''
pipeline = '''"><img src=x onerror=alert(1)>'''
summary = '''Summary <script>alert(1)</script> javascript:alert(1)'''
[texts]
force_exit = '''Stop "><img src=x onerror=alert(1)>'''
phase_transition = '''Moved '><svg onload=alert(1)> on'''
budget_warning = '''<script>alert(1)</script> budget'''

[[phase]]
name = '<script>alert(1)</script>'
tool_choice = "required"
enter = '''Enter <script>alert(1)</script>'''

[[phase]]
name = '"><img/src=x/onerror=alert(1)>'

[[phase]]
name = "'><svg/onload=alert(1)>"
tool_choice = "none"

[[transition]]
from = '<script>alert(1)</script>'
to = '"><img/src=x/onerror=alert(1)>'
on_metrics = "iteration >= 2"

[[transition]]
from = '"><img/src=x/onerror=alert(1)>'
to = "'><svg/onload=alert(1)>"
on_metrics = "iteration >= 5"
`

// TestExploreXSS records sessions whose ids, tool names, strategy, phases,
// nudge texts, forced-exit reason and text replies are payloads, and checks
// every exploration page and fragment shows them as text.
func TestExploreXSS(t *testing.T) {
	t.Parallel()
	b := setup(t)
	all := strings.Join([]string{scriptPayload, imgPayload, jsURLPayload, svgPayload}, " ")
	ids := []string{scriptPayload, imgPayload, jsURLPayload, svgPayload, "a/b?c=1#d%2F..", "x&y=<b>"}
	for _, project := range []string{"proj", evilProject} {
		for _, id := range ids {
			b.startSession(kaizen.ExploreStartInput{Project: project, SessionID: id, StrategyTOML: payloadStrategy, BudgetTOML: tightBudget})
			for i, tool := range []string{scriptPayload, imgPayload, svgPayload + jsURLPayload} {
				b.explore(project, id, explore.Event{Type: explore.EventTick},
					explore.Event{Type: explore.EventThought, Text: all},
					explore.Event{Type: explore.EventToolCall, ToolCall: explore.ToolCall{Name: tool,
						Args: map[string]any{"pattern": all + strings.Repeat("x", i)}, Output: all}},
					explore.Event{Type: explore.EventEndRound})
			}
			b.explore(project, id, explore.Event{Type: explore.EventForceTerminal, Reason: all},
				explore.Event{Type: explore.EventTick}, explore.Event{Type: explore.EventText, Text: all})
		}
		p := url.QueryEscape(project)
		pages := []string{
			"/explore?project=" + p,
			"/explore?project=" + p + "&status=active",
			"/explore?project=" + p + "&q=" + url.QueryEscape(scriptPayload),
			"/explore?project=" + p + "&q=" + url.QueryEscape(imgPayload),
			"/explore/" + url.PathEscape(scriptPayload) + "?project=" + p + "&phase=" + url.QueryEscape(scriptPayload),
			"/explore/" + url.PathEscape(imgPayload) + "?project=" + p + "&q=" + url.QueryEscape(svgPayload),
			"/explore/" + url.PathEscape(svgPayload+"nope") + "?project=" + p, // not found, echoing the id
		}
		for _, id := range ids {
			pages = append(pages, "/explore/"+url.PathEscape(id)+"?project="+p)
		}
		for _, path := range pages {
			for _, target := range []string{"", "list", "session-live", "nudges"} {
				var r response
				if target == "" {
					r = b.get(path)
				} else {
					r = b.htmx("GET", path, target, nil)
				}
				if r.status >= 500 || (r.status != http.StatusOK && !strings.Contains(path, "nope")) {
					t.Errorf("GET %s (%q): %d\n%.500s", path, target, r.status, r.body)
				}
				checkEscaped(t, path+" target "+target, r)
				if m := rawTag.FindString(r.body); m != "" {
					i := strings.Index(r.body, m)
					t.Errorf("%s target %s: unescaped %q in …%s…", path, target, m, r.body[max(0, i-200):min(len(r.body), i+100)])
				}
			}
		}
		// Every id links to its own page (ids with / ? # % & are escaped
		// as one path segment).
		list := b.must(b.get("/explore?project="+p), http.StatusOK).body
		for _, id := range ids {
			href := `href="` + strings.ReplaceAll(url.PathEscape(id), "&", "&amp;")
			if !strings.Contains(list, `href="/explore/`+strings.TrimPrefix(href, `href="`)) {
				t.Errorf("list: no link to %q (%s)", id, href)
			}
		}
		// The pages show the payloads, escaped.
		page := b.must(b.get("/explore/"+url.PathEscape(scriptPayload)+"?project="+p), http.StatusOK).body
		contains(t, "session page", page,
			`<code class="session-id">&lt;script&gt;alert(1)&lt;/script&gt;</code>`,
			`<dd><strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong> · pipeline &#34;&gt;&lt;img src=x onerror=alert(1)&gt;</dd>`,
			`<span class="call">&lt;script&gt;alert(1)&lt;/script&gt;</span>`,
			`&lt;script&gt;alert(1)&lt;/script&gt; → &#34;&gt;&lt;img/src=x/onerror=alert(1)&gt;`,
			"Stop &#34;&gt;&lt;img src=x onerror=alert(1)&gt;", "Moved &#39;&gt;&lt;svg onload=alert(1)&gt; on",
			"forced wrap-up: &lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x onerror=alert(1)&gt;",
			"(forced: &lt;script&gt;alert(1)&lt;/script&gt;",
			"<title>Exploration session &lt;script&gt;alert(1)&lt;/script&gt; · kaizen</title>",
			`<text x="`, // phase labels in the SVG
		)
		if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;: round") {
			t.Error("the timeline's band titles do not show the escaped phase name")
		}
	}
}
