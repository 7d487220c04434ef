package hook_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// TestSecurityNoStoredSecretHook sends Claude Code hook payloads carrying
// secrets (a first prompt, a tool call's input and response, a tool
// failure's error, the last assistant message) the way the hook does:
// spooled to disk, then ingested by the engine handler. Neither the spool
// on disk, nor the database read directly (SQLite and PostgreSQL), nor any
// file of the home, nor hook.log, nor the export holds a secret.
func TestSecurityNoStoredSecretHook(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		kb := testkit.Open(t, backend)
		secret := testkit.SecretText()
		sp := spool.Open(kb.Cfg.Home)
		base := map[string]any{"session_id": "5e0c1e52-6a8e-4c55-b1d2-2f0a6d3c7e11", "cwd": "/home/dev/src/webapp",
			"transcript_path": "/tmp/t.jsonl", "permission_mode": "default"}
		payloads := []map[string]any{
			{"hook_event_name": "SessionStart", "source": "startup"},
			{"hook_event_name": "UserPromptSubmit", "prompt": secret},
			{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
				"tool_input":    map[string]any{"command": secret, "env": map[string]any{"AWS_SECRET_ACCESS_KEY": testkit.Secrets[1].Value}},
				"tool_response": map[string]any{"stdout": secret, "stderr": "", "interrupted": false}},
			{"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_use_id": "toolu_2",
				"tool_input": map[string]any{"command": "psql " + testkit.Secrets[5].Text}, "error": secret, "is_interrupt": false},
			{"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": secret},
		}
		at := testkit.Start
		for _, p := range payloads {
			for k, v := range base {
				p[k] = v
			}
			data, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			name := p["hook_event_name"].(string)
			ev, err := hook.Parse(hook.Claude, name, data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			at = at.Add(time.Minute)
			if _, err := hook.Append(sp, hook.NewRecord(ev, hook.EventID(hook.Claude, name, data), "proj", at), at); err != nil {
				t.Fatal(err)
			}
		}
		// The spool is on disk until it is ingested.
		spooled := 0
		_ = filepath.WalkDir(sp.Path(), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(path)
				testkit.AssertNoSecret(t, "spool file "+d.Name(), string(data))
				spooled++
			}
			return nil
		})
		if spooled < len(payloads) {
			t.Fatalf("%d spool files, want at least %d", spooled, len(payloads))
		}
		g := &hook.Ingester{Spool: sp, Handler: hook.EngineHandler(kb.E, time.Hour),
			Log: func(msg string) { _, _ = hook.AppendLog(kb.Cfg.Home, at, msg+" "+secret) }}
		st, err := g.All(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Recorded != len(payloads) || st.Rejected != 0 {
			t.Errorf("ingested %+v, want %d recorded", st, len(payloads))
		}
		// hook.log quotes what failed: scrubbed too.
		if _, err := hook.AppendLog(kb.Cfg.Home, at, "hook failed on "+secret); err != nil {
			t.Fatal(err)
		}
		dump := testkit.AssertNothingStored(t, kb.Cfg)
		if !strings.Contains(dump, "please fix it") || !strings.Contains(dump, "[REDACTED:") {
			t.Error("the database lost the text around the secrets")
		}
		task, err := kb.E.GetTask(context.Background(), "proj", hook.TaskID(hook.Claude, base["session_id"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		if task.Prompts != 1 || task.ToolFailures != 1 {
			t.Errorf("task %+v: the events were not all recorded", task)
		}
		var export strings.Builder
		if _, err := kb.E.Export(context.Background(), &export, kaizen.ExportOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		testkit.AssertNoSecret(t, "the export", export.String())
	})
}
