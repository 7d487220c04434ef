package kaizen_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// recallSet is the labelled query set of testdata/recall_set.json: lessons
// and memories, and queries that each name the one item a good recall
// injects.
type recallSet struct {
	Heuristics []struct{ Key, Kind, Trigger, Rule string } `json:"heuristics"`
	Memories   []struct{ Key, Content string }             `json:"memories"`
	Queries    []struct{ Q, Want string }                  `json:"queries"`
}

// TestRecallAtFive measures recall@5 on the labelled set with the offline
// embedder: the share of queries whose wanted item is among the injected
// ones (at most 5 heuristics and memories, by the unified filter). The
// floor is the measured value; a regression fails.
func TestRecallAtFive(t *testing.T) {
	raw, err := os.ReadFile("testdata/recall_set.json")
	if err != nil {
		t.Fatal(err)
	}
	var set recallSet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	b := setup(t, "sqlite")
	ids := map[string]string{}
	for i, h := range set.Heuristics {
		task := sprintf("lesson-%d", i)
		doc, _ := json.Marshal(map[string]any{"goal": "a past task", "transferable_heuristics": []map[string]string{
			{"kind": h.Kind, "trigger": h.Trigger, "rule": h.Rule, "why": "it went wrong before", "evidence": "task " + task}}})
		res := submit(t, b, task, doc)
		ids[h.Key] = res.Heuristics[0].HeuristicID
	}
	for i, m := range set.Memories {
		res, err := b.e.Capture(ctx, kaizen.CaptureInput{TaskID: sprintf("memory-%d", i),
			Turns: []kaizen.TurnInput{{Role: "user", Content: m.Content}}})
		if err != nil {
			t.Fatal(err)
		}
		ids[m.Key] = res.Turns[0].ID
	}
	hits, byKind := 0, map[bool][2]int{}
	for _, q := range set.Queries {
		want, ok := ids[q.Want]
		if !ok {
			t.Fatalf("query %q wants unknown item %q", q.Q, q.Want)
		}
		rec, err := b.e.Recall(ctx, kaizen.RecallInput{Query: q.Q, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, it := range rec.Items {
			if it.Injected && it.RefID == want {
				found = true
			}
		}
		isMemory := q.Want[:2] == "m-"
		c := byKind[isMemory]
		c[1]++
		if found {
			hits++
			c[0]++
		} else {
			t.Logf("miss: %q wants %s", q.Q, q.Want)
		}
		byKind[isMemory] = c
	}
	r := float64(hits) / float64(len(set.Queries))
	t.Logf("recall@5: %.3f (%d/%d); heuristics %d/%d, memories %d/%d", r, hits, len(set.Queries),
		byKind[false][0], byKind[false][1], byKind[true][0], byKind[true][1])
	if r < recallAtFiveFloor {
		t.Errorf("recall@5 %.3f is below the measured floor %.2f", r, recallAtFiveFloor)
	}
}

// recallAtFiveFloor is the measured recall@5 (see docs/BENCHMARKS.md).
const recallAtFiveFloor = 0.78
