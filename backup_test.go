package kaizen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// seedEverything records something of every record type in a project:
// outcomes, patterns, maturity, errors, tracked tasks, exploration
// settings and a session, turns, signals, a task experience, heuristics
// with evidence, support and a verdict, a recall, a skill and its version.
func seedEverything(t *testing.T, b *bundle, project string) {
	t.Helper()
	seedProject(t, b, project)
	for _, ev := range []kaizen.TaskEventInput{
		{Project: project, TaskID: "claude-s1", Kind: "start", Text: "add a retry to the fetch client", Source: "claude"},
		{Project: project, TaskID: "claude-s1", Kind: "tool_failure", ToolName: "Bash", Message: "go test failed"},
	} {
		if _, err := b.e.RecordTaskEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.e.SetExploreSettings(ctx, kaizen.ExploreSettings{Project: project, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.ExploreStart(ctx, kaizen.ExploreStartInput{Project: project, SessionID: "claude-s1"}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"task-1", "task-2"} {
		_, err := b.e.Capture(ctx, kaizen.CaptureInput{Project: project, TaskID: task, Source: "test", Turns: []kaizen.TurnInput{
			{Role: "user", Content: "Add a retry to the HTTP client in pkg/fetch, and keep the public API unchanged.", TurnID: "t1"},
			{Role: "assistant", Content: "I edited the generated file client_gen.go to add the retry loop.", TurnID: "t1"},
			{Role: "user", Content: "不对，不要改生成的文件，改模板然后重新生成。", TurnID: "t3"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.e.ExtractSignals(ctx, kaizen.SignalsInput{Project: project, TaskID: task, Extractor: "rules"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: task, Kind: "experience",
			Result: lessonJSON(t, generatedLesson)}); err != nil {
			t.Fatal(err)
		}
	}
	skill, _ := json.Marshal(map[string]any{"name": "regenerate-code", "description": "Change generated code at its source",
		"when_to_use": "A generated file needs a change.", "steps": []string{"Edit the template.", "Run go generate."},
		"changelog": "first version", "heuristic_ids": []string{}})
	if _, err := b.e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: project, TaskID: "task-1", Kind: "skill", Result: skill}); err != nil {
		t.Fatal(err)
	}
	rec, err := b.e.Recall(ctx, kaizen.RecallInput{Project: project, TaskID: "task-3", Query: "edit the generated client file"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Heuristics) == 0 {
		t.Fatalf("nothing recalled: %+v", rec)
	}
	if _, err := b.e.HeuristicFeedback(ctx, kaizen.HeuristicFeedbackInput{Project: project, HeuristicID: rec.Heuristics[0].ID,
		RecallID: rec.ID, Verdict: "helpful"}); err != nil {
		t.Fatal(err)
	}
}

// records returns the record lines of an export (the header aside).
func records(t *testing.T, b *bundle, opts kaizen.ExportOptions) (*kaizen.ExportResult, []string, string) {
	t.Helper()
	var buf bytes.Buffer
	res, err := b.e.Export(ctx, &buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	return res, lines[1:], buf.String()
}

// TestBackupRoundTripEveryRecordType exports every project of an engine,
// imports the file into a fresh one, and finds every record again —
// learning, tasks, exploration and the experience system — with recall
// working on the restored heuristics and the skill's file rewritten; a
// second import changes nothing.
func TestBackupRoundTripEveryRecordType(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		src := setup(t, backend)
		seedEverything(t, src, "alpha")
		res, want, file := records(t, src, kaizen.ExportOptions{All: true})
		for _, typ := range []string{"pattern", "maturity", "maturity_feedback", "outcome", "error", "task",
			"explore_settings", "explore_session", "turn", "signal", "experience", "heuristic", "heuristic_evidence",
			"heuristic_support", "heuristic_feedback", "recall", "skill", "skill_version"} {
			if res.Records[typ] == 0 {
				t.Errorf("the export holds no %s record", typ)
			}
		}

		dst := setup(t, backend)
		imp, err := dst.e.Import(ctx, strings.NewReader(file), kaizen.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for typ, n := range res.Records {
			if c := imp.Records[typ]; c.Inserted != n || c.Skipped != 0 {
				t.Errorf("%s: imported %+v, exported %d", typ, c, n)
			}
		}
		_, got, _ := records(t, dst, kaizen.ExportOptions{All: true})
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the restored store exports differently:\nwant %d lines\n%s\ngot %d lines\n%s", len(want),
				strings.Join(want, "\n"), len(got), strings.Join(got, "\n"))
		}

		// The restored heuristics are recalled (full text and vectors were
		// rebuilt), and the skill's SKILL.md is back on disk.
		rec, err := dst.e.Recall(ctx, kaizen.RecallInput{Project: "alpha", Query: "edit the generated client file", DryRun: true})
		if err != nil || len(rec.Heuristics) == 0 {
			t.Fatalf("recall after restore: %+v %v", rec, err)
		}
		if _, err := os.Stat(filepath.Join(dst.cfg.Home, "skills", "alpha", "regenerate-code", "SKILL.md")); err != nil {
			t.Errorf("the skill file was not restored: %v", err)
		}
		g1, g2 := guidanceJSON(t, src, "alpha"), guidanceJSON(t, dst, "alpha")
		if g1 != g2 {
			t.Errorf("plan guidance differs after restore:\n%s\n%s", g1, g2)
		}

		again, err := dst.e.Import(ctx, strings.NewReader(file), kaizen.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for typ, c := range again.Records {
			if c.Inserted != 0 {
				t.Errorf("a second import inserted %d %s records", c.Inserted, typ)
			}
		}
	})
}

// TestImportRefusesWhatTheAPIRefuses: an import is held to the rules of
// every other input — no evidence from the future, no invalid UTF-8, no
// control characters — and refuses the whole file atomically.
func TestImportRefusesWhatTheAPIRefuses(t *testing.T) {
	b := setup(t, "sqlite")
	seedProject(t, b, "alpha")
	_, _, file := records(t, b, kaizen.ExportOptions{Projects: []string{"alpha"}})
	header := strings.SplitN(file, "\n", 2)[0]
	cases := map[string]string{
		"future outcome": header + "\n" + `{"type":"error","record":{"id":"e1","project":"alpha","bead_id":"x","error_type":"timeout","message":"m","timestamp":"2999-01-01T00:00:00Z","resolved":false}}`,
		"invalid UTF-8":  header + "\n" + `{"type":"error","record":{"id":"e2","project":"alpha","bead_id":"x","error_type":"timeout","message":"m` + "\xff" + `","timestamp":"2025-01-01T00:00:00Z","resolved":false}}`,
		"control char":   header + "\n" + `{"type":"error","record":{"id":"e3","project":"alpha","bead_id":"x","error_type":"timeout","message":"m\u0000","timestamp":"2025-01-01T00:00:00Z","resolved":false}}`,
		"future turn":    header + "\n" + `{"type":"turn","record":{"project":"alpha","id":"turn-1","bead_id":"t","role":"user","content":"hello there, friend","time":"2999-01-01T00:00:00Z"}}`,
	}
	for name, in := range cases {
		_, err := b.e.Import(ctx, strings.NewReader(in), kaizen.ImportOptions{Project: "delta"})
		if kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("%s: got %v, want an invalid-input error", name, err)
		}
	}
	if l, _ := b.e.ListErrors(ctx, kaizen.ErrorQuery{Project: "delta"}); l.Total != 0 {
		t.Errorf("a refused import left %d errors behind", l.Total)
	}
}
