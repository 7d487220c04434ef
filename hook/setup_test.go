package hook_test

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/kaizenhq/kaizen/hook"
)

var update = flag.Bool("update", false, "rewrite the after/ files of testdata/setup/*.txtar")

// The test file system maps archive names to absolute paths:
// project/... is the project, home/... the user's home directory.
var testPaths = hook.Paths{ProjectDir: "/proj", Home: "/home/u", ConfigHome: "/home/u/.config", CodexHome: "/home/u/.codex"}

type memFile struct {
	data []byte
	mode fs.FileMode
}

type memFS map[string]memFile

func (m memFS) read(path string) ([]byte, fs.FileMode, error) {
	f, ok := m[path]
	if !ok {
		return nil, 0, fmt.Errorf("open %s: %w", path, fs.ErrNotExist)
	}
	return append([]byte(nil), f.data...), f.mode, nil
}

// apply carries out a plan the way the command does (without backups).
func (m memFS) apply(plan *hook.SetupPlan) {
	for _, c := range plan.Changes {
		switch {
		case !c.Changed():
		case c.Remove:
			delete(m, c.Path)
		default:
			mode := c.Mode
			if !c.Existed {
				mode = 0o644
			}
			m[c.Path] = memFile{data: c.After, mode: mode}
		}
	}
}

func (m memFS) clone() memFS {
	c := memFS{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

func toAbs(name string) string {
	switch {
	case strings.HasPrefix(name, "project/"):
		return filepath.Join(testPaths.ProjectDir, strings.TrimPrefix(name, "project/"))
	case strings.HasPrefix(name, "home/"):
		return filepath.Join(testPaths.Home, strings.TrimPrefix(name, "home/"))
	}
	panic("archive file outside project/ and home/: " + name)
}

func toArchive(path string) string {
	if rel, err := filepath.Rel(testPaths.ProjectDir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return "project/" + rel
	}
	rel, _ := filepath.Rel(testPaths.Home, path)
	return "home/" + rel
}

// setupCase is one archive of testdata/setup: its first line holds the
// options (client=…, scope=…, command=…), before/ the files as they are,
// after/ the files after setup.
type setupCase struct {
	opts   hook.SetupOptions
	ar     *txtar.Archive
	before memFS
	after  memFS
	// uninstalled is what uninstall leaves, when the case has an
	// uninstalled/ tree (kaizen was installed before); else before.
	uninstalled memFS
}

func loadSetupCase(t *testing.T, path string) setupCase {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := setupCase{ar: ar, before: memFS{}, after: memFS{},
		opts: hook.SetupOptions{Scope: hook.ScopeProject, Paths: testPaths, Command: []string{"/usr/local/bin/kaizen"}}}
	line, _, _ := strings.Cut(string(ar.Comment), "\n")
	for _, kv := range strings.Fields(line) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "client":
			sc.opts.Client = hook.Client(v)
		case "scope":
			sc.opts.Scope = hook.Scope(v)
		case "command":
			sc.opts.Command = strings.Split(v, ",")
		default:
			t.Fatalf("%s: unknown option %q", path, k)
		}
	}
	for _, f := range ar.Files {
		dir, name, _ := strings.Cut(f.Name, "/")
		switch dir {
		case "before":
			sc.before[toAbs(name)] = memFile{data: f.Data, mode: 0o640}
		case "after":
			sc.after[toAbs(name)] = memFile{data: f.Data}
		case "uninstalled":
			if sc.uninstalled == nil {
				sc.uninstalled = memFS{}
			}
			sc.uninstalled[toAbs(name)] = memFile{data: f.Data}
		default:
			t.Fatalf("%s: file %s outside before/ and after/", path, f.Name)
		}
	}
	if sc.uninstalled == nil {
		sc.uninstalled = sc.before
	}
	return sc
}

func contents(m memFS) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[toArchive(k)] = string(v.data)
	}
	return out
}

