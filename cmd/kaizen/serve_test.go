package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// `kaizen serve` refuses an address that is not loopback without a token,
// whether it comes from the flag or the environment, before opening the
// store.
func TestServeRefusesExposedAddressWithoutToken(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{args: []string{"serve", "--addr", "0.0.0.0:0"}},
		{args: []string{"serve", "--addr", ":0"}},
		{args: []string{"serve"}, env: "0.0.0.0:0"},
	} {
		t.Setenv("KAIZEN_SERVER_ADDR", tc.env)
		t.Setenv("KAIZEN_TOKEN", "")
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"--home", home}, tc.args...), strings.NewReader(""), &stdout, &stderr)
		if code != exitInvalid || !strings.Contains(stderr.String(), "without a token") {
			t.Errorf("%v (env %q): exit %d, stderr %q", tc.args, tc.env, code, stderr.String())
		}
	}
	if m, _ := filepath.Glob(filepath.Join(home, "*.db")); len(m) > 0 {
		t.Errorf("the store was created: %v", m)
	}
}

func TestServeBadLogLevel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"--home", t.TempDir(), "serve", "--log-level", "loud"}, strings.NewReader(""), &stdout, &stderr)
	if code != exitInvalid || !strings.Contains(stderr.String(), "--log-level") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// A real `kaizen serve` process (this test binary, as set up by TestMain):
// it prints its URL, serves the API with the token from the environment,
// and on SIGTERM drains, closes the store and exits 0; the outcome it
// acknowledged is in the database afterwards.
func TestServeProcess(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("kaizen")
	if err != nil {
		t.Skipf("kaizen command not set up by TestMain: %v", err)
	}
	home := t.TempDir()
	const token = "process-test-token-0123456789"
	cmd := exec.Command(bin, "--home", home, "--project", "demo", "serve", "--addr", "127.0.0.1:0", "--log-json")
	cmd.Env = append(cmd.Environ(), "KAIZEN_TOKEN="+token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no start line: %v; stderr:\n%s", err, stderr.String())
	}
	const prefix = "kaizen serving on "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("start line %q", line)
	}
	url := strings.Fields(strings.TrimPrefix(line, prefix))[0]

	rq, _ := http.NewRequest("POST", url+"/api/v1/outcomes", strings.NewReader(`{"bead_id": "bd-1", "duration_ms": 1000, "success": true}`))
	rq.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("record: %d", resp.StatusCode)
	}
	resp, err = http.Get(url + "/api/v1/outcomes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", resp.StatusCode)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(testkit.Patience):
		t.Fatal("kaizen serve did not exit after SIGTERM")
	}
	logs := stderr.String()
	if strings.Contains(logs, token) {
		t.Error("the token is in the logs")
	}
	for _, want := range []string{`"msg":"serving"`, `"msg":"request"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("log line is not JSON: %q", l)
		}
	}

	cfg := kaizen.DefaultConfig()
	cfg.Home = home
	cfg.Project = "demo"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	list, err := e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{})
	if err != nil || list.Total != 1 {
		t.Fatalf("outcomes after restart: %+v %v", list, err)
	}
}
