package mcp_test

import (
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// TestSecurityNoStoredSecretMCP calls every MCP tool that stores untrusted
// text with secret-bearing text (record_error, record_outcome, capture,
// recall, plan_guidance, deprecate_pattern, explore_event), reads the
// database directly (SQLite and PostgreSQL) and the home's files: no
// secret is stored, and error_context, list_errors and the export show
// none.
func TestSecurityNoStoredSecretMCP(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		kb := testkit.Open(t, backend)
		b := setupOn(t, kb.E)
		secret := testkit.SecretText()
		b.ok("record_error", map[string]any{"bead_id": "bd-1", "error_type": "tool_failure", "message": secret, "stack_trace": secret, "context": secret}, nil)
		text := b.ok("error_context", map[string]any{"bead_id": "bd-1"}, nil)
		testkit.AssertNoSecret(t, "error_context", text)
		if !strings.Contains(text, "[REDACTED:") {
			t.Errorf("error_context shows no marker: %s", text)
		}
		in := outcome("bd-1", false, "Split by file type")
		in["description"], in["failure_details"], in["task"] = secret, secret, secret
		b.ok("record_outcome", in, nil)
		b.ok("capture", map[string]any{"bead_id": "bd-1", "turns": []map[string]any{{"role": "user", "content": secret}, {"role": "tool", "content": secret}}}, nil)
		b.ok("recall", map[string]any{"bead_id": "bd-1", "query": secret}, nil)
		b.ok("plan_guidance", map[string]any{"bead_id": "bd-2", "task": secret}, nil)
		b.ok("deprecate_pattern", map[string]any{"pattern": "Split by file type", "reason": secret}, nil)
		b.ok("explore_start", map[string]any{"session_id": "s1"}, nil)
		b.ok("explore_event", map[string]any{"session_id": "s1", "events": []map[string]any{
			{"type": "tick"}, {"type": "tool_call", "name": "Bash", "args": map[string]any{"command": secret}, "status": "error", "output": secret}}}, nil)
		testkit.AssertNoSecret(t, "list_errors", b.ok("list_errors", map[string]any{"bead_id": "bd-1"}, nil))

		dump := testkit.AssertNothingStored(t, kb.Cfg)
		if !strings.Contains(dump, "please fix it") {
			t.Error("the database lost the text around the secrets")
		}
		var export strings.Builder
		if _, err := kb.E.Export(t.Context(), &export, kaizen.ExportOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		testkit.AssertNoSecret(t, "the export", export.String())
	})
}