// Golden files for every client and scope: setup merges into existing
// files with unrelated content (kept), a second run changes nothing, and
// uninstall brings every file back byte for byte (removing the ones setup
// created).
func TestSetupGolden(t *testing.T) {
	paths, _ := filepath.Glob("testdata/setup/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			sc := loadSetupCase(t, path)
			files := sc.before.clone()
			plan, err := hook.PlanSetup(sc.opts, files.read)
			if err != nil {
				t.Fatal(err)
			}
			files.apply(plan)
			for p, f := range files {
				if old, ok := sc.before[p]; ok && old.mode != f.mode {
					t.Errorf("%s: mode %v, was %v", p, f.mode, old.mode)
				}
			}
			if *update {
				writeAfter(t, path, sc.ar, files)
				return
			}
			if diff := cmp.Diff(contents(sc.after), contents(files)); diff != "" {
				t.Errorf("after setup (-want +got):\n%s", diff)
			}

			again, err := hook.PlanSetup(sc.opts, files.read)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range again.Changes {
				if c.Changed() {
					t.Errorf("second setup changes %s:\n%s", c.Path, hook.Diff("a", "b", c.Before, c.After))
				}
			}

			un := sc.opts
			un.Uninstall = true
			plan, err = hook.PlanSetup(un, files.read)
			if err != nil {
				t.Fatal(err)
			}
			files.apply(plan)
			if diff := cmp.Diff(contents(sc.uninstalled), contents(files)); diff != "" {
				t.Errorf("after uninstall (-want +got):\n%s", diff)
			}
			plan, err = hook.PlanSetup(un, files.read)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range plan.Changes {
				if c.Changed() {
					t.Errorf("second uninstall changes %s", c.Path)
				}
			}
		})
	}
}

func writeAfter(t *testing.T, path string, ar *txtar.Archive, files memFS) {
	t.Helper()
	var kept []txtar.File
	for _, f := range ar.Files {
		if strings.HasPrefix(f.Name, "before/") || strings.HasPrefix(f.Name, "uninstalled/") {
			kept = append(kept, f)
		}
	}
	var names []string
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		kept = append(kept, txtar.File{Name: "after/" + toArchive(p), Data: files[p].data})
	}
	ar.Files = kept
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file that does not parse is an error naming it; the plan writes nothing.
func TestSetupRefusesUnparseableFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		client hook.Client
		file   string
		data   string
		want   []string
	}{
		{hook.Claude, "/proj/.claude/settings.json", `{"hooks": {"Stop": [}`, []string{"/proj/.claude/settings.json is not valid JSON", "line 1", "untouched"}},
		{hook.Claude, "/proj/.mcp.json", "{\n  // servers\n  \"mcpServers\": {}\n}", []string{"comments are not JSON", "/proj/.mcp.json"}},
		{hook.Claude, "/proj/.mcp.json", `{"mcpServers": {"a": 1,}}`, []string{"trailing comma"}},
		{hook.Claude, "/proj/.claude/settings.json", `[]`, []string{"does not hold a JSON object"}},
		{hook.Claude, "/proj/.claude/settings.json", `{"hooks": []}`, []string{`"hooks" is not an object`}},
		{hook.Claude, "/proj/.claude/settings.json", `{"hooks": {"Stop": {}}}`, []string{"hooks.Stop is not an array", "install only"}},
		{hook.Claude, "/proj/.mcp.json", `{"mcpServers": "none"}`, []string{`"mcpServers" is not an object`}},
		{hook.Codex, "/proj/.codex/config.toml", "model = \"o3\"\n[mcp_servers\n", []string{"/proj/.codex/config.toml", "line 3", "table name", "untouched"}},
		{hook.Codex, "/proj/.codex/config.toml", "[mcp_servers]\nkaizen = { command = \"kaizen\" }\n", []string{"inline table"}},
		{hook.Cursor, "/proj/.cursor/hooks.json", `{"version": 1, "hooks": {"stop": [{"command": "x"}]`, []string{"/proj/.cursor/hooks.json", "unexpected end"}},
		{hook.Opencode, "/proj/opencode.jsonc", "{\n  // mine\n}\n", []string{"opencode.jsonc exists", `"kaizen": {"type": "local"`}},
		{hook.Opencode, "/proj/.opencode/plugins/kaizen.js", "export const Mine = async () => ({})\n", []string{"not written by kaizen setup"}},
	} {
		files := memFS{tc.file: {data: []byte(tc.data), mode: 0o600}}
		for _, uninstall := range []bool{false, true} {
			if uninstall && (tc.client == hook.Opencode || strings.Contains(tc.want[0], "inline") || tc.want[len(tc.want)-1] == "install only") {
				continue // nothing setup would remove there
			}
			plan, err := hook.PlanSetup(hook.SetupOptions{Client: tc.client, Scope: hook.ScopeProject, Paths: testPaths,
				Command: []string{"/usr/local/bin/kaizen"}, Uninstall: uninstall}, files.read)
			if err == nil {
				t.Errorf("%s %s (uninstall %v): no error, plan %+v", tc.client, tc.data, uninstall, plan)
				continue
			}
			for _, w := range tc.want {
				if w != "install only" && !strings.Contains(err.Error(), w) {
					t.Errorf("%s %q (uninstall %v): error %q does not contain %q", tc.client, tc.data, uninstall, err, w)
				}
			}
		}
	}
}

