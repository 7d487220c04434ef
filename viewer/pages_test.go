package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/viewer"
)

// seed records a small project: a strategy that works, one that fails
// into an anti-pattern, criteria, and errors of two tasks; and a second
// project that must not leak into the first.
func seed(t *testing.T, b *testBundle) {
	t.Helper()
	ctx := context.Background()
	for i := range 6 {
		b.record(kaizen.OutcomeInput{TaskID: fmt.Sprintf("bd-ok-%d", i), Success: ptr(true), ErrorCount: ptr(0),
			Patterns: []string{"Split by feature"}, Criteria: []string{"type_safe", "readable"}})
	}
	for i, ok := range []bool{true, true, false, false, false, false, false} {
		b.record(kaizen.OutcomeInput{TaskID: fmt.Sprintf("bd-ft-%d", i), Success: ptr(ok), ErrorCount: ptr(3),
			Patterns: []string{"Split by file type"}, Criteria: []string{"type_safe", "no_bugs"}})
	}
	for i, msg := range []string{"type mismatch in api.go", "timeout waiting for tests", "merge conflict in go.mod"} {
		typ := []string{"validation", "timeout", "conflict"}[i]
		if _, err := b.engine.RecordError(ctx, kaizen.ErrorInput{TaskID: fmt.Sprintf("bd-err-%d", i%2), Type: typ,
			Message: msg, ToolName: "go", Context: "while testing"}); err != nil {
			t.Fatal(err)
		}
	}
	b.record(kaizen.OutcomeInput{Project: "other", TaskID: "bd-secret", Patterns: []string{"Other project secret pattern"}})
}

func TestPagesRender(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seed(t, b)
	split := b.patternID("proj", "Split by feature")
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{"Overview", "<span class=\"n\">13</span> outcomes", "anti-patterns", "open errors",
			"Success rate, last 30 days", "<svg", "bd-ft-6", "Recent outcomes", `<option value="other">other · `,
			`<option value="proj" selected>proj · `}},
		{"/?days=7", []string{"Success rate, last 7 days"}},
		{"/outcomes", []string{"bd-ok-0", "bd-ft-6", "1–13 of 13"}},
		{"/patterns", []string{"Split by feature", "Split by file type", "inverted", "Decayed helpful", "Multiplier",
			"[PROVEN - 100% helpful from 6 observations]", "[LIMITED DATA - 2 observations]"}},
		{"/patterns/" + split, []string{"Split by feature", "Why", "Promote to proven", "Deprecate", "Reset",
			"maturity.min_helpful", "feedback says proven", "Recent observations", "bd-ok-5"}},
		{"/patterns/" + url.PathEscape("Split by file type"), []string{"inverted into anti-pattern anti-pattern-", "feedback says candidate"}},
		{"/anti-patterns", []string{"AVOID: Split by file type", "Failed 5/7 times (71% failure rate)"}},
		{"/criteria", []string{"type_safe", "no_bugs", "readable", "Decay of", "<svg", "decayed helpful evidence", "weight = max"}},
		{"/criteria?criterion=no_bugs&days=365", []string{"Decay of <em>no_bugs</em>", "+365"}},
		{"/errors", []string{"Errors by task", "bd-err-0", "bd-err-1", "type mismatch in api.go", "merge conflict in go.mod",
			"Resolve"}},
		{"/?project=other", []string{`<option value="other" selected>other · `, "bd-secret"}},
		{"/patterns?project=other", []string{"Other project secret pattern"}},
	} {
		r := b.get(tc.path)
		if r.status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", tc.path, r.status, r.body)
			continue
		}
		if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: content type %q", tc.path, ct)
		}
		if csp := r.header.Get("Content-Security-Policy"); csp != viewer.ContentSecurityPolicy {
			t.Errorf("GET %s: CSP %q", tc.path, csp)
		}
		contains(t, "GET "+tc.path, r.body, tc.want...)
		if !strings.Contains(tc.path, "other") && strings.Contains(r.body, "secret") {
			t.Errorf("GET %s shows another project's data", tc.path)
		}
	}
}

func TestEmptyProjectPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for path, want := range map[string]string{
		"/":              "No outcomes in this period.",
		"/outcomes":      "No outcomes.",
		"/patterns":      "No patterns match.",
		"/anti-patterns": "No anti-patterns match.",
		"/criteria":      "Decay of one feedback event",
		"/errors":        "No errors match.",
		"/explore":       "No exploration sessions match.",
	} {
		r := b.must(b.get(path), http.StatusOK)
		contains(t, path, r.body, want)
	}
}

func TestSearchAndPagination(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 30 {
		b.record(kaizen.OutcomeInput{TaskID: fmt.Sprintf("bd-%02d", i), Patterns: []string{fmt.Sprintf("Pattern number %02d", i)}})
	}
	for i := range 12 {
		if _, err := b.engine.RecordError(context.Background(), kaizen.ErrorInput{TaskID: "bd-e", Message: fmt.Sprintf("failure %02d", i)}); err != nil {
			t.Fatal(err)
		}
	}

	// Patterns: 30, pages of 25 by default.
	r := b.must(b.get("/patterns"), http.StatusOK)
	contains(t, "page 1", r.body, "1–25 of 30", "Next →", "offset=25")
	r = b.must(b.get("/patterns?offset=25"), http.StatusOK)
	contains(t, "page 2", r.body, "26–30 of 30", "← Previous")
	if strings.Contains(r.body, "Next →") {
		t.Error("the last page links to a next page")
	}
	r = b.must(b.get("/patterns?limit=10&offset=10"), http.StatusOK)
	contains(t, "limit", r.body, "11–20 of 30", "limit=10")
	// Search (server side, content substring, case-insensitive).
	r = b.must(b.get("/patterns?q=NUMBER+1"), http.StatusOK)
	contains(t, "search", r.body, "1–10 of 10", "Pattern number 10", "Pattern number 19")
	if strings.Contains(r.body, "Pattern number 20") {
		t.Error("search shows a non-matching pattern")
	}
	r = b.must(b.get("/patterns?state=proven"), http.StatusOK)
	contains(t, "state filter", r.body, "No patterns match.")
	r = b.must(b.get("/patterns?state=candidate&limit=5"), http.StatusOK)
	contains(t, "state filter", r.body, "1–5 of 30")
	r = b.must(b.get("/patterns?tag=nope"), http.StatusOK)
	contains(t, "tag filter", r.body, "No patterns match.")

	// Outcomes by task, paged.
	r = b.must(b.get("/outcomes?limit=7"), http.StatusOK)
	contains(t, "outcomes", r.body, "1–7 of 30")
	r = b.must(b.get("/outcomes?task=bd-07"), http.StatusOK)
	contains(t, "outcome search", r.body, "1–1 of 1", "bd-07")

	// Errors: search, type, paging.
	r = b.must(b.get("/errors?q=failure+1&status=all"), http.StatusOK)
	contains(t, "error search", r.body, "1–2 of 2", "failure 10", "failure 11")
	r = b.must(b.get("/errors?limit=5&offset=10"), http.StatusOK)
	contains(t, "error page", r.body, "11–12 of 12")
	r = b.must(b.get("/errors?type=timeout"), http.StatusOK)
	contains(t, "error type", r.body, "No errors match.")

	// Criteria are searched and paged by the viewer.
	r = b.must(b.get("/criteria?q=bug"), http.StatusOK)
	contains(t, "criteria search", r.body, "1–1 of 1", "no_bugs")
	r = b.must(b.get("/criteria?limit=2&offset=2"), http.StatusOK)
	contains(t, "criteria page", r.body, "3–4 of 4")

	// htmx asks for the list fragment only.
	r = b.must(b.htmx("GET", "/patterns?q=number+2", "list", nil), http.StatusOK)
	if !strings.HasPrefix(r.body, `<div id="list"`) || strings.Contains(r.body, "<html") {
		t.Errorf("htmx list request answered more than the list:\n%.300s", r.body)
	}
	contains(t, "htmx list", r.body, "Pattern number 29", `hx-get="/patterns?project=proj&amp;q=number&#43;2"`)
	// A history restore gets the whole page.
	r = b.must(b.do(req{path: "/patterns", header: map[string]string{"HX-Request": "true", "HX-Target": "list",
		"HX-History-Restore-Request": "true"}}), http.StatusOK)
	contains(t, "history restore", r.body, "<html")
}

