package viewer_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
)

// TestXPBrowser opens the experience pages in headless Chromium (skipped
// without it, as TestBrowser): it judges a heuristic and archives it
// through the forms, and checks that hostile text on every page stays
// text.
func TestXPBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	br := startBrowser(t)
	ctx := context.Background()
	s := seedXP(t, b, "proj")
	heuristic, skill, recall, task := xpPayloads(t, b, "evil")

	// From the list to the heuristic's page.
	br.open(b.ts.URL + "/heuristics")
	br.waitFor("the heuristics list", `return !!window.htmx && document.querySelector("#live").classList.contains("on") && !!document.querySelector("a.heuristic-link")`)
	br.click("a.heuristic-link")
	br.waitFor("the heuristic page", `return location.pathname === arguments[0] && !!window.htmx && !!document.querySelector("#heuristic-panel button.helpful")`,
		"/heuristics/"+s.heuristic)
	br.noConsoleErrors("heuristic page")

	// A helpful verdict with a note, through htmx.
	br.eval(`window.__sameDocument = true; return true`, nil)
	br.typeInto("#feedback-note", "saved me a retry loop")
	br.click("#heuristic-panel button.helpful")
	br.waitFor("the recorded verdict", `var p = document.querySelector("#heuristic-panel");
		return window.__sameDocument === true && !!p && p.innerText.includes("Verdict recorded: helpful.") && p.innerText.includes("2 helpful") && p.innerText.includes("saved me a retry loop")`)
	d, err := b.engine.GetHeuristic(ctx, "proj", s.heuristic)
	if err != nil || d.Heuristic.HelpfulCount != 2 {
		t.Fatalf("after clicking helpful: %+v %v", d, err)
	}
	if last := d.Feedback[len(d.Feedback)-1]; last.Note != "saved me a retry loop" || last.Source != "viewer" {
		t.Errorf("the stored verdict: %+v", last)
	}
	// Archive with a reason, then restore.
	br.typeInto("#archive-reason", "the login flow was rewritten")
	br.click("#heuristic-panel button.archive")
	br.waitFor("the archived state", `var p = document.querySelector("#heuristic-panel");
		return !!p && p.innerText.includes("Action done: archive.") && !!p.querySelector(".state-archived") && !!p.querySelector("button.restore")`)
	br.click("#heuristic-panel button.restore")
	br.waitFor("the restored state", `var p = document.querySelector("#heuristic-panel");
		return !!p && p.innerText.includes("Action done: restore.") && !p.querySelector(".state-archived")`)
	if d, err := b.engine.GetHeuristic(ctx, "proj", s.heuristic); err != nil || d.Heuristic.Status == experience.StatusArchived {
		t.Fatalf("after restore: %+v %v", d, err)
	}
	br.noConsoleErrors("heuristic actions")

	// Hostile text on every page shows as text and never runs.
	q := "?project=evil"
	pages := []struct{ path, title, text string }{
		{"/heuristics" + q, "Heuristics", "Rule <script>alert(1)</script>"},
		{"/heuristics/" + heuristic + q, "Heuristic", "Evidence <script>alert(1)</script>"},
		{"/skills" + q, "Skills", "evil-skill"},
		{"/skills/" + skill + q, "Skill", "[click me](javascript:alert(1))"},
		{"/experiences" + q, "Experiences", task},
		{"/experiences/" + url.PathEscape(task) + q, "Experience", "Goal <script>alert(1)</script>"},
		{"/signals" + q, "Signals", "Signal <script>alert(1)</script>"},
		{"/turns" + q + "&task=" + url.QueryEscape(task), "Turns", "Please fix it <script>alert(1)</script>"},
		{"/recalls" + q, "Recalls", "Rule <script>alert(1)</script>"},
		{"/recalls/" + recall + q, "Recall", "Rule <script>alert(1)</script>"},
	}
	for _, p := range pages {
		br.open(b.ts.URL + p.path)
		br.waitFor(p.path+" loaded", `return document.readyState === "complete" && !!window.htmx && document.title.startsWith(arguments[0])`, p.title)
		var state struct {
			Images, Scripts, JSLinks int
			Text                     bool
		}
		br.eval(`return {Images: document.querySelectorAll("img, svg:not(.meter)").length, Scripts: document.querySelectorAll("script").length,
			JSLinks: document.querySelectorAll("[href^='javascript'], [src^='javascript']").length,
			Text: document.body.innerText.includes(arguments[0])}`, &state, p.text)
		if state.Images != 0 || state.Scripts != 2 || state.JSLinks != 0 {
			t.Errorf("%s: markup from the payloads reached the DOM: %+v", p.path, state)
		}
		if !state.Text {
			t.Errorf("%s: %q is not shown as text", p.path, p.text)
		}
		br.noConsoleErrors(p.path)
	}
}
