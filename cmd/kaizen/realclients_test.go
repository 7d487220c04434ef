package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/testkit"
)

// realClient finds a client's command: in $KAIZEN_CLIENTS_BIN (where
// .ci/run installs the pinned npm packages), else on PATH. The test skips
// when it is not installed, unless KAIZEN_REQUIRE_CLIENTS=1 (CI).
func realClient(t *testing.T, name string) string {
	t.Helper()
	if dir := os.Getenv("KAIZEN_CLIENTS_BIN"); dir != "" {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil && os.Getenv("KAIZEN_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("%s is not installed, and KAIZEN_REQUIRE_CLIENTS is set (CI): see .ci/run", name)
	}
	if err != nil {
		t.Skipf("%s is not installed (.ci/run installs the versions of docs/clients.md from npm)", name)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Claude Code itself (no login needed) lists the MCP server kaizen setup
// configured, starts it and reports it connected; so does Codex for its
// config (enabled).
func TestRealClientsSeeKaizen(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		claude := realClient(t, "claude")
		home, kh, proj := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "webapp")
		if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		setup := exec.Command(bin, "--home", kh, "setup", "claude", "--scope", "local", "--dir", proj, "--command", bin, "--allow-temporary")
		setup.Env = append(os.Environ(), "HOME="+home)
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, "mcp", "list")
		cmd.Dir, cmd.Env = proj, append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude mcp list: %v\n%s", err, out)
		}
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "kaizen: ") {
				line = l
			}
		}
		if !strings.Contains(line, "mcp --tools core") || !strings.Contains(line, "Connected") {
			t.Fatalf("claude mcp list does not show kaizen connected:\n%s", out)
		}
	})
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		codex := realClient(t, "codex")
		home, kh := t.TempDir(), t.TempDir()
		codexHome := filepath.Join(home, ".codex")
		env := append(os.Environ(), "HOME="+home, "CODEX_HOME="+codexHome)
		setup := exec.Command(bin, "--home", kh, "setup", "codex", "--scope", "user", "--command", bin, "--allow-temporary")
		setup.Env = env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
		defer cancel()
		cmd := exec.CommandContext(ctx, codex, "mcp", "list", "--json")
		cmd.Env, cmd.Stderr = env, nil
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("codex mcp list: %v\n%s", err, out)
		}
		var servers []struct {
			Name      string `json:"name"`
			Enabled   bool   `json:"enabled"`
			Transport struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"transport"`
		}
		if err := json.Unmarshal(out, &servers); err != nil {
			t.Fatalf("codex mcp list --json: %v\n%s", err, out)
		}
		if len(servers) != 1 || servers[0].Name != "kaizen" || !servers[0].Enabled || servers[0].Transport.Command != bin ||
			strings.Join(servers[0].Transport.Args, " ") != "--home "+kh+" mcp --tools core" {
			t.Fatalf("codex mcp list: %+v", servers)
		}
		// Codex reads the hooks file setup wrote (no deprecated flag)
		if data, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err != nil || strings.Contains(string(data), "codex_hooks") {
			t.Errorf("config.toml: %v\n%s", err, data)
		}
	})
}
