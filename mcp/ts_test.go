package mcp_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/mcp"
)

// The official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// testdata/ts/package-lock.json) is a client written independently of the
// Go SDK. These tests drive `kaizen mcp` over stdio and the HTTP handler
// with it (testdata/ts/client.mjs holds the scenario and its assertions).
//
// The package is installed with `npm ci` once per lock file, in the user's
// cache directory (kaizen-test/mcp-ts-<hash>), and reused by later runs.
// Without node or npm the tests are skipped, unless CI is set: then they
// fail.

var (
	tsOnce   sync.Once
	tsScript string
	tsErr    error
)

// tsClient returns the path of the client script, installed next to its
// node_modules.
func tsClient(t *testing.T) (node, script string) {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and npm are required in CI: %v %v", nodeErr, npmErr)
		}
		t.Skip("node or npm not found: skipping the TypeScript SDK client tests")
	}
	tsOnce.Do(func() { tsScript, tsErr = installTSClient(npm) })
	if tsErr != nil {
		t.Fatal(tsErr)
	}
	return node, tsScript
}

func installTSClient(npm string) (string, error) {
	src := filepath.Join("testdata", "ts")
	files := map[string][]byte{}
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json", "client.mjs"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return "", err
		}
		files[name] = data
		if name != "client.mjs" {
			h.Write(data)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = tmpRoot
	}
	base := filepath.Join(cache, "kaizen-test")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(base, "mcp-ts-"+hex.EncodeToString(h.Sum(nil))[:16])
	marker := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	if _, err := os.Stat(marker); err != nil {
		// Install into a fresh directory, then move it into place, so a
		// concurrent or interrupted run never sees a partial install.
		tmp, err := os.MkdirTemp(base, "install-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		for _, name := range []string{"package.json", "package-lock.json"} {
			if err := os.WriteFile(filepath.Join(tmp, name), files[name], 0o644); err != nil {
				return "", err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("npm ci in %s: %v\n%s", tmp, err, out)
		}
		if err := os.Rename(tmp, dir); err != nil {
			if _, serr := os.Stat(marker); serr != nil { // not installed by a concurrent run either
				return "", err
			}
		}
	}
	// The script runs from the install directory so that Node resolves
	// the SDK; written to a temporary name and renamed, for concurrent runs.
	script := filepath.Join(dir, "client.mjs")
	tmp, err := os.CreateTemp(dir, "client-*.mjs")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(files["client.mjs"]); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return script, os.Rename(tmp.Name(), script)
}

// tsRun runs the client script with cfg and returns its final event. When
// onRestart is set, it is called when the script asks for a restart, and
// the script is then told to go on.
func tsRun(t *testing.T, cfg map[string]any, onRestart func()) map[string]any {
	t.Helper()
	node, script := tsClient(t)
	arg, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, string(arg))
	cmd.Dir = filepath.Dir(script)
	stderr := &mcp.SyncBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last map[string]any
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Errorf("stdout line is not an event: %q", sc.Text())
			continue
		}
		last = ev
		if ev["event"] == "restart" {
			if onRestart == nil {
				t.Fatal("the script asks for a restart")
			}
			onRestart()
			if _, err := io.WriteString(stdin, "go\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	stdin.Close()
	err = cmd.Wait()
	if err != nil || last == nil || last["event"] != "done" {
		t.Fatalf("TypeScript client: %v, last event %v\nstderr:\n%s", err, last, stderr)
	}
	return last
}

func checkDone(t *testing.T, done map[string]any, project string) {
	t.Helper()
	var tools []string
	for _, n := range done["tools"].([]any) {
		tools = append(tools, n.(string))
	}
	slices.Sort(tools)
	want := slices.Sorted(slices.Values(mcp.ToolNames()))
	if !slices.Equal(tools, want) {
		t.Errorf("the client saw tools %v, want %v", tools, want)
	}
	if done["project"] != project {
		t.Errorf("project %v, want %s", done["project"], project)
	}
	if n, _ := done["calls"].(float64); n < 35 {
		t.Errorf("only %v calls", done["calls"])
	}
}

// The TypeScript client spawns `kaizen mcp`, declaring a root: the
// project is the root's directory name.
func TestTypeScriptClientStdio(t *testing.T) {
	t.Parallel()
	bin := kaizenBinary(t)
	home := t.TempDir()
	workdir := filepath.Join(t.TempDir(), "ts-cwd")
	root := filepath.Join(t.TempDir(), "ts-root-project")
	for _, d := range []string{workdir, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	done := tsRun(t, map[string]any{
		"mode": "stdio", "command": bin, "args": []string{"mcp", "--home", home, "--log-level", "info"},
		"cwd": workdir, "root": root, "expectProject": "ts-root-project",
		"env": map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")},
	}, nil)
	checkDone(t, done, "ts-root-project")

	// What the client recorded is in the home's database.
	cfg := kaizen.DefaultConfig()
	cfg.Home = home
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	list, err := e.ListPatterns(context.Background(), kaizen.PatternQuery{Project: "ts-root-project"})
	if err != nil || list.Total == 0 {
		t.Errorf("patterns of ts-root-project: %v, %v", list, err)
	}
}

// The TypeScript client talks to the HTTP handler mounted at /mcp, with
// the project in the URL; the server restarts (a new engine on the same
// database) in the middle and the same client goes on.
func TestTypeScriptClientHTTP(t *testing.T) {
	t.Parallel()
	tsClient(t) // skip early without node
	d := startDaemon(t)
	restarts := 0
	done := tsRun(t, map[string]any{
		"mode": "http", "url": d.url("?project=ts-http"), "expectProject": "ts-http", "restart": true,
	}, func() {
		d.restart()
		restarts++
	})
	checkDone(t, done, "ts-http")
	if restarts != 1 {
		t.Errorf("%d restarts", restarts)
	}
	list, err := d.engine.ListOutcomes(context.Background(), kaizen.OutcomeQuery{Project: "ts-http"})
	if err != nil || list.Total != 9 {
		t.Errorf("ts-http outcomes: %d, %v", list.Total, err)
	}
}
