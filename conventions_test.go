package kaizen_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
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

// The learning package is pure: no I/O, no storage, no server; time comes
// in as a parameter (time is imported for its types only, and the test
// below keeps it from reading the clock).
func TestLearningIsPure(t *testing.T) {
	t.Parallel()
	forbidden := []string{"os", "io", "net", "net/http", "database/sql", "log", "log/slog", "math/rand", "math/rand/v2",
		"github.com/kaizenhq/kaizen", "github.com/kaizenhq/kaizen/store", "github.com/kaizenhq/kaizen/server"}
	files, _ := filepath.Glob("learning/*.go")
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
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, "github.com/kaizenhq/kaizen/store/") {
					t.Errorf("%s imports %s: the learning package must stay pure", f, path)
				}
			}
		}
		src, _ := os.ReadFile(f)
		if strings.Contains(string(src), "time.Now()") || strings.Contains(string(src), "time.Since(") {
			t.Errorf("%s reads the clock: take now as a parameter", f)
		}
	}
}
