package viewer_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// TestExperienceBrowser opens the experience pages in headless Chromium (skipped
// without it, as TestBrowser): it judges a heuristic and archives it
// through the forms, and checks that hostile text on every page stays
// text.
func TestExperienceBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	br := startBrowser(t)
	ctx := context.Background()
	s := seedExperience(t, b, "proj")
	heuristic, skill, recall, task := experiencePayloads(t, b, "evil")

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

	// Live updates from outside the page. A turn captured through the
	// engine (a tool turn: nothing is indexed for recall) appears in the
	// filtered turns list without a reload, and the filter keeps its text.
	br.open(b.ts.URL + "/turns")
	br.waitFor("the turns list", `return !!window.htmx && document.querySelector("#live").classList.contains("on") && !!document.querySelector("#list tbody")`)
	br.typeInto("#task", "bd-2")
	br.waitFor("the filtered turns", `return location.search.includes("task=bd-2") && document.querySelector("#list").innerText.includes("1–3 of 3")`)
	br.eval(`window.__sameDocument = true; return true`, nil)
	if _, err := b.engine.Capture(ctx, kaizen.CaptureInput{Project: "proj", TaskID: "bd-2", Source: "cli",
		Turns: []kaizen.TurnInput{{Role: "tool", Content: "go test -race: a live turn from the engine"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.engine.Capture(ctx, kaizen.CaptureInput{Project: "proj", TaskID: "bd-1", Source: "cli",
		Turns: []kaizen.TurnInput{{Role: "tool", Content: "a turn of another task"}}}); err != nil {
		t.Fatal(err)
	}
	br.waitFor("the live turn", `var l = document.querySelector("#list");
		return window.__sameDocument === true && l.innerText.includes("a live turn from the engine") && l.innerText.includes("1–4 of 4")`)
	var filter struct {
		Value string
		Other bool
	}
	br.eval(`return {Value: document.querySelector("#task").value, Other: document.querySelector("#list").innerText.includes("a turn of another task")}`, &filter)
	if filter.Value != "bd-2" || filter.Other {
		t.Errorf("the filter after a live update: %+v", filter)
	}

	// A half-filled form in a live region keeps its input while the
	// engine changes what the region shows: the region waits, and
	// catches up once the form is left empty.
	br.open(b.ts.URL + "/heuristics/" + s.heuristic)
	br.waitFor("the heuristic page", `return !!window.htmx && document.querySelector("#live").classList.contains("on") && !!document.querySelector("#archive-reason")`)
	br.typeInto("#archive-reason", "half a reas")
	var before string
	br.eval(`window.__sameDocument = true; window.__field = document.querySelector("#archive-reason");
		return document.body.getAttribute("data-version")`, &before)
	if _, err := b.engine.HeuristicFeedback(ctx, kaizen.HeuristicFeedbackInput{Project: "proj", HeuristicID: s.heuristic,
		Verdict: "helpful", Note: "a verdict from another agent", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	br.waitFor("the announced change", `return document.body.getAttribute("data-version") !== arguments[0]`, before)
	var form struct {
		Same, Updated bool
		Value         string
	}
	br.eval(`return new Promise(function (done) { setTimeout(function () {
		var f = document.querySelector("#archive-reason");
		done({Same: f === window.__field, Value: f.value,
			Updated: document.querySelector("#heuristic-panel").innerText.includes("a verdict from another agent")});
	}, 300); })`, &form)
	if !form.Same || form.Value != "half a reas" || form.Updated {
		t.Errorf("the half-filled form during a live update: %+v", form)
	}
	br.clear("#archive-reason") // WebDriver's clear leaves the field too
	br.waitFor("the panel caught up", `var p = document.querySelector("#heuristic-panel");
		return window.__sameDocument === true && p.innerText.includes("a verdict from another agent") && document.querySelector("#archive-reason") !== window.__field`)
	br.noConsoleErrors("live updates")

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
