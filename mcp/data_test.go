package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

func init() {
	wantRequired["forget"] = []string{"kind", "id"}
	wantRequired["edit_heuristic"] = []string{"heuristic_id"}
	wantRequired["learned"] = nil
}

// TestForgetEditLearnedTools forgets each kind of record, edits a
// heuristic and reads the digest through the tools.
func TestForgetEditLearnedTools(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var rec struct {
		Outcome struct{ ID string } `json:"outcome"`
	}
	for i := range 3 {
		b.ok("record_outcome", outcome("f"+string(rune('0'+i)), false, "Split by file type"), &rec)
	}
	var l kaizen.Learned
	text := b.ok("learned", map[string]any{"days": 7}, &l)
	if len(l.NewAntiPatterns) != 1 || !strings.Contains(text, "new anti-pattern") {
		t.Errorf("learned: %s", text)
	}
	var out struct {
		Kind    string                      `json:"kind"`
		Outcome *kaizen.DeleteOutcomeResult `json:"outcome"`
	}
	text = b.ok("forget", map[string]any{"kind": "outcome", "id": rec.Outcome.ID}, &out)
	if out.Outcome == nil || len(out.Outcome.AntiPatternsRemoved) != 1 || !strings.Contains(text, "Deleted outcome") {
		t.Errorf("forget outcome: %s", text)
	}
	if msg := b.fail("forget", map[string]any{"kind": "outcome", "id": rec.Outcome.ID}); !strings.Contains(msg, "not_found") && !strings.Contains(msg, "not found") {
		t.Errorf("forget twice: %s", msg)
	}
	if msg := b.fail("forget", map[string]any{"kind": "pattern", "id": "x"}); !strings.Contains(msg, "kind") {
		t.Errorf("unknown kind: %s", msg)
	}

	doc, _ := json.Marshal(map[string]any{"goal": "ship", "transferable_heuristics": []map[string]string{
		{"kind": "verify", "trigger": "before a release", "rule": "Run the full test suite.", "why": "it broke", "evidence": "CI red"}}})
	sub, err := b.engine.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{TaskID: "t3", Kind: "experience", Result: doc})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Experience.Heuristics[0].HeuristicID
	var edit kaizen.HeuristicActionResult
	b.ok("edit_heuristic", map[string]any{"heuristic_id": id, "why": "the release broke twice"}, &edit)
	if edit.Heuristic.Why != "the release broke twice" || edit.Heuristic.Rule != "Run the full test suite." {
		t.Errorf("edit: %+v", edit.Heuristic)
	}
	text = b.ok("forget", map[string]any{"kind": "heuristic", "id": id}, nil)
	if !strings.Contains(text, "Forgot heuristic "+id) {
		t.Errorf("forget heuristic: %s", text)
	}
	capture, err := b.engine.Capture(ctx, kaizen.CaptureInput{TaskID: "t4", Turns: []kaizen.TurnInput{
		{Role: "user", Content: "the deploy key is in the team vault"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"memory", "turn"} {
		b.ok("forget", map[string]any{"kind": kind, "id": capture.Turns[0].ID}, nil)
	}
	b.fail("forget", map[string]any{"kind": "skill", "id": "no-such-skill"})
}

// exerciseDataTools calls the data tools once each (for the end-to-end
// test that every tool succeeds).
func exerciseDataTools(t *testing.T, b *testBundle) {
	t.Helper()
	b.ok("learned", map[string]any{}, nil)
	b.ok("learning_curve", map[string]any{}, nil)
	doc, _ := json.Marshal(map[string]any{"goal": "g", "transferable_heuristics": []map[string]string{
		{"kind": "avoid", "trigger": "when in doubt", "rule": "Do not guess the schema.", "why": "it was wrong", "evidence": "e"}}})
	sub, err := b.engine.SubmitExtraction(context.Background(), kaizen.ExtractionSubmitInput{TaskID: "data-tools", Kind: "experience", Result: doc})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Experience.Heuristics[0].HeuristicID
	b.ok("edit_heuristic", map[string]any{"heuristic_id": id, "rule": "Read the schema first."}, nil)
	b.ok("forget", map[string]any{"kind": "heuristic", "id": id}, nil)
	b.ok("gc", map[string]any{}, nil)
}