// Setup updates its own entries when the kaizen executable moved, and
// removes duplicates; it keeps fields a user added to its entries.
func TestSetupUpdatesItsEntries(t *testing.T) {
	t.Parallel()
	files := memFS{}
	opts := hook.SetupOptions{Client: hook.Claude, Scope: hook.ScopeProject, Paths: testPaths, Command: []string{"/old/kaizen"}}
	plan, err := hook.PlanSetup(opts, files.read)
	if err != nil {
		t.Fatal(err)
	}
	files.apply(plan)
	// the user adds an env to the server and a status message to a hook
	mcp := strings.Replace(string(files["/proj/.mcp.json"].data), `"type": "stdio",`, `"type": "stdio", "env": {"KAIZEN_PROJECT": "web"},`, 1)
	files["/proj/.mcp.json"] = memFile{data: []byte(mcp), mode: 0o644}
	settings := strings.Replace(string(files["/proj/.claude/settings.json"].data),
		`"command": "/old/kaizen hook claude Stop",`, `"command": "/old/kaizen hook claude Stop", "statusMessage": "kaizen",`, 1)
	files["/proj/.claude/settings.json"] = memFile{data: []byte(settings), mode: 0o644}

	opts.Command = []string{"/new/bin/kaizen", "--home", "/data/kz"}
	plan, err = hook.PlanSetup(opts, files.read)
	if err != nil {
		t.Fatal(err)
	}
	files.apply(plan)
	mcp, settings = string(files["/proj/.mcp.json"].data), string(files["/proj/.claude/settings.json"].data)
	if !strings.Contains(mcp, `"KAIZEN_PROJECT": "web"`) || !strings.Contains(mcp, `"/new/bin/kaizen"`) || strings.Contains(mcp, "/old/") {
		t.Errorf(".mcp.json:\n%s", mcp)
	}
	if !strings.Contains(settings, `"statusMessage": "kaizen"`) || strings.Contains(settings, "/old/") ||
		strings.Count(settings, "/new/bin/kaizen --home /data/kz hook claude") != len(hook.Events(hook.Claude)) {
		t.Errorf("settings.json:\n%s", settings)
	}
}

// Uninstall leaves alone an MCP entry named kaizen that runs something else.
func TestUninstallKeepsForeignEntries(t *testing.T) {
	t.Parallel()
	files := memFS{"/proj/.mcp.json": {data: []byte(`{"mcpServers": {"kaizen": {"command": "npx", "args": ["kaizen-lookalike"]}}}`), mode: 0o644}}
	plan, err := hook.PlanSetup(hook.SetupOptions{Client: hook.Claude, Scope: hook.ScopeProject, Paths: testPaths,
		Command: []string{"/usr/local/bin/kaizen"}, Uninstall: true}, files.read)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Changes {
		if c.Changed() {
			t.Errorf("uninstall changes %s", c.Path)
		}
	}
	if len(plan.Notes) != 1 || !strings.Contains(plan.Notes[0], "does not run a kaizen executable") {
		t.Errorf("notes %q", plan.Notes)
	}
}

