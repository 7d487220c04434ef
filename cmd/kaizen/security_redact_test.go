package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// TestSecurityNoStoredSecretCLI runs the commands that take untrusted text
// (outcome record --input, error record, capture, the hook command without
// a daemon, import) with secret-bearing text, then reads the database
// directly (SQLite and PostgreSQL), every file of the home, error context
// and the export: no secret is anywhere, and no command echoes one.
func TestSecurityNoStoredSecretCLI(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		home := t.TempDir()
		dsn := testkit.DSN(t, backend)
		secret := testkit.SecretText()
		var echoed strings.Builder
		kz := func(stdin string, args ...string) string {
			t.Helper()
			var stdout, stderr bytes.Buffer
			args = append([]string{"--home", home, "--db", dsn, "--project", "proj"}, args...)
			if code := run(args, strings.NewReader(stdin), &stdout, &stderr); code != 0 {
				t.Fatalf("kaizen %s: exit %d: %s", strings.Join(args[6:], " "), code, stderr.String())
			}
			echoed.WriteString(stdout.String() + stderr.String())
			return stdout.String()
		}
		in, _ := json.Marshal(map[string]any{"bead_id": "bd-1", "success": false, "duration_ms": 1000,
			"description": secret, "failure_details": secret, "task": secret})
		kz(string(in), "outcome", "record", "--input", "-")
		kz("", "error", "record", "--bead-id", "bd-1", "--type", "tool_failure", "--message", secret, "--stack-trace", secret, "--context", secret)
		kz(secret, "capture", "--task", "bd-1", "--role", "user", "-")
		kz(string(claudeEvent("cli-sec", "UserPromptSubmit", map[string]any{"prompt": secret})), "hook", "claude", "UserPromptSubmit")
		kz(string(claudeEvent("cli-sec", "PostToolUseFailure", map[string]any{"tool_name": "Bash",
			"tool_input": map[string]any{"command": secret}, "error": secret})), "hook", "claude", "PostToolUseFailure")
		file := filepath.Join(t.TempDir(), "crafted.jsonl")
		if err := os.WriteFile(file, []byte(testkit.CraftedExport(t)), 0o600); err != nil {
			t.Fatal(err)
		}
		kz("", "import", file, "--project", "imported")
		testkit.AssertNoSecret(t, "error context", kz("", "error", "context", "--bead-id", "bd-1"))
		testkit.AssertNoSecret(t, "the export", kz("", "export", "--all"))
		testkit.AssertNoSecret(t, "command output", echoed.String())
		testkit.AssertNoSecret(t, "the hook's task", kz("", "--json", "task", "show", "claude-cli-sec"))

		cfg := kaizen.DefaultConfig()
		cfg.Home, cfg.DB = home, dsn
		dump := testkit.AssertNothingStored(t, cfg)
		if !strings.Contains(dump, "please fix it") || !strings.Contains(dump, "[REDACTED:") {
			t.Error("the database lost the text around the secrets")
		}
	})
}
