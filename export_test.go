package kaizen_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

func seedProject(t *testing.T, b *bundle, project string) {
	t.Helper()
	for i := range 7 {
		in := outcome(sprintf("bd-%d", i), i < 2, "Split by file type", "Respect dependency chain")
		in.Project = project
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.e.RecordError(ctx, kaizen.ErrorInput{Project: project, TaskID: "bd-9", Type: "timeout", Message: "slow"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.PromotePattern(ctx, kaizen.ManualInput{Project: project, Pattern: "Respect dependency chain", Reason: "team rule"}); err != nil {
		t.Fatal(err)
	}
}

func guidanceJSON(t *testing.T, b *bundle, project string) string {
	t.Helper()
	g, err := b.e.PlanGuidance(ctx, kaizen.PlanInput{Project: project, TaskID: "bd-9"})
	if err != nil {
		t.Fatal(err)
	}
	g.Project, g.At = "", g.At.UTC()
	for i := range g.Patterns {
		g.Patterns[i].ID = ""
	}
	for i := range g.AntiPatterns {
		g.AntiPatterns[i].ID, g.AntiPatterns[i].SourceID = "", ""
	}
	for i := range g.OpenErrors {
		g.OpenErrors[i].Project = ""
	}
	out, _ := json.Marshal(g)
	return string(out)
}

func TestExportImportRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		seedProject(t, b, "alpha")
		var buf bytes.Buffer
		exp, err := b.e.Export(ctx, &buf, kaizen.ExportOptions{Projects: []string{"alpha"}})
		if err != nil {
			t.Fatal(err)
		}
		if exp.Records["outcome"] != 7 || exp.Records["maturity_feedback"] != 14 || exp.Records["pattern"] != 4 || exp.Records["error"] != 1 ||
			exp.Records["feedback"] != 0 || exp.Records["observation"] != 0 {
			t.Fatalf("export counts %v", exp.Records)
		}
		for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("line %d is not JSON: %s", i+1, line)
			}
		}
		// Into another project: the learned state is the same.
		res, err := b.e.Import(ctx, bytes.NewReader(buf.Bytes()), kaizen.ImportOptions{Project: "beta"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Records["outcome"].Inserted != 7 || len(res.Projects) != 1 || res.Projects[0] != "beta" {
			t.Fatalf("import %+v", res)
		}
		if a, bb := guidanceJSON(t, b, "alpha"), guidanceJSON(t, b, "beta"); a != bb {
			t.Errorf("imported project differs:\n%s\n%s", a, bb)
		}
		// Importing the same file again changes nothing.
		res2, err := b.e.Import(ctx, bytes.NewReader(buf.Bytes()), kaizen.ImportOptions{Project: "beta"})
		if err != nil {
			t.Fatal(err)
		}
		for typ, c := range res2.Records {
			if c.Inserted != 0 {
				t.Errorf("second import inserted %d %s records", c.Inserted, typ)
			}
		}
		if a, bb := guidanceJSON(t, b, "alpha"), guidanceJSON(t, b, "beta"); a != bb {
			t.Errorf("second import changed state")
		}
	})
}

// Sharing patterns into a project that already has one with the same
// content under another id merges the evidence into the existing pattern.
func TestImportMergesSameContent(t *testing.T) {
	b := setup(t, "sqlite")
	seedProject(t, b, "alpha")
	for i := range 3 {
		in := outcome(sprintf("g-%d", i), true, "Split by file type")
		in.Project = "gamma"
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.e.Export(ctx, &buf, kaizen.ExportOptions{Projects: []string{"alpha"}}); err != nil {
		t.Fatal(err)
	}
	res, err := b.e.Import(ctx, &buf, kaizen.ImportOptions{Project: "gamma"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Remapped != 1 {
		t.Errorf("remapped %d, want 1", res.Remapped)
	}
	d, err := b.e.GetPattern(ctx, "gamma", "Split by file type")
	if err != nil {
		t.Fatal(err)
	}
	if d.SuccessCount != 5 || d.FailureCount != 5 || d.MaturityRecord.HelpfulCount != 5 {
		t.Errorf("merged counts success=%d failure=%d helpful=%d, want 5/5/5", d.SuccessCount, d.FailureCount, d.MaturityRecord.HelpfulCount)
	}
	list, _ := b.e.ListPatterns(ctx, kaizen.PatternQuery{Project: "gamma"})
	if list.Total != 4 { // both patterns and their anti-patterns (the dependency pattern shares the failures)
		t.Errorf("%d patterns in gamma", list.Total)
	}
}

func TestImportRejectsBadFilesAtomically(t *testing.T) {
	b := setup(t, "sqlite")
	seedProject(t, b, "alpha")
	var buf bytes.Buffer
	if _, err := b.e.Export(ctx, &buf, kaizen.ExportOptions{Projects: []string{"alpha"}}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	lines := strings.Split(strings.TrimSpace(good), "\n")
	cases := map[string]string{
		"empty":          "",
		"no header":      strings.Join(lines[1:], "\n"),
		"bad version":    strings.Replace(lines[0], `"version":2`, `"version":99`, 1) + "\n" + strings.Join(lines[1:], "\n"),
		"truncated line": good + `{"type":"outcome","record":{"id":`,
		"unknown type":   good + `{"type":"gizmo","record":{}}`,
		"unknown field":  good + `{"type":"error","record":{"id":"e","project":"alpha","bead_id":"x","error_type":"timeout","message":"m","timestamp":"2025-01-01T00:00:00Z","resolved":false,"color":"red"}}`,
		"dangling ref":   lines[0] + "\n" + `{"type":"maturity_feedback","record":{"id":"m1","project":"alpha","pattern_id":"pattern-x","success":true,"type":"helpful","weight":1,"timestamp":"2025-01-01T00:00:00Z","generation":0}}`,
		"bad score":      good + `{"type":"outcome","record":{"id":"o9","project":"alpha","bead_id":"x","score":{"raw_score":7,"type":"helpful"}}}`,
	}
	for name, in := range cases {
		_, err := b.e.Import(ctx, strings.NewReader(in), kaizen.ImportOptions{Project: "delta"})
		if kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("%s: got %v, want an invalid-input error", name, err)
		}
	}
	o, _ := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: "delta"})
	if o.Total != 0 {
		t.Errorf("a failed import left %d outcomes behind", o.Total)
	}
}
