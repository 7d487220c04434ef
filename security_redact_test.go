package kaizen_test

import (
	"bytes"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
	"github.com/kaizenhq/kaizen/trace"
)

// TestSecurityNoStoredSecretEngine sends secret-bearing text through every
// engine write path that takes untrusted text (task events: first prompt
// and tool failures; errors; outcomes; captured turns; recall queries;
// plan requests; explore events; an import), then reads the database
// directly, every file of the home and an export: no secret is anywhere,
// and the text around the secrets is kept. Both drivers.
func TestSecurityNoStoredSecretEngine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		secret := testkit.SecretText()
		must := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		_, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "bd-1", Kind: "prompt", Text: secret, Source: "claude"})
		must("prompt", err)
		_, err = b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "bd-1", Kind: "tool_failure", ToolName: "Bash", Message: secret})
		must("tool failure", err)
		_, err = b.e.RecordError(ctx, kaizen.ErrorInput{TaskID: "bd-1", Type: "tool_failure", Message: secret, StackTrace: secret,
			ToolName: "Bash", Context: secret})
		must("error", err)
		ec, err := b.e.ErrorContext(ctx, "", "bd-1", true)
		must("error context", err)
		testkit.AssertNoSecret(t, "error_context", ec.Markdown)
		if !strings.Contains(ec.Markdown, "[REDACTED:") {
			t.Errorf("error_context shows no marker: %s", ec.Markdown)
		}
		in := outcome("bd-1", false, "Split by file type")
		in.Description, in.FailureDetails, in.Task = secret, secret, secret
		_, err = b.e.RecordOutcome(ctx, in)
		must("outcome", err)
		cres, err := b.e.Capture(ctx, kaizen.CaptureInput{TaskID: "bd-1", Source: "claude", Turns: []kaizen.TurnInput{
			{Role: "user", Content: secret}, {Role: "assistant", Content: secret}, {Role: "tool", Content: secret}}})
		must("capture", err)
		if cres.Redacted < 3*len(testkit.Secrets)-3 {
			t.Errorf("capture redacted %d secrets, want about %d", cres.Redacted, 3*len(testkit.Secrets))
		}
		_, err = b.e.Recall(ctx, kaizen.RecallInput{TaskID: "bd-1", Query: secret})
		must("recall", err)
		_, err = b.e.PlanGuidance(ctx, kaizen.PlanInput{TaskID: "bd-2", Task: secret})
		must("plan", err)
		_, err = b.e.SetExploreSettings(ctx, kaizen.ExploreSettings{Enabled: true})
		must("explore enable", err)
		_, err = b.e.ExploreEvent(ctx, kaizen.ExploreEventInput{SessionID: "s1", AutoStart: true, Events: []explore.Event{
			{Type: explore.EventTick},
			{Type: explore.EventToolCall, ToolCall: explore.ToolCall{Name: "Bash", Args: map[string]any{"command": secret, "password": "c0rrect-H0rse-Battery!"},
				Status: explore.StatusError, Output: secret}},
			{Type: explore.EventThought, Text: secret},
		}})
		must("explore", err)

		// Failure learning: a failing command, its output and an edit.
		now := b.clock.Now()
		_, err = b.e.RecordTraceEvents(ctx, kaizen.TraceEventInput{SessionID: "s-trace", Events: []trace.Event{
			cmdEvent(now, "deploy --password "+secret, 1, secret), {Kind: trace.EventEdit, Time: now.Add(time.Second), Path: "cfg.env"},
			cmdEvent(now.Add(2*time.Second), "deploy --password "+secret, 0, "ok")}})
		must("trace events", err)
		// The team engine: task text and an agent's message.
		agent := team.Worker{Kind: team.WorkerAgent}
		_, err = b.e.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: []team.Member{
			{Name: "lead", Role: team.RoleCoordinator, Worker: agent}, {Name: "ann", Role: team.RoleExecutor, Worker: agent}}})
		must("team", err)
		_, err = b.e.AddTeamTasks(ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: []kaizen.TeamTaskInput{
			{ID: "t1", Subject: "rotate keys", Description: secret}}})
		must("team task", err)
		for _, sc := range testkit.Secrets {
			if len(sc.Text) > 200 { // a summary is one line of at most 200 characters
				continue
			}
			_, err = b.e.SendMessage(ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note",
				Summary: strings.ReplaceAll(sc.Text, "\n", " ")})
			must("team message "+sc.Format, err)
		}

		// An export written elsewhere (by an older kaizen, or by hand)
		// carrying secrets, imported.
		crafted := testkit.CraftedExport(t)
		_, err = b.e.Import(ctx, strings.NewReader(crafted), kaizen.ImportOptions{Project: "imported"})
		must("import", err)

		dump := testkit.AssertNothingStored(t, b.cfg)
		for _, want := range []string{"please fix it", "[REDACTED:aws-secret-key]", "[REDACTED:url-password]", "[REDACTED:jwt]",
			"[REDACTED:stripe-key]", "[REDACTED:npm-token]", "[REDACTED:private-key]", "imported"} {
			if !strings.Contains(dump, want) {
				t.Errorf("the database lacks %q", want)
			}
		}
		var out bytes.Buffer
		_, err = b.e.Export(ctx, &out, kaizen.ExportOptions{All: true})
		must("export", err)
		testkit.AssertNoSecret(t, "the export", out.String())
		if !strings.Contains(out.String(), "please fix it") {
			t.Error("the export lost the text around the secrets")
		}
	})
}

// TestSecurityNoStoredSecretExportOfOldRecords: records stored before the
// redaction boundary existed (written here straight into the store) are
// scrubbed on their way out, in an export and in error_context.
func TestSecurityNoStoredSecretExportOfOldRecords(t *testing.T) {
	b := setup(t, "sqlite")
	secret := testkit.SecretText()
	_, err := b.e.RecordError(ctx, kaizen.ErrorInput{TaskID: "bd-1", Message: "placeholder"})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", b.cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `UPDATE errors SET message = ?`, secret); err != nil {
		t.Fatalf("write an old record directly: %v", err)
	}
	ec, err := b.e.ErrorContext(ctx, "", "bd-1", true)
	if err != nil {
		t.Fatal(err)
	}
	testkit.AssertNoSecret(t, "error_context", ec.Markdown)
	var out bytes.Buffer
	if _, err := b.e.Export(ctx, &out, kaizen.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.AssertNoSecret(t, "the export", out.String())
	if !strings.Contains(out.String(), "please fix it") {
		t.Error("the export lost the record's text")
	}
}
