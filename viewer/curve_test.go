package viewer_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// TestLearningCurvePage: after the scripted week the learning curve page
// and the overview's section draw the rolling rate with its interval and
// the cumulative rate, mark where "Split by feature" became proven and
// "Split by file type" was inverted with pins linked to the patterns'
// panels, and list the changes with their outcomes, tasks and numbers.
func TestLearningCurvePage(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	scriptedWeek(t, b)
	proven := b.patternID("proj", "Split by feature")
	filetype := b.patternID("proj", "Split by file type")
	r := b.must(b.get("/learning"), http.StatusOK)
	contains(t, "learning page", r.body, "<h1>Learning curve", `aria-current="page">Learning curve</a>`,
		`role="img" aria-label="Learning curve: success rate of the last 20 outcomes with its 95% interval, and the cumulative rate, over 18 outcomes; 2 guidance change(s) marked"`,
		`class="area area-interval"`, `class="series series-rate"`, `class="series series-cumulative"`,
		`<a class="pin pin-proven" href="/patterns/`+proven+`?project=proj">`,
		`<a class="pin pin-anti" href="/patterns/`+filetype+`?project=proj">`,
		"Outcome #7, ", "Split by feature became proven (decayed helpful",
		"Outcome #15, ", "Split by file type inverted into an anti-pattern (Failed 3/3 times (100% failure rate))",
		// The changes, newest first, with links.
		`<td>#15</td>`, `<a href="/tasks/filetype-5?project=proj">filetype-5</a>`,
		`<td>#7</td>`, `<a href="/tasks/feature-2-1?project=proj">feature-2-1</a>`,
		"Over 18 outcome(s): 15 of 18 succeeded (83%, 95% interval 61%–94%). The project has no more outcomes than the window (20)",
		"The guidance changed 2 time(s): 1 became proven, 1 inverted into anti-patterns.",
		// The text equivalent.
		"Success of the last 20 outcomes at each outcome", "<td>#18</td>", "15 of 18")
	if changes := r.body[strings.Index(r.body, `id="changes-title"`):]; strings.Index(changes, "<td>#15</td>") > strings.Index(changes, "<td>#7</td>") {
		t.Error("changes are not newest first")
	}
	// A smaller window; the fragment; bad windows.
	r = b.must(b.get("/learning?window=5"), http.StatusOK)
	contains(t, "window 5", r.body, "success rate of the last 5 outcomes", `<option value="5" selected>`,
		"Over 18 outcomes, the success of the last 5 went from 4 of 5 succeeded (80%", "to 4 of 5 succeeded (80%")
	r = b.must(b.get("/learning?window=7"), http.StatusOK)
	contains(t, "window 7", r.body, `<option value="7" selected>last 7 outcomes</option>`)
	f := b.htmx("GET", "/learning?project=proj&window=5", "list", nil)
	contains(t, "fragment", f.body, `id="list"`, `class="pin pin-proven"`)
	if strings.Contains(f.body, "<header") {
		t.Error("the fragment has the page's header")
	}
	for _, bad := range []string{"0", "1001", "abc", "-3"} {
		contains(t, "window "+bad, b.must(b.get("/learning?window="+bad), http.StatusBadRequest).body, "window")
	}
	// The overview's section, between the trend and the new proven patterns.
	r = b.must(b.get("/?days=7"), http.StatusOK)
	contains(t, "overview", r.body, `id="learning-curve"`, `<a class="pin pin-proven" href="/patterns/`+proven+`?project=proj">`,
		`href="/learning?project=proj">The learning curve and every change of the guidance`,
		"at outcome #15", "the outcome that made it")
	trend, curve, newProven := strings.Index(r.body, `id="trend"`), strings.Index(r.body, `id="learning-curve"`), strings.Index(r.body, `id="new-proven"`)
	if !(trend < curve && curve < newProven) {
		t.Errorf("section order: trend %d, curve %d, new proven %d", trend, curve, newProven)
	}
	// The curve's items are context: the count of new things is the
	// other sections'.
	contains(t, "new things", r.body, "3 new thing(s) learned")
}

// TestLearningCurveEmpty: a project without outcomes says how the curve
// starts; a manual promotion shows as a change by hand.
func TestLearningCurveEmpty(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	r := b.must(b.get("/learning?project=empty"), http.StatusOK)
	contains(t, "empty", r.body, "No outcomes yet: the curve starts with the first recorded outcome.", "The guidance has not changed yet.")
	contains(t, "empty overview", b.must(b.get("/?project=empty"), http.StatusOK).body, `id="learning-curve"`, "No outcomes yet. The curve shows")
	b.record(kaizen.OutcomeInput{TaskID: "one", Success: ptr(true), Patterns: []string{"Write the test first"}})
	id := b.patternID("proj", "Write the test first")
	if _, err := b.engine.PromotePattern(context.Background(), kaizen.ManualInput{Project: "proj", Pattern: id, Reason: "team rule"}); err != nil {
		t.Fatal(err)
	}
	r = b.must(b.get("/learning"), http.StatusOK)
	contains(t, "one outcome", r.body, "became proven (by hand)", "promoted by hand: team rule", `class="pin pin-proven"`, "<td>#1</td>")
}
