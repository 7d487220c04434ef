package recalleval_test

import (
	"testing"

	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// TestFreshSetIsHoldoutOnly checks the shape TestRecallEval relies on: the
// fresh set has items only in its holdout split (so its dev sub-test
// skips), every relevant lesson it names exists, it stays out of the sets
// the calibration tests learn from, and each of those still has items in
// both splits (so none of their sub-tests skips).
func TestFreshSetIsHoldoutOnly(t *testing.T) {
	if n := splitItems(t, fresh, "dev"); n != 0 {
		t.Errorf("fresh has %d dev items; it is holdout only", n)
	}
	if n := splitItems(t, fresh, "holdout"); n < 180 {
		t.Errorf("fresh has %d holdout queries and pairs, want at least 180", n)
	}
	lessons, err := recalleval.ReadJSONL[recalleval.Lesson](fresh.lessons)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range lessons {
		ids[l.ID] = true
	}
	qs, err := recalleval.ReadJSONL[recalleval.Query](fresh.queries["holdout"])
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
	ps, err := recalleval.ReadJSONL[recalleval.Pair](fresh.pairs["holdout"])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Split != "holdout" {
			t.Errorf("pair %s has split %q", p.ID, p.Split)
		}
	}
	for _, s := range sets {
		if s.name == fresh.name {
			t.Errorf("the fresh set is among the calibration sets")
		}
		for _, split := range []string{"dev", "holdout"} {
			if splitItems(t, s, split) == 0 {
				t.Errorf("set %s has no %s items; its sub-test would now skip", s.name, split)
			}
		}
	}
}
