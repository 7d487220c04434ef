package recalleval_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/recalleval"
	"github.com/kaizenhq/kaizen/internal/tokenize"
	"github.com/kaizenhq/kaizen/model"
)

// TestExploreMisses ranks the lessons of each set by the offline
// embedder's topic (the larger of the whole-lesson and trigger-and-rule
// cosines) for the dev queries only and prints those whose relevant
// lesson is ranked below 5 — the dev misses to study (KAIZEN_EXPLORE=1).
func TestExploreMisses(t *testing.T) {
	if os.Getenv("KAIZEN_EXPLORE") == "" {
		t.Skip("exploration")
	}
	e := model.NewOfflineEmbedder(model.DefaultOfflineDimension)
	emb := func(s string) []float32 { return e.EmbedText(s) }
	dot := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	concepts := func(s string) string {
		var w tokenize.Words
		w.Scan(s)
		var out []string
		for _, tk := range w.Tokens {
			if tk.Han {
				tokenize.HanConcepts(w.Runes[tk.From:tk.To], func(c int) { out = append(out, tokenize.ConceptName(c)) })
				continue
			}
			for _, c := range tokenize.WordConcepts(w.Buf[tk.StemFrom:tk.StemTo]) {
				out = append(out, tokenize.ConceptName(c))
			}
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), " ")
	}
	for _, s := range sets {
		lessons, err := recalleval.ReadJSONL[recalleval.Lesson](s.lessons)
		if err != nil {
			t.Fatal(err)
		}
		type lv struct {
			l         recalleval.Lesson
			whole, tr []float32
		}
		var ls []lv
		for _, l := range lessons {
			k := experience.HeuristicKind(strings.ToLower(l.Kind))
			ls = append(ls, lv{l, emb(experience.RecallText(k, l.Trigger, l.Rule, l.Why)), emb(experience.HeuristicText(k, l.Trigger, l.Rule))})
		}
		qs, _ := recalleval.ReadJSONL[recalleval.Query](s.queries["dev"])
		for _, f := range s.extra {
			more, _ := recalleval.ReadJSONL[recalleval.Query](f)
			qs = append(qs, more...)
		}
		hit, n, mrr := 0, 0, 0.0
		for _, q := range qs {
			if q.Split != "dev" || len(q.Relevant) == 0 {
				continue
			}
			n++
			qv := emb(q.Text)
			type sc struct {
				id string
				s  float64
			}
			var scores []sc
			for _, l := range ls {
				scores = append(scores, sc{l.l.ID, max(dot(qv, l.whole), dot(qv, l.tr))})
			}
			slices.SortFunc(scores, func(a, b sc) int {
				if a.s > b.s {
					return -1
				} else if a.s < b.s {
					return 1
				}
				return 0
			})
			for i, x := range scores {
				if slices.Contains(q.Relevant, x.id) {
					mrr += 1 / float64(i+1)
					break
				}
			}
			ok := false
			for i := 0; i < 5; i++ {
				if slices.Contains(q.Relevant, scores[i].id) {
					ok = true
				}
			}
			if ok {
				hit++
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s MISS %q [%s]\n", s.name, q.ID, q.Text, concepts(q.Text))
			for _, r := range q.Relevant {
				for i, x := range scores {
					if x.id == r {
						for _, l := range ls {
							if l.l.ID == r {
								fmt.Fprintf(&b, "   relevant %s rank %d cos %.3f: %s | %s [%s]\n", r, i+1, x.s, l.l.Trigger, l.l.Rule, concepts(l.l.Trigger+" "+l.l.Rule+" "+l.l.Why))
							}
						}
					}
				}
			}
			for i := 0; i < 3; i++ {
				for _, l := range ls {
					if l.l.ID == scores[i].id {
						fmt.Fprintf(&b, "   top%d %s cos %.3f: %s | %s\n", i+1, l.l.ID, scores[i].s, l.l.Trigger, l.l.Rule)
					}
				}
			}
			t.Log(b.String())
		}
		t.Logf("%s dev: topic-only recall@5 %d/%d MRR %.3f", s.name, hit, n, mrr/float64(n))
	}
}
