package kaizen_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// packages maps each package directory of the module to its parsed files.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	dirs := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// Every package says what it is for in a package comment.
func TestEveryPackageHasADocComment(t *testing.T) {
	t.Parallel()
	for dir, files := range packages(t) {
		documented := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, src, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if file.Doc != nil && strings.TrimSpace(file.Doc.Text()) != "" {
				documented = true
			}
		}
		if !documented {
			t.Errorf("package %s has no package doc comment", dir)
		}
	}
}

// pureForbidden are the imports a pure algorithm package may not have:
// I/O, logging, randomness and kaizen's storage and surfaces.
var pureForbidden = []string{"os", "os/exec", "net", "net/http", "database/sql", "log", "log/slog",
	"math/rand", "math/rand/v2", "syscall", "github.com/kaizenhq/kaizen", "github.com/kaizenhq/kaizen/server",
	"github.com/kaizenhq/kaizen/mcp", "github.com/kaizenhq/kaizen/viewer", "github.com/kaizenhq/kaizen/hook",
	"github.com/kaizenhq/kaizen/client"}

// The algorithm packages of the seeds (and the tokenizer they share) are
// pure: no I/O, no storage, no surfaces, and time comes in as a parameter
// (time is imported for its types only: no package reads the clock).
func TestAlgorithmPackagesArePure(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"learning", "experience", "explore", "trace", "team", "internal/tokenize"} {
		files, _ := filepath.Glob(dir + "/*.go")
		if len(files) == 0 && dir != "trace" {
			t.Errorf("no package %s", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if slices.Contains(pureForbidden, path) || strings.HasPrefix(path, "github.com/kaizenhq/kaizen/store") ||
					strings.HasPrefix(path, "github.com/kaizenhq/kaizen/internal/app") {
					t.Errorf("%s imports %s: the algorithm packages stay pure", f, path)
				}
			}
			src, _ := os.ReadFile(f)
			if strings.Contains(string(src), "time.Now()") || strings.Contains(string(src), "time.Since(") {
				t.Errorf("%s reads the clock: take now as a parameter", f)
			}
		}
	}
}

// drivers are the database drivers only the kaizen command, the stores and
// tests may link.
var drivers = []string{"modernc.org/sqlite", "github.com/jackc/pgx/v5"}

// The facade, the daemon client and the hook path link no database driver:
// programs that only talk to a daemon start fast and stay small, and
// drivers are registered by importing store/all (the kaizen command does).
func TestNoDatabaseDriverOnTheLightPaths(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{".", "./client", "./hook/...", "./internal/app/...", "./server", "./mcp", "./viewer"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, d := range drivers {
				if dep == d || strings.HasPrefix(dep, d+"/") {
					t.Errorf("%s links the database driver %s", pkg, dep)
				}
			}
		}
	}
}
