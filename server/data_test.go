package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// TestForgetOverREST deletes each kind of record through its route and
// edits a heuristic; unknown ids get 404, another project's ids are not
// found.
func TestForgetOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var rec struct {
		Outcome struct{ ID string } `json:"outcome"`
	}
	b.must(b.post("/api/v1/outcomes", map[string]any{"bead_id": "t1", "duration_ms": 1000, "success": false,
		"patterns": []string{"Split by file type"}}), http.StatusCreated).decode(t, &rec)
	var del kaizen.DeleteOutcomeResult
	b.must(b.do(req{method: "DELETE", path: "/api/v1/outcomes/" + rec.Outcome.ID}), http.StatusOK).decode(t, &del)
	if del.Outcome.ID != rec.Outcome.ID || del.Observations != 1 || len(del.PatternsRemoved) != 1 {
		t.Errorf("delete outcome: %+v", del)
	}
	if e := b.must(b.do(req{method: "DELETE", path: "/api/v1/outcomes/" + rec.Outcome.ID}), http.StatusNotFound).errorOf(t); e.Error.Op != "delete outcome" {
		t.Errorf("second delete: %+v", e)
	}

	capture, err := b.engine.Capture(ctx, kaizen.CaptureInput{TaskID: "t2", Turns: []kaizen.TurnInput{
		{Role: "user", Content: "the release checklist lives in docs/release.md"},
		{Role: "user", Content: "never push to main on a Friday afternoon"}}})
	if err != nil {
		t.Fatal(err)
	}
	b.must(b.do(req{method: "DELETE", path: "/api/v1/turns/" + capture.Turns[0].ID + "?project=other"}), http.StatusNotFound)
	var fr kaizen.ForgetResult
	b.must(b.do(req{method: "DELETE", path: "/api/v1/turns/" + capture.Turns[0].ID}), http.StatusOK).decode(t, &fr)
	if fr.Kind != "turn" || !fr.Unindexed {
		t.Errorf("delete turn: %+v", fr)
	}
	b.must(b.do(req{method: "DELETE", path: "/api/v1/memories/" + capture.Turns[1].ID}), http.StatusOK).decode(t, &fr)
	if fr.Kind != "memory" || !fr.Unindexed {
		t.Errorf("forget memory: %+v", fr)
	}

	doc, _ := json.Marshal(map[string]any{"goal": "ship", "transferable_heuristics": []map[string]string{
		{"kind": "verify", "trigger": "before a release", "rule": "Run the full test suite.", "why": "it broke", "evidence": "CI red"}}})
	sub, err := b.engine.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{TaskID: "t3", Kind: "experience", Result: doc})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Experience.Heuristics[0].HeuristicID
	var edit kaizen.HeuristicActionResult
	b.must(b.do(req{method: "PATCH", path: "/api/v1/heuristics/" + id, body: map[string]string{"rule": "Run the full suite, race detector on."}}),
		http.StatusOK).decode(t, &edit)
	if edit.Heuristic.Rule != "Run the full suite, race detector on." {
		t.Errorf("edit: %+v", edit.Heuristic)
	}
	b.must(b.do(req{method: "PATCH", path: "/api/v1/heuristics/" + id, body: map[string]string{"heuristic_id": "heur-other", "rule": "x"}}),
		http.StatusBadRequest)
	b.must(b.do(req{method: "DELETE", path: "/api/v1/heuristics/" + id}), http.StatusOK).decode(t, &fr)
	if fr.Kind != "heuristic" || fr.ID != id {
		t.Errorf("delete heuristic: %+v", fr)
	}
	b.must(b.get("/api/v1/heuristics/"+id), http.StatusNotFound)
	b.must(b.do(req{method: "DELETE", path: "/api/v1/skills/no-such-skill"}), http.StatusNotFound)
}

// TestLearnedAndProjectsOverREST reads the digest and the project list.
func TestLearnedAndProjectsOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 3 {
		b.must(b.post("/api/v1/outcomes", map[string]any{"bead_id": "f" + string(rune('0'+i)), "duration_ms": 1000,
			"success": false, "patterns": []string{"Split by file type"}}), http.StatusCreated)
	}
	var l kaizen.Learned
	b.must(b.get("/api/v1/learned?days=7"), http.StatusOK).decode(t, &l)
	if len(l.NewAntiPatterns) != 1 || !strings.Contains(l.NewAntiPatterns[0].Content, "Split by file type") || l.Outcomes != 3 {
		t.Errorf("learned: %+v", l)
	}
	b.must(b.get("/api/v1/learned?days=0"), http.StatusBadRequest)
	b.must(b.get("/api/v1/learned?since=yesterday"), http.StatusBadRequest)
	var p struct{ Projects []kaizen.ProjectSummary }
	b.must(b.get("/api/v1/projects?counts=true"), http.StatusOK).decode(t, &p)
	if len(p.Projects) != 1 || p.Projects[0].Project != "proj" || p.Projects[0].Outcomes != 3 {
		t.Errorf("projects: %+v", p)
	}
	b.must(b.get("/api/v1/projects?counts=maybe"), http.StatusBadRequest)
}
