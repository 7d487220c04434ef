package viewer_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// screensDir is where TestLearnedBrowser keeps its screenshots: with
// KAIZEN_SCREENSHOTS=1 the committed set in docs/viewer/screens (linked
// from docs/viewer.md), regenerated; otherwise a directory of the test's.
func screensDir(t *testing.T) string {
	t.Helper()
	if os.Getenv("KAIZEN_SCREENSHOTS") == "1" {
		dir := filepath.Join("..", "docs", "viewer", "screens")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// resize sets the browser window's size.
func (b *browser) resize(width, height int) {
	b.t.Helper()
	b.must("POST", "/window/rect", map[string]int{"width": width, "height": height}, nil)
}

// TestLearnedBrowser drives the overview, the tasks pages and a
// heuristic's deletion in headless Chromium after a scripted week: the
// overview names the newly proven pattern and the new anti-pattern, the
// learning curve names the pattern that became proven and its pin leads
// to the pattern's panel, the tasks page lists the hook sessions with
// their outcomes (one inferred), deleting a heuristic
// through its page removes it from recall and from the next export, no
// page logs a console error, no page is wider than a 420 px window, and
// every page is photographed at 1400 and 420 px.
func TestLearnedBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	br := startBrowser(t)
	ctx := context.Background()
	s := seedExperience(t, b, "proj")
	heur := scriptedWeek(t, b)
	finishedSession(t, b, "proj", "sess-done")
	inferredSession(t, b, "claude-b41d02") // closed by the hooks: its outcome is inferred
	if _, err := b.engine.RecordError(ctx, kaizen.ErrorInput{TaskID: "feature-6-1", Type: "timeout", Message: "go test timed out after 10m"}); err != nil {
		t.Fatal(err)
	}
	ready := `return document.readyState === "complete" && !!window.htmx && document.querySelector("#live").classList.contains("on")`

	// The overview after the week names what was learned.
	br.open(b.ts.URL + "/?days=7")
	br.waitFor("the overview", ready)
	var learned struct {
		Proven, Anti, Trend string
	}
	br.eval(`var t = function (id) { var e = document.getElementById(id); return e ? e.innerText : ""; };
		return {proven: t("new-proven"), anti: t("new-anti-patterns"), trend: t("trend")}`, &learned)
	if !strings.Contains(learned.Proven, "Split by feature") || !strings.Contains(learned.Proven, "candidate → proven") {
		t.Errorf("the overview's proven section: %q", learned.Proven)
	}
	if !strings.Contains(learned.Anti, "AVOID: Split by file type") || !strings.Contains(learned.Anti, "filetype-5") {
		t.Errorf("the overview's anti-pattern section: %q", learned.Anti)
	}
	if !strings.Contains(learned.Trend, "95% interval") {
		t.Errorf("the overview's trend: %q", learned.Trend)
	}
	br.noConsoleErrors("overview")
	// Its items lead to their explanations.
	br.click(`#new-proven a.item-title`)
	br.waitFor("the proven pattern's panel", `return location.pathname.startsWith("/patterns/") && !!document.querySelector("#pattern-panel") &&
		document.querySelector("#pattern-panel").innerText.includes("Split by feature")`)
	br.noConsoleErrors("pattern from the overview")

	// The learning curve names the pattern that became proven, at its
	// outcome, on the overview and on its page; its pin leads to the
	// pattern's "why" panel.
	br.open(b.ts.URL + "/?days=7")
	br.waitFor("the overview", ready)
	var curve string
	br.eval(`var e = document.getElementById("learning-curve"); return e ? e.innerText : ""`, &curve)
	if !strings.Contains(curve, "Split by feature") || !strings.Contains(curve, "became proven") || !strings.Contains(curve, "at outcome #7") {
		t.Errorf("the overview's learning curve: %q", curve)
	}
	br.open(b.ts.URL + "/learning")
	br.waitFor("the learning curve", ready)
	var page struct {
		Changes, Label string
		Pins           int
	}
	br.eval(`var c = document.querySelector("table.curve-changes"), s = document.querySelector("#list svg[role=img]");
		return {changes: c ? c.innerText : "", label: s ? s.getAttribute("aria-label") : "", pins: document.querySelectorAll("#list svg a.pin").length}`, &page)
	if !strings.Contains(page.Changes, "Split by feature") || !strings.Contains(page.Changes, "became proven") ||
		!strings.Contains(page.Changes, "feature-2-1") || !strings.Contains(page.Changes, "inverted into an anti-pattern") {
		t.Errorf("the learning curve's changes: %q", page.Changes)
	}
	if page.Pins != 2 || !strings.Contains(page.Label, "2 guidance change(s) marked") {
		t.Errorf("the learning curve's chart: %d pins, label %q", page.Pins, page.Label)
	}
	br.noConsoleErrors("learning curve")
	// The window selector reloads the page with a smaller window.
	br.eval(`var s = document.querySelector("#window"); s.value = "5"; s.dispatchEvent(new Event("change", {bubbles: true})); return true`, nil)
	br.waitFor("the learning curve with a window of 5", `return location.search.includes("window=5") && !!document.querySelector("#list svg[role=img]") &&
		document.querySelector("#list svg[role=img]").getAttribute("aria-label").includes("last 5 outcomes")`)
	br.noConsoleErrors("learning curve window")
	br.click(`#list svg a.pin.pin-proven`)
	br.waitFor("the proven pattern's panel from its pin", `return location.pathname.startsWith("/patterns/") && !!document.querySelector("#pattern-panel") &&
		document.querySelector("#pattern-panel").innerText.includes("Split by feature")`)
	br.noConsoleErrors("pattern from the learning curve")

	// The tasks page lists the hook session with its outcome.
	br.open(b.ts.URL + "/tasks")
	br.waitFor("the tasks page", ready)
	var row string
	br.eval(`var a = document.querySelector('a.task-link[href^="/tasks/claude-7f3a9c"]'); return a ? a.closest("tr").innerText : ""`, &row)
	if !strings.Contains(row, "claude") || !strings.Contains(row, "success") || !strings.Contains(row, "Split by feature") {
		t.Errorf("the hook session's row: %q", row)
	}
	br.eval(`var a = document.querySelector('a.task-link[href^="/tasks/claude-b41d02"]'); return a ? a.closest("tr").innerText : ""`, &row)
	if !strings.Contains(row, "claude") || !strings.Contains(row, "success inferred") {
		t.Errorf("the hook session with an inferred outcome: %q", row)
	}
	br.typeInto("#q", "rate limiting")
	br.waitFor("the task search", `var l = document.querySelector("#list"); return !!l && l.innerText.includes("1–1 of 1") && location.search.includes("q=rate")`)
	br.click(`a.task-link`)
	br.waitFor("the task page", `return location.pathname === "/tasks/claude-7f3a9c" && document.body.innerText.includes("What kaizen learned from it")`)
	br.noConsoleErrors("tasks")

	// Every page at 1400 and 420 px: no console error, nothing wider than
	// the window, a screenshot.
	dir := screensDir(t)
	rec, err := b.engine.ListRecalls(ctx, kaizen.RecallQuery{Project: "proj", Limit: 1})
	if err != nil || len(rec.Items) == 0 {
		t.Fatalf("recalls: %v %v", rec, err)
	}
	pages := []struct{ name, path string }{
		{"overview", "/?days=7"}, {"learning", "/learning?window=5"}, {"tasks", "/tasks"}, {"task", "/tasks/claude-7f3a9c"}, {"projects", "/projects"},
		{"patterns", "/patterns"}, {"pattern", "/patterns/" + b.patternID("proj", "Split by feature")},
		{"anti-patterns", "/anti-patterns"}, {"criteria", "/criteria"}, {"outcomes", "/outcomes"}, {"errors", "/errors"},
		{"explore", "/explore"}, {"explore-session", "/explore/sess-done"}, {"heuristics", "/heuristics"},
		{"heuristic", "/heuristics/" + heur}, {"skills", "/skills"}, {"skill", "/skills/" + s.skill},
		{"experiences", "/experiences"}, {"experience", "/experiences/bd-1"}, {"signals", "/signals"}, {"turns", "/turns"},
		{"recalls", "/recalls"}, {"recall", "/recalls/" + rec.Items[0].ID},
	}
	for _, size := range []struct{ w, h int }{{1400, 1000}, {420, 900}} {
		br.resize(size.w, size.h)
		for _, p := range pages {
			br.open(b.ts.URL + p.path)
			br.waitFor(p.path, ready)
			var overflow struct {
				Doc, Win int
				Wide     string
			}
			br.eval(`var w = document.documentElement.clientWidth, wide = "";
				document.querySelectorAll("body *").forEach(function (e) {
					var r = e.getBoundingClientRect();
					if (r.right > w + 1 && (!wide || e.parentElement.getBoundingClientRect().right <= w + 1)) { wide = e.tagName + "." + e.className + " in " + e.parentElement.tagName + "." + e.parentElement.className + "#" + e.parentElement.id; }
				});
				return {doc: document.documentElement.scrollWidth, win: w, wide: wide}`, &overflow)
			if overflow.Doc > overflow.Win+1 {
				t.Errorf("%s at %d px: the page is %d px wide (%s)", p.path, size.w, overflow.Doc, overflow.Wide)
			}
			br.noConsoleErrors(p.path)
			shot := br.screenshot(filepath.Join(dir, p.name+"-"+itoa(size.w)+".png"))
			if data, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("screenshot %s: %v", shot, err)
			}
		}
	}
	t.Logf("screenshots in %s", dir)
	br.resize(1400, 1000)

	// Delete a heuristic through its page: it leaves recall and the export.
	query := "rate limit done login tests"
	if !recalled(t, b, query, heur) {
		t.Fatal("the heuristic is not recalled before the deletion")
	}
	br.open(b.ts.URL + "/heuristics/" + url.PathEscape(heur))
	br.waitFor("the heuristic page", ready)
	br.click("details.edit summary")
	br.eval(`window.confirm = function () { return true; }; return true`, nil)
	br.click("form.delete-form button.delete")
	br.waitFor("the heuristics list after the deletion", `return location.pathname === "/heuristics" && !!window.htmx &&
		!document.body.innerText.includes("Run the login tests before reporting a rate limit done")`)
	br.noConsoleErrors("delete heuristic")
	if recalled(t, b, query, heur) {
		t.Error("the deleted heuristic is still recalled")
	}
	var out bytes.Buffer
	if _, err := b.engine.Export(ctx, &out, kaizen.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), heur) || strings.Contains(out.String(), "Run the login tests before reporting") {
		t.Error("the deleted heuristic is in the next export")
	}
}

// recalled reports whether a dry-run recall of query considers the item.
func recalled(t *testing.T, b *testBundle, query, id string) bool {
	t.Helper()
	rec, err := b.engine.Recall(context.Background(), kaizen.RecallInput{Project: "proj", Query: query, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range rec.Items {
		if it.RefID == id {
			return true
		}
	}
	return false
}
