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

// TestLearnedPagesEscapePayloads records payloads in everything the new
// pages show — task ids, descriptions and clients, pattern contents in the
// overview's sections, heuristic rules and triggers, project names in the
// switcher, the projects page and the empty state — and checks every page,
// fragment and action answer.
func TestLearnedPagesEscapePayloads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	all := strings.Join([]string{scriptPayload, imgPayload, jsURLPayload, svgPayload}, " ")
	for _, project := range []string{"proj", evilProject} {
		recordPayloads(t, b, project)
		task := "claude-" + imgPayload
		for _, kind := range []string{"start", "prompt", "tool_failure"} {
			if _, err := b.engine.RecordTaskEvent(ctx, kaizen.TaskEventInput{Project: project, TaskID: task, Kind: kind,
				Text: all, Source: "claude", ToolName: svgPayload, Message: all}); err != nil {
				t.Fatal(err)
			}
		}
		doc, _ := json.Marshal(map[string]any{"goal": all, "transferable_heuristics": []map[string]string{
			{"kind": "avoid", "trigger": all, "rule": "Rule " + all, "why": all, "evidence": all}}})
		if _, err := b.engine.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: task,
			Kind: "experience", Result: doc}); err != nil {
			t.Fatal(err)
		}
		b.record(kaizen.OutcomeInput{Project: project, TaskID: task, Success: ptr(false), Patterns: []string{"Pattern " + all}})
		q := "?project=" + url.QueryEscape(project)
		for _, path := range []string{"/", "/?since=visit", "/tasks", "/tasks?q=" + url.QueryEscape(imgPayload),
			"/tasks/" + url.PathEscape(task), "/projects", "/outcomes", "/learning", "/learning?window=5"} {
			sep := q
			if strings.Contains(path, "?") {
				sep = "&" + q[1:]
			}
			r := b.must(b.get(path+sep), http.StatusOK)
			checkEscaped(t, path+" of "+project, r)
			for _, target := range []string{"overview-live", "list", "task-live"} {
				checkEscaped(t, path+" fragment "+target, b.htmx("GET", path+sep, target, nil))
			}
		}
		out, err := b.engine.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: project, TaskID: task})
		if err != nil || len(out.Items) == 0 {
			t.Fatalf("outcomes: %v %v", out, err)
		}
		checkEscaped(t, "delete outcome", b.htmx("POST", "/outcomes/"+out.Items[0].ID+"/delete"+q, "list", url.Values{}))
	}
	// An empty project names the projects holding data, one of them evil.
	r := b.must(b.get("/?project=empty"), http.StatusOK)
	checkEscaped(t, "empty state", r)
	contains(t, "empty state", r.body, "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;")
}
