package viewer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// mdPayload is a SKILL.md text trying every way out of the Markdown
// reader: raw HTML, a javascript: link and image, an HTML heading, and
// markup in code.
const mdPayload = "[click me](javascript:alert(1)) ![x](javascript:alert(1)) <a href=\"javascript:alert(1)\">a</a>\n" +
	"# <script>alert(1)</script>\n<img src=x onerror=alert(1)>"

// experiencePayloads records payloads through the engine in every text of the
// experience system the viewer shows; it returns the heuristic, skill and
// recall ids and the hostile task id.
func experiencePayloads(t *testing.T, b *testBundle, project string) (heuristic, skill, recall, task string) {
	t.Helper()
	ctx := context.Background()
	e := b.engine
	all := strings.Join([]string{scriptPayload, imgPayload, jsURLPayload, svgPayload}, " ")
	task = imgPayload + "task"
	if _, err := e.Capture(ctx, kaizen.CaptureInput{Project: project, TaskID: task, Source: scriptPayload, Turns: []kaizen.TurnInput{
		{Role: "user", Content: "Please fix it " + all, TurnID: imgPayload},
		{Role: "assistant", Content: "Done: " + all, TurnID: imgPayload},
	}}); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{
		"goal": "Goal " + all, "success_criteria": []string{"Criterion " + all},
		"failed_attempts": []map[string]string{{"attempt_label": scriptPayload, "approach_summary": imgPayload,
			"failure_reason": svgPayload, "replaced_by": jsURLPayload}},
		"working_approach": "Approach " + all,
		"transferable_heuristics": []map[string]string{{"kind": "verify", "trigger": "Trigger " + all,
			"rule": "Rule " + all, "why": "Why " + all, "evidence": "Evidence " + all}},
		"feedback_signals": []map[string]any{{"type": "correction", "source": "user", "evidence": "Signal " + all,
			"turn_id": imgPayload, "confidence": 0.8}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: task, Kind: "experience", Result: doc}); err != nil {
		t.Fatal(err)
	}
	list, err := e.ListHeuristics(ctx, kaizen.HeuristicQuery{Project: project})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("heuristics: %+v %v", list, err)
	}
	heuristic = list.Items[0].ID
	sk, err := json.Marshal(map[string]any{"name": "evil-skill", "description": "Description " + all,
		"when_to_use": mdPayload,
		"steps": []string{"`" + scriptPayload + "`", svgPayload + " " + jsURLPayload, "[x](javascript:alert(1))",
			"```\n" + scriptPayload + "\n```"},
		"changelog": "Changelog " + all, "heuristic_ids": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: task, Kind: "skill", Result: sk})
	if err != nil {
		t.Fatal(err)
	}
	skill = res.Skill.Skill.ID
	rc, err := e.Recall(ctx, kaizen.RecallInput{Project: project, TaskID: task, Query: "Rule " + all})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.HeuristicFeedback(ctx, kaizen.HeuristicFeedbackInput{Project: project, HeuristicID: heuristic,
		Verdict: "misleading", RecallID: rc.ID, Note: "Note " + all, Source: imgPayload}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.HeuristicAction(ctx, kaizen.HeuristicActionInput{Project: project, HeuristicID: heuristic,
		Action: "outdated", Reason: "Reason " + all}); err != nil {
		t.Fatal(err)
	}
	return heuristic, skill, rc.ID, task
}

