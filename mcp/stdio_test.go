package mcp_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/mcp"
)

// tmpRoot holds what the tests of this package share: the kaizen binary
// and the TypeScript client's install.
var tmpRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kaizen-mcp-test-")
	if err != nil {
		panic(err)
	}
	tmpRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// kaizenBinary builds cmd/kaizen once per test run.
func kaizenBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			goBin = "go"
		}
		binary = filepath.Join(tmpRoot, "bin", "kaizen")
		cmd := exec.Command(goBin, "build", "-o", binary, "github.com/kaizenhq/kaizen/cmd/kaizen")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = errors.New("go build ./cmd/kaizen: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// ServeStdio in process, over pipes: it serves until the client closes its
// end, then returns nil.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	e := openEngine(t, setupOpts{})
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	done := make(chan error, 1)
	go func() {
		done <- mcp.ServeStdio(context.Background(), e, sr, sw, mcp.Options{})
		sw.Close()
	}()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "pipe", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcpsdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res kaizen.OutcomeResult
	checkOK(t, nil, "record_outcome", callTool(t, cs, "record_outcome", outcome("bd-1", true, "Split by feature")), &res)
	if res.Outcome.Project != "test" {
		t.Errorf("project %q", res.Outcome.Project)
	}
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(testkit.Patience):
		t.Fatal("ServeStdio did not return after the client left")
	}
}

// ServeStdio returns nil when its context is cancelled (SIGINT/SIGTERM).
func TestServeStdioCancelled(t *testing.T) {
	t.Parallel()
	e := openEngine(t, setupOpts{})
	sr, cw := io.Pipe()
	defer cw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcp.ServeStdio(ctx, e, sr, io.Discard, mcp.Options{}) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(testkit.Patience):
		t.Fatal("ServeStdio did not return after cancellation")
	}
}

// `kaizen mcp` as a client spawns it: the protocol alone on stdout, logs
// on stderr, the project from the roots, the flag or the working directory.
func TestKaizenMCPCommand(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	home := t.TempDir()
	workdir := filepath.Join(t.TempDir(), "cwd-project")
	if err := os.Mkdir(workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, roots []string, args ...string) (*mcpsdk.ClientSession, *mcp.SyncBuffer) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"mcp", "--home", home, "--log-level", "info"}, args...)...)
		cmd.Dir = workdir
		cmd.Env = append(os.Environ(), "KAIZEN_PROJECT=", "KAIZEN_DB=", "KAIZEN_HOME=")
		stderr := &mcp.SyncBuffer{}
		cmd.Stderr = stderr
		opts := &mcpsdk.ClientOptions{}
		if roots == nil {
			opts.Capabilities = &mcpsdk.ClientCapabilities{}
		}
		client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "spawner", Version: "1"}, opts)
		for _, r := range roots {
			client.AddRoots(&mcpsdk.Root{URI: fileURI(r)})
		}
		cs, err := client.Connect(context.Background(), &mcpsdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v\nstderr: %s", err, stderr)
		}
		return cs, stderr
	}
	projectOf := func(t *testing.T, cs *mcpsdk.ClientSession) string {
		t.Helper()
		var res kaizen.OutcomeResult
		checkOK(t, nil, "record_outcome", callTool(t, cs, "record_outcome", outcome("bd-1", true, "Split by feature")), &res)
		return res.Outcome.Project
	}

	cs, stderr := start(t, nil)
	if p := projectOf(t, cs); p != "cwd-project" {
		t.Errorf("project %q, want the working directory's name", p)
	}
	if n := len(listTools(t, cs)); n != len(mcp.ToolNames()) {
		t.Errorf("%d tools", n)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), "kaizen mcp serving on stdio") {
		t.Errorf("no log on stderr: %s", stderr)
	}

	cs, _ = start(t, []string{filepath.Join(t.TempDir(), "root-project")})
	if p := projectOf(t, cs); p != "root-project" {
		t.Errorf("project %q, want the root's name", p)
	}
	cs.Close()

	cs, _ = start(t, []string{filepath.Join(t.TempDir(), "root-project")}, "--project", "flagged")
	if p := projectOf(t, cs); p != "flagged" {
		t.Errorf("project %q, want --project", p)
	}
	// The outcomes persist in the home's SQLite database across processes.
	var list kaizen.OutcomeList
	checkOK(t, nil, "list_outcomes", callTool(t, cs, "list_outcomes", map[string]any{"project": "cwd-project"}), &list)
	if list.Total != 1 {
		t.Errorf("cwd-project has %d outcomes", list.Total)
	}
	cs.Close()

	// Positional arguments are a usage error (exit 2).
	out, err := exec.Command(bin, "mcp", "extra").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("kaizen mcp extra: %v\n%s", err, out)
	}
}
