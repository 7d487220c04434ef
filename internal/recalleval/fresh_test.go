package recalleval_test

import (
	"testing"

	"github.com/kaizenhq/kaizen/internal/recalleval"
)

// TestFreshSetsAreHoldoutOnly checks the shape TestRecallEval relies on:
// each blind set (fresh, fresh2) has items only in its holdout split (so
// its dev sub-test skips) and at least min of them, every relevant lesson
// it names exists, it stays out of the sets the calibration tests learn
// from, and each of those still has items in both splits (so none of
// their sub-tests skips).
func TestFreshSetsAreHoldoutOnly(t *testing.T) {
	for _, c := range []struct {
		set evalSet
		min int
	}{{fresh, 180}, {fresh2, 180}} {
		blindSetShape(t, c.set, c.min)
	}
	for _, s := range sets {
		for _, split := range []string{"dev", "holdout"} {
			if splitItems(t, s, split) == 0 {
				t.Errorf("set %s has no %s items; its sub-test would now skip", s.name, split)
			}
		}
	}
}

func blindSetShape(t *testing.T, set evalSet, min int) {
	t.Helper()
	if n := splitItems(t, set, "dev"); n != 0 {
		t.Errorf("%s has %d dev items; it is holdout only", set.name, n)
	}
	if n := splitItems(t, set, "holdout"); n < min {
		t.Errorf("%s has %d holdout queries and pairs, want at least %d", set.name, n, min)
	}
	lessons, err := recalleval.ReadJSONL[recalleval.Lesson](set.lessons)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range lessons {
		ids[l.ID] = true
	}
	qs, err := recalleval.ReadJSONL[recalleval.Query](set.queries["holdout"])
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Split != "holdout" {
			t.Errorf("%s: query %s has split %q", set.name, q.ID, q.Split)
		}
		for _, id := range q.Relevant {
			if !ids[id] {
				t.Errorf("%s: query %s names unknown lesson %s", set.name, q.ID, id)
			}
		}
	}
	ps, err := recalleval.ReadJSONL[recalleval.Pair](set.pairs["holdout"])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Split != "holdout" {
			t.Errorf("%s: pair %s has split %q", set.name, p.ID, p.Split)
		}
	}
	for _, s := range sets {
		if s.name == set.name {
			t.Errorf("the %s set is among the calibration sets", set.name)
		}
	}
}