// TestExperienceXSSPayloadsEscaped checks every experience page, fragment and
// action answer shows the payloads as text.
func TestExperienceXSSPayloadsEscaped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, project := range []string{"proj", evilProject} {
		heuristic, skill, recall, task := experiencePayloads(t, b, project)
		p := url.QueryEscape(project)
		tq := url.QueryEscape(task)
		pages := []string{
			"/heuristics?project=" + p,
			"/heuristics?project=" + p + "&q=" + url.QueryEscape("Rule "+scriptPayload),
			"/heuristics/" + heuristic + "?project=" + p,
			"/skills?project=" + p,
			"/skills/" + skill + "?project=" + p,
			"/experiences?project=" + p,
			"/experiences/" + url.PathEscape(task) + "?project=" + p,
			"/signals?project=" + p,
			"/signals?project=" + p + "&task=" + tq,
			"/turns?project=" + p,
			"/turns?project=" + p + "&task=" + tq,
			"/recalls?project=" + p,
			"/recalls?project=" + p + "&task=" + tq,
			"/recalls/" + recall + "?project=" + p,
			"/experiences/" + url.PathEscape(scriptPayload) + "?project=" + p, // not found, echoing the id
		}
		for _, path := range pages {
			for _, target := range []string{"", "list", "heuristic-panel", "skill-panel"} {
				var r response
				if target == "" {
					r = b.get(path)
				} else {
					r = b.htmx("GET", path, target, nil)
				}
				if r.status >= 500 {
					t.Errorf("GET %s (%q): %d", path, target, r.status)
				}
				checkEscaped(t, path+" target "+target, r)
			}
		}
		// The payloads are shown, escaped.
		esc := "&lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x onerror=alert(1)&gt; javascript:alert(1) &#39;&gt;&lt;svg onload=alert(1)&gt;"
		h := b.must(b.get("/heuristics/"+heuristic+"?project="+p), http.StatusOK).body
		contains(t, "heuristic", h, "Rule "+esc, "Trigger "+esc, "Why "+esc, "Evidence "+esc, "Note "+esc, "Reason "+esc)
		x := b.must(b.get("/experiences/"+url.PathEscape(task)+"?project="+p), http.StatusOK).body
		contains(t, "experience", x, "Goal "+esc, "Criterion "+esc, "Approach "+esc, "Signal "+esc,
			`<code class="task-id">&#34;&gt;&lt;img src=x onerror=alert(1)&gt;task</code>`)
		tu := b.must(b.get("/turns?project="+p+"&task="+tq), http.StatusOK).body
		contains(t, "turns", tu, "Please fix it "+esc)
		rc := b.must(b.get("/recalls/"+recall+"?project="+p), http.StatusOK).body
		contains(t, "recall", rc, `<pre class="query">Rule `+esc+`</pre>`)
		// The SKILL.md: raw HTML and links are text, code is code, no
		// element or URL comes from the document.
		s := b.must(b.get("/skills/"+skill+"?project="+p), http.StatusOK).body
		doc := s[strings.Index(s, `<article class="skill-doc">`):strings.Index(s, "</article>")]
		contains(t, "skill doc", doc,
			"[click me](javascript:alert(1)) ![x](javascript:alert(1)) &lt;a href=&#34;javascript:alert(1)&#34;&gt;a&lt;/a&gt;",
			"&lt;img src=x onerror=alert(1)&gt;", "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>",
			"[x](javascript:alert(1))")
		for _, tag := range []string{"<a ", "<img", "<script", "<svg", `href="`, `src="`} {
			if strings.Contains(doc, tag) {
				t.Errorf("the rendered SKILL.md holds %q:\n%s", tag, doc)
			}
		}
		contains(t, "skill", s, "Description "+esc, "Changelog "+esc)

		// Action answers echo the payloads escaped.
		r := b.must(b.htmx("POST", "/heuristics/"+heuristic+"/feedback?project="+p, "heuristic-panel",
			url.Values{"verdict": {"helpful"}, "note": {scriptPayload + imgPayload}}), http.StatusOK)
		checkEscaped(t, "feedback fragment", r)
		r = b.must(b.htmx("POST", "/heuristics/"+heuristic+"/action?project="+p, "heuristic-panel",
			url.Values{"action": {"supersede"}, "by": {imgPayload}}), http.StatusNotFound)
		checkEscaped(t, "supersede refusal", r)
		contains(t, "supersede refusal", r.body, "no heuristic &#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
		r = b.must(b.htmx("POST", "/heuristics/"+heuristic+"/action?project="+p, "heuristic-panel",
			url.Values{"action": {scriptPayload}}), http.StatusBadRequest)
		checkEscaped(t, "bad action", r)
		r = b.must(b.htmx("POST", "/skills/"+skill+"/status?project="+p, "skill-panel",
			url.Values{"status": {imgPayload}}), http.StatusBadRequest)
		checkEscaped(t, "bad skill status", r)
	}
}
