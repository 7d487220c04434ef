package experience

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestExploreContradictionNotes(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	for _, f := range []string{"../testdata/eval/dedup/pairs.jsonl", "../testdata/recall-eval/dedup-extra-dev.jsonl", "../testdata/recall-eval/dedup-dev.jsonl"} {
		fh, _ := os.Open(f)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var p struct {
				ID, Label, Split, Note string
				CrossLanguage          bool `json:"cross_language"`
				A, B                   struct{ Kind, Trigger, Rule string }
			}
			json.Unmarshal(sc.Bytes(), &p)
			if p.Split != "dev" || p.Label != "unrelated" || !(strings.Contains(p.Note, "contradiction") || strings.Contains(p.Note, "twin") || strings.Contains(p.Note, "opposite")) {
				continue
			}
			a, b := MergeLesson{Trigger: p.A.Trigger, Rule: p.A.Rule}, MergeLesson{Trigger: p.B.Trigger, Rule: p.B.Rule}
			pa, ra, _ := ruleStance(a.Rule)
			pb, rb, _ := ruleStance(b.Rule)
			t.Logf("%s %s cross %v contradicts %v\n  A: %s | %s\n     asks %v rejects %v\n  B: %s | %s\n     asks %v rejects %v", p.ID, p.Note, p.CrossLanguage, Contradicts(a, b), p.A.Trigger, p.A.Rule, keys(pa), keys(ra), p.B.Trigger, p.B.Rule, keys(pb), keys(rb))
		}
		fh.Close()
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		if !strings.Contains(k, " ") {
			out = append(out, k)
		}
	}
	return out
}
