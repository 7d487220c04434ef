package experience

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// TestExploreContradictionFlags counts the pairs the contradiction check
// flags, per label and per dev pair file (KAIZEN_EXPLORE=1; with
// KAIZEN_EXPLORE=2 it prints each flagged pair, and every pair of the
// cross-language dev file).
func TestExploreContradictionFlags(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	verbose := os.Getenv("KAIZEN_EXPLORE") == "2"
	for _, f := range []string{"testdata/pairs/pairs.jsonl", "../testdata/eval/dedup/pairs.jsonl", "../testdata/recall-eval/dedup-dev.jsonl",
		"../testdata/recall-eval/dedup-extra-dev.jsonl", "../testdata/recall-eval/dedup-xlang-dev.jsonl"} {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		flags, totals := map[string]int{}, map[string]int{}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var p struct {
				ID, Label, Split, Note string
				A, B                   struct{ Kind, Trigger, Rule string }
			}
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			if p.Split != "dev" && p.Split != "" {
				continue
			}
			a, b := MergeLesson{Trigger: p.A.Trigger, Rule: p.A.Rule}, MergeLesson{Trigger: p.B.Trigger, Rule: p.B.Rule}
			c := Contradicts(a, b)
			totals[p.Label]++
			if c {
				flags[p.Label]++
			}
			if verbose && (c || f == "../testdata/recall-eval/dedup-xlang-dev.jsonl") {
				pa, ra, _ := ruleStance(a.Rule)
				pb, rb, _ := ruleStance(b.Rule)
				t.Logf("%s %s %s contradicts %v\n  A: %s\n     asks %v rejects %v\n  B: %s\n     asks %v rejects %v", p.ID, p.Label, p.Note, c, p.A.Rule, keys(pa), keys(ra), p.B.Rule, keys(pb), keys(rb))
			}
		}
		fh.Close()
		t.Logf("%s: flagged duplicate %d/%d related %d/%d unrelated %d/%d", f, flags["duplicate"], totals["duplicate"], flags["related"], totals["related"], flags["unrelated"], totals["unrelated"])
	}
}
