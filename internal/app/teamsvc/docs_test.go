package teamsvc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
	"github.com/kaizenhq/kaizen/team"
)

// docs/team.md explains each pattern with its state diagram: the Mermaid
// block under each pattern's heading is the one the engine draws (the
// viewer and `kaizen run show` show the same), so the page cannot drift
// from the state machines. KAIZEN_UPDATE_DOCS=1 rewrites the blocks.
func TestDocsStateDiagramsMatchTheMachines(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "team.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, p := range team.Patterns {
		d, _ := team.DiagramFor(p)
		want := "```mermaid\n" + teamsvc.Mermaid(d, "") + "```\n"
		head := "### " + string(p) + " " + p.Name() + "\n"
		i := strings.Index(doc, head)
		if i < 0 {
			t.Errorf("docs/team.md has no section %q", strings.TrimSpace(head))
			continue
		}
		j := strings.Index(doc[i:], "```mermaid\n")
		k := strings.Index(doc[i+j:], "```\n")
		if j < 0 || k < 0 || strings.Contains(doc[i+len(head):i+j], "\n### ") {
			t.Errorf("%s: no mermaid block in its section", p)
			continue
		}
		got := doc[i+j : i+j+k+len("```\n")]
		if got == want {
			continue
		}
		if os.Getenv("KAIZEN_UPDATE_DOCS") == "1" {
			doc = doc[:i+j] + want + doc[i+j+len(got):]
			continue
		}
		t.Errorf("%s: the diagram in docs/team.md differs from the machine's; run with KAIZEN_UPDATE_DOCS=1\nwant:\n%s", p, want)
	}
	if os.Getenv("KAIZEN_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