func TestBadQueries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{
		"/patterns?offset=-1", "/patterns?limit=0", "/patterns?limit=1001", "/patterns?limit=x",
		"/patterns?state=famous", "/errors?type=bogus", "/errors?status=closed", "/?days=3",
		"/criteria?days=99999", "/outcomes?%zz", "/patterns?q=" + url.QueryEscape(strings.Repeat("x", 1001)),
		"/patterns?project=" + url.QueryEscape("bad project/name\x01"),
	} {
		r := b.get(path)
		if r.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, r.status)
			continue
		}
		contains(t, path, r.body, `class="flash flash-error"`)
		if r.header.Get("Content-Security-Policy") != viewer.ContentSecurityPolicy {
			t.Errorf("GET %s: error page without the viewer's CSP", path)
		}
	}
	r := b.get("/patterns/pattern-doesnotexist")
	if r.status != http.StatusNotFound {
		t.Errorf("unknown pattern: %d", r.status)
	}
	// htmx errors are fragments.
	r = b.htmx("GET", "/patterns?limit=x", "list", nil)
	if r.status != http.StatusBadRequest || !strings.HasPrefix(r.body, `<div class="flash flash-error" role="alert" id="list">`) {
		t.Errorf("htmx error: %d %s", r.status, r.body)
	}
}

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	b := setup(t, withToken("tok-0123456789abcdef"))
	for file, ct := range map[string]string{
		"htmx.min.js": "text/javascript; charset=utf-8",
		"viewer.js":   "text/javascript; charset=utf-8",
		"viewer.css":  "text/css; charset=utf-8",
		"favicon.svg": "image/svg+xml",
	} {
		// Public: the login page needs its stylesheet.
		r := b.must(b.do(req{path: "/static/" + file, noToken: true}), http.StatusOK)
		if r.header.Get("Content-Type") != ct || len(r.body) == 0 {
			t.Errorf("%s: %q, %d bytes", file, r.header.Get("Content-Type"), len(r.body))
		}
		if r.header.Get("Content-Security-Policy") != viewer.ContentSecurityPolicy {
			t.Errorf("%s: CSP %q", file, r.header.Get("Content-Security-Policy"))
		}
		etag := r.header.Get("ETag")
		b.must(b.do(req{path: "/static/" + file, noToken: true, header: map[string]string{"If-None-Match": etag}}), http.StatusNotModified)
	}
	for _, file := range []string{"VENDORED.md", "htmx.LICENSE", "nope.js", "..%2fviewer.go"} {
		if r := b.do(req{path: "/static/" + file, noToken: true}); r.status != http.StatusNotFound {
			t.Errorf("/static/%s: %d", file, r.status)
		}
	}
}

// TestSuccessByDay: the overview's chart buckets outcomes by the UTC day
// they finished, over the chosen period.
func TestSuccessByDay(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	at := func(daysAgo int) string { return start.AddDate(0, 0, -daysAgo).Format("2006-01-02T15:04:05Z") }
	n := 0
	for _, o := range []struct {
		daysAgo int
		ok      bool
	}{{40, true}, {2, true}, {2, false}, {1, true}, {0, true}, {0, true}, {0, false}, {0, true}} {
		// a task holds one outcome: one task per outcome
		n++
		b.record(kaizen.OutcomeInput{TaskID: fmt.Sprint("bd-", n), Success: ptr(o.ok), Timestamp: at(o.daysAgo)})
	}
	r := b.must(b.get("/?days=7"), http.StatusOK)
	contains(t, "overview", r.body, "7 outcome(s) in the period, 71% succeeded.",
		"<tr><td>2025-02-27</td><td>2</td><td>1</td><td>50%</td></tr>",
		"<tr><td>2025-02-28</td><td>1</td><td>1</td><td>100%</td></tr>",
		"<tr><td>2025-03-01</td><td>4</td><td>3</td><td>75%</td></tr>",
		"2025-03-01: 3/4 succeeded (75%)", `<span class="n">8</span> outcomes`)
	if strings.Contains(r.body, "<tr><td>2025-01-20</td>") {
		t.Error("an outcome older than the period is charted")
	}
	r = b.must(b.get("/?days=90"), http.StatusOK)
	contains(t, "90 days", r.body, "8 outcome(s) in the period", "<tr><td>2025-01-20</td><td>1</td><td>1</td><td>100%</td></tr>")
}
