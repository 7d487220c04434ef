package recalleval_test

import (
	"os"
	"slices"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// TestExploreJudgeVetoes counts, on the dev pairs, which veto keeps each
// labelled pair apart (the writer's vetoes on the model's verdicts).
func TestExploreJudgeVetoes(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	n := map[string]map[string]int{}
	for _, p := range mergeJudgeDevPairs(t) {
		a, b := p.A.MergeLesson(), p.B.MergeLesson()
		k := "none"
		switch c, o := experience.Contradicts(a, b), experience.OtherRule(a, b); {
		case c && o:
			k = "both"
		case c:
			k = "contradicts"
		case o:
			k = "otherrule"
		}
		if n[p.Label] == nil {
			n[p.Label] = map[string]int{}
		}
		n[p.Label][k]++
		if k != "none" && p.Label != "unrelated" {
			t.Logf("%s %s %s: %q / %q  —  %q / %q", p.ID, p.Label, k, p.A.Trigger, p.A.Rule, p.B.Trigger, p.B.Rule)
		}
	}
	t.Log(n)
}

// TestExploreJudgeRetrieval measures what the merge judge is shown in a
// crowded store: every dev pair's first lesson and the lessons of both
// sets in one index; for each second lesson, the rank of its counterpart
// by cosine (the writer's index search), and its cosine against the
// floor (experience.MergeJudgeFloor).
func TestExploreJudgeRetrieval(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	pairs := mergeJudgeDevPairs(t)
	var pool []recalleval.Lesson
	for _, s := range sets {
		ls, err := recalleval.ReadJSONL[recalleval.Lesson](s.lessons)
		if err != nil {
			t.Fatal(err)
		}
		pool = append(pool, ls...)
	}
	for _, p := range pairs {
		pool = append(pool, p.A)
	}
	text := func(l recalleval.Lesson) string {
		return experience.HeuristicText(experience.HeuristicKind(l.Kind), l.Trigger, l.Rule)
	}
	texts := make([]string, len(pool))
	for i, l := range pool {
		texts[i] = text(l)
	}
	emb := offlineEmbed()
	pv, err := emb(texts)
	if err != nil {
		t.Fatal(err)
	}
	dot := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	type row struct{ in5, in3, above map[string]int }
	r := row{map[string]int{}, map[string]int{}, map[string]int{}}
	total := map[string]int{}
	var cosByLabel = map[string][]float64{}
	for _, p := range pairs {
		bv, err := emb([]string{text(p.B)})
		if err != nil {
			t.Fatal(err)
		}
		target := dot(bv[0], pv[len(pool)-len(pairs)+slices.IndexFunc(pairs, func(q recalleval.Pair) bool { return q.ID == p.ID })])
		rank := 1
		seen := map[string]bool{text(p.A): true}
		for i, v := range pv {
			if seen[texts[i]] {
				continue
			}
			seen[texts[i]] = true
			if dot(bv[0], v) > target {
				rank++
			}
		}
		total[p.Label]++
		cosByLabel[p.Label] = append(cosByLabel[p.Label], target)
		if target >= experience.MergeJudgeFloor {
			r.above[p.Label]++
			if rank <= 5 {
				r.in5[p.Label]++
			}
			if rank <= 3 {
				r.in3[p.Label]++
			}
		}
	}
	t.Logf("pool %d lessons; pairs by label %v", len(pool), total)
	t.Logf("counterpart above floor %v; and in top 5 %v; in top 3 %v", r.above, r.in5, r.in3)
	for l, cs := range cosByLabel {
		slices.Sort(cs)
		t.Logf("%s cosines: min %.3f p5 %.3f p10 %.3f median %.3f", l, cs[0], cs[len(cs)/20], cs[len(cs)/10], cs[len(cs)/2])
	}
}
