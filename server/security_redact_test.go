package server_test

import (
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/testkit"
)

// TestSecurityNoStoredSecretREST sends secret-bearing text to every REST
// route that stores untrusted text (task events, errors, outcomes,
// captured turns, recall, plan, explore events, pattern reasons, an
// import), then reads the database directly (SQLite and PostgreSQL), the
// files of the home and GET /api/v1/export: no secret is anywhere.
func TestSecurityNoStoredSecretREST(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, func(o *setupOpts) { o.db = testkit.DSN(t, backend) })
		secret := testkit.SecretText()
		b.must(b.post("/api/v1/tasks/events", map[string]any{"bead_id": "bd-1", "kind": "prompt", "text": secret}), 200)
		b.must(b.post("/api/v1/tasks/events", map[string]any{"bead_id": "bd-1", "kind": "tool_failure", "tool_name": "Bash", "message": secret}), 200)
		b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "bd-1", "error_type": "tool_failure", "message": secret,
			"stack_trace": secret, "context": secret}), 201)
		ctxResp := b.must(b.get("/api/v1/tasks/bd-1/error-context"), 200)
		testkit.AssertNoSecret(t, "error context", string(ctxResp.body))
		b.must(b.post("/api/v1/outcomes", map[string]any{"bead_id": "bd-1", "success": false, "duration_ms": 1000,
			"description": secret, "failure_details": secret, "task": secret, "strategy": "Split by file type"}), 201)
		b.must(b.post("/api/v1/turns", map[string]any{"bead_id": "bd-1", "turns": []map[string]any{
			{"role": "user", "content": secret}, {"role": "assistant", "content": secret}}}), 200)
		b.must(b.post("/api/v1/recall", map[string]any{"bead_id": "bd-1", "query": secret}), 200)
		b.must(b.post("/api/v1/plan", map[string]any{"bead_id": "bd-2", "task": secret}), 200)
		b.must(b.post("/api/v1/patterns/deprecate", map[string]any{"pattern": "Split by file type", "reason": secret}), 200)
		b.must(b.do(req{method: "PUT", path: "/api/v1/explore/settings", body: map[string]any{"enabled": true}}), 200)
		b.must(b.post("/api/v1/explore/events", map[string]any{"session_id": "s1", "auto_start": true, "events": []map[string]any{
			{"type": "tick"}, {"type": "tool_call", "name": "Bash", "args": map[string]any{"command": secret}, "status": "error", "output": secret}}}), 200)
		b.must(b.do(req{method: "POST", path: "/api/v1/import?project=imported", body: testkit.CraftedExport(t),
			header: map[string]string{"Content-Type": "application/x-ndjson"}}), 200)

		dump := testkit.AssertNothingStored(t, b.engine.Config())
		if !strings.Contains(dump, "please fix it") || !strings.Contains(dump, "[REDACTED:jwt]") {
			t.Error("the database lost the text around the secrets")
		}
		export := b.must(b.get("/api/v1/export?all=true"), 200)
		testkit.AssertNoSecret(t, "GET /api/v1/export", string(export.body))
		for _, path := range []string{"/api/v1/errors?bead_id=bd-1", "/api/v1/turns?bead_id=bd-1", "/api/v1/outcomes", "/api/v1/tasks/bd-1", "/api/v1/recalls"} {
			testkit.AssertNoSecret(t, "GET "+path, string(b.must(b.get(path), 200).body))
		}
	})
}
