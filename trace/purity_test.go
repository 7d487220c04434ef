package trace

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The trace package is pure: no I/O, no storage, no clock, no randomness.
func TestPackageIsPure(t *testing.T) {
	t.Parallel()
	forbidden := map[string]bool{"os": true, "io": true, "io/fs": true, "net": true, "net/http": true, "database/sql": true,
		"log": true, "log/slog": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true, "os/exec": true, "syscall": true}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[p] || strings.HasPrefix(p, "github.com/kaizenhq/kaizen") {
				t.Errorf("%s imports %s", f, p)
			}
		}
		src, _ := os.ReadFile(f)
		for _, clock := range []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After(", "time.Tick("} {
			if strings.Contains(string(src), clock) {
				t.Errorf("%s uses %s: take now as a parameter", f, clock)
			}
		}
	}
}
