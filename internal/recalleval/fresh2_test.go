package recalleval_test

import (
	"testing"

	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// fresh2 is a second blind holdout set for issue 18
// (testdata/eval-fresh2/README.md), in the format of fresh. Like fresh it
// stays out of sets, so no calibration test learns from it; TestRecallEval
// measures its holdout split and skips its dev one.
var fresh2 = evalSet{name: "fresh2", lessons: "../../testdata/eval-fresh2/lessons.jsonl",
	queries: map[string]string{"holdout": "../../testdata/eval-fresh2/queries.jsonl"},
	pairs:   map[string]string{"holdout": "../../testdata/eval-fresh2/pairs.jsonl"}}

// TestFresh2SetIsHoldoutOnly checks the shape TestRecallEval relies on:
// fresh2 has items only in its holdout split, every relevant lesson it
// names exists, and it is not among the calibration sets.
func TestFresh2SetIsHoldoutOnly(t *testing.T) {
	if n := splitItems(t, fresh2, "dev"); n != 0 {
		t.Errorf("fresh2 has %d dev items; it is holdout only", n)
	}
	if n := splitItems(t, fresh2, "holdout"); n == 0 {
		t.Errorf("fresh2 has no holdout items")
	}
	lessons, err := recalleval.ReadJSONL[recalleval.Lesson](fresh2.lessons)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range lessons {
		ids[l.ID] = true
	}
	qs, err := recalleval.ReadJSONL[recalleval.Query](fresh2.queries["holdout"])
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Split != "holdout" {
			t.Errorf("query %s has split %q", q.ID, q.Split)
		}
		for _, id := range q.Relevant {
			if !ids[id] {
				t.Errorf("query %s names unknown lesson %s", q.ID, id)
			}
		}
	}
	ps, err := recalleval.ReadJSONL[recalleval.Pair](fresh2.pairs["holdout"])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Split != "holdout" {
			t.Errorf("pair %s has split %q", p.ID, p.Split)
		}
	}
	for _, s := range sets {
		if s.name == fresh2.name {
			t.Errorf("the fresh2 set is among the calibration sets")
		}
	}
}
