package trace

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// labelledError is one line of testdata/errors_*.jsonl (see testdata/README.md).
type labelledError struct {
	ID      string `json:"id"`
	Group   string `json:"group"`
	Lang    string `json:"lang"`
	Command string `json:"command"`
	Error   string `json:"error"`
}

func readLabelled(t *testing.T, file string) []labelledError {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelledError
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e labelledError
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		if e.ID == "" || e.Group == "" || e.Error == "" {
			t.Fatalf("%s:%d: id, group and error are required", file, line)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// groupAll assigns every error in order with a fresh grouper.
func groupAll(t *testing.T, items []labelledError) []Assignment {
	t.Helper()
	g, err := NewGrouper(DefaultGroupConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	out := make([]Assignment, len(items))
	for i, it := range items {
		out[i] = g.Assign(it.Error, it.Command, now.Add(time.Duration(i)*time.Second))
	}
	return out
}

// TestGroupingQuality reports pairwise and B-cubed precision and recall of
// the Grouper on every labelled set testdata/errors_*.jsonl, overall and
// per language, in file order and over shuffled orders (online grouping
// depends on order). It requires ≥ 0.9 pairwise precision and recall on
// each file (the bar) in file order.
func TestGroupingQuality(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors_*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/errors_*.jsonl")
	}
	for _, file := range files {
		items := readLabelled(t, file)
		name := filepath.Base(file)
		as := groupAll(t, items)
		gold := make([]string, len(items))
		pred := make([]string, len(items))
		for i := range items {
			gold[i], pred[i] = items[i].Group, as[i].GroupID
		}
		pp, pr := PairwiseScores(gold, pred)
		bp, br := BCubedScores(gold, pred)
		t.Logf("%s: %d errors, %d gold groups, %d predicted groups", name, len(items), countDistinct(gold), countDistinct(pred))
		t.Logf("%s: pairwise precision %.3f recall %.3f F1 %.3f | B-cubed precision %.3f recall %.3f F1 %.3f",
			name, pp, pr, F1(pp, pr), bp, br, F1(bp, br))
		// per language (pairs within the language)
		langs := map[string][]int{}
		for i, it := range items {
			langs[it.Lang] = append(langs[it.Lang], i)
		}
		for _, l := range sortedKeys(langs) {
			var g, p []string
			for _, i := range langs[l] {
				g, p = append(g, gold[i]), append(p, pred[i])
			}
			lp, lr := PairwiseScores(g, p)
			lbp, lbr := BCubedScores(g, p)
			t.Logf("%s:   %-7s n=%3d pairwise P %.3f R %.3f | B-cubed P %.3f R %.3f", name, l, len(g), lp, lr, lbp, lbr)
		}
		// shuffled orders
		minP, minR, sumP, sumR := 1.0, 1.0, 0.0, 0.0
		const runs = 10
		for seed := uint64(1); seed <= runs; seed++ {
			perm := rand.New(rand.NewPCG(seed, 7)).Perm(len(items))
			shuffled := make([]labelledError, len(items))
			for i, j := range perm {
				shuffled[i] = items[j]
			}
			sa := groupAll(t, shuffled)
			sg, sp := make([]string, len(items)), make([]string, len(items))
			for i := range shuffled {
				sg[i], sp[i] = shuffled[i].Group, sa[i].GroupID
			}
			p, r := PairwiseScores(sg, sp)
			minP, minR = min(minP, p), min(minR, r)
			sumP, sumR = sumP+p, sumR+r
		}
		t.Logf("%s: %d shuffled orders: pairwise precision mean %.3f min %.3f, recall mean %.3f min %.3f",
			name, runs, sumP/runs, minP, sumR/runs, minR)
		logMistakes(t, name, items, as)
		if pp < 0.9 || pr < 0.9 {
			t.Errorf("%s: pairwise precision %.3f / recall %.3f below 0.9", name, pp, pr)
		}
	}
}

func countDistinct(s []string) int {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return len(m)
}

// logMistakes lists wrong merges and splits, with the signatures involved.
func logMistakes(t *testing.T, name string, items []labelledError, as []Assignment) {
	byPred := map[string][]int{}
	byGold := map[string][]int{}
	for i := range items {
		byPred[as[i].GroupID] = append(byPred[as[i].GroupID], i)
		byGold[items[i].Group] = append(byGold[items[i].Group], i)
	}
	describe := func(i int) string {
		s := as[i].Signature
		return items[i].ID + " [" + s.Type + "] " + s.Message + " @" + s.Frame.File + " (" + as[i].MatchedBy + ")"
	}
	var lines []string
	for _, ids := range byPred {
		golds := map[string]bool{}
		for _, i := range ids {
			golds[items[i].Group] = true
		}
		if len(golds) > 1 {
			var d []string
			for _, i := range ids {
				d = append(d, items[i].Group+": "+describe(i))
			}
			sort.Strings(d)
			lines = append(lines, "MERGED "+strings.Join(d, "\n           "))
		}
	}
	for g, ids := range byGold {
		preds := map[string]bool{}
		for _, i := range ids {
			preds[as[i].GroupID] = true
		}
		if len(preds) > 1 {
			var d []string
			for _, i := range ids {
				d = append(d, describe(i))
			}
			sort.Strings(d)
			lines = append(lines, "SPLIT  "+g+": "+strings.Join(d, "\n           "))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Logf("%s: %s", name, l)
	}
}
