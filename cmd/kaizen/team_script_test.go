package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// runTeamExample runs examples/team/<name> with sh, the test binary as
// $KAIZEN, a fresh $KAIZEN_HOME and $WORK, and the project: it returns the
// home, the work directory and the script's output, and fails the test
// (with the daemon's log when the script wrote one) when the script fails.
// The deadline only guards against a hang.
func runTeamExample(t *testing.T, name, project string, hang time.Duration) (home, work, out string) {
	t.Helper()
	bin := kaizenBinary(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "team", name))
	if err != nil {
		t.Fatal(err)
	}
	home, work = t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", script)
	cmd.Env = append(os.Environ(), "KAIZEN="+bin, "KAIZEN_HOME="+home, "KAIZEN_PROJECT="+project, "WORK="+work,
		"KAIZEN_TOKEN=", "KAIZEN_SERVER_ADDR=")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		serveLog, _ := os.ReadFile(filepath.Join(work, "serve.log"))
		t.Fatalf("the example failed: %v\n%s\ndaemon log:\n%s", err, buf.String(), serveLog)
	}
	return home, work, buf.String()
}