func TestSetupOptionErrors(t *testing.T) {
	t.Parallel()
	files := memFS{}
	for _, o := range []hook.SetupOptions{
		{Client: "vim", Scope: hook.ScopeProject, Paths: testPaths, Command: []string{"/k"}},
		{Client: hook.Claude, Scope: "team", Paths: testPaths, Command: []string{"/k"}},
		{Client: hook.Claude, Scope: hook.ScopeProject, Paths: testPaths},
	} {
		if _, err := hook.PlanSetup(o, files.read); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestShellQuoting(t *testing.T) {
	t.Parallel()
	words := []string{"/Applications/My Tools/kaizen", "--home", "/home/o'neil/kz", "hook", "claude", "Stop", ""}
	joined := hook.ShellJoin(words)
	if joined != `'/Applications/My Tools/kaizen' --home '/home/o'\''neil/kz' hook claude Stop ''` {
		t.Errorf("ShellJoin = %s", joined)
	}
	if got := hook.ShellSplit(joined); !cmp.Equal(got, words) {
		t.Errorf("ShellSplit = %q", got)
	}
	if got := hook.ShellSplit(`"$HOME/bin/kaizen" hook\ x "a \"b\""`); !cmp.Equal(got, []string{"$HOME/bin/kaizen", "hook x", `a "b"`}) {
		t.Errorf("ShellSplit = %q", got)
	}
}

func TestOpencodePluginNamesTheCommand(t *testing.T) {
	t.Parallel()
	js := hook.OpencodePlugin([]string{"/opt/kaizen", "--home", `/data/"kz"`})
	if !bytes.Contains(js, []byte(`const KAIZEN = ["/opt/kaizen","--home","/data/\"kz\""]`)) || bytes.Contains(js, []byte("__KAIZEN_COMMAND__")) {
		t.Errorf("plugin:\n%s", js)
	}
	for _, e := range hook.Events(hook.Opencode) {
		if !bytes.Contains(js, []byte(`"`+e+`"`)) {
			t.Errorf("the plugin never sends %s", e)
		}
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	before := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	after := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n"
	want := `--- old
+++ new
@@ -1,10 +1,11 @@
 a
 b
 c
-d
+D
 e
 f
 g
 h
 i
 j
+k
`
	if got := hook.Diff("old", "new", []byte(before), []byte(after)); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := hook.Diff("old", "new", nil, []byte("x\n")); got != "--- old\n+++ new\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("new file diff:\n%s", got)
	}
	if hook.Diff("a", "b", []byte("same"), []byte("same")) != "" {
		t.Error("diff of equal files")
	}
}

func TestAppendLogRotatesAndFallsBack(t *testing.T) {
	home := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	big := strings.Repeat("x", 4096)
	for range hook.MaxLogBytes/4096 + 2 {
		if _, err := hook.AppendLog(home, fixedTime, big); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(home, hook.LogFile))
	if err != nil || fi.Size() > hook.MaxLogBytes {
		t.Errorf("hook.log: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(home, hook.LogFile+".1")); err != nil {
		t.Errorf("no rotated log: %v", err)
	}
	// a home that cannot be created: the problem goes to the fallback file
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path, err := hook.AppendLog(filepath.Join(blocker, "home"), fixedTime, "kaizen down\nsecond line")
	if err != nil || path != hook.FallbackLogPath() {
		t.Fatalf("fallback %s, %v", path, err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "2026-03-02T09:00:00Z kaizen down second line\n" {
		t.Errorf("fallback log %q", data)
	}
}

var fixedTime = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// Setup writes only event names the targeted version of each client
// accepts (Cursor rejects a whole hooks.json that names an unknown one).
func TestSetupWritesOnlyEventsTheClientKnows(t *testing.T) {
	t.Parallel()
	for c, known := range hook.ClientEvents {
		for _, e := range hook.Events(c) {
			if !slices.Contains(known, e) {
				t.Errorf("%s: setup installs %q, which %s does not know", c, e, c)
			}
		}
	}
	for _, c := range []hook.Client{hook.Claude, hook.Codex, hook.Cursor} {
		if len(hook.ClientEvents[c]) == 0 {
			t.Errorf("no event list for %s", c)
		}
	}
}
