package kaizen_test

import (
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// TestLongActionsReportProgress: rebuild and re-embedding call their
// progress callbacks, ending at done = total.
func TestLongActionsReportProgress(t *testing.T) {
	b := setup(t, "sqlite")
	for i := range 5 {
		if _, err := b.e.RecordOutcome(ctx, outcome(sprintf("t%d", i), i%2 == 0, "Split by feature", "Split by file type")); err != nil {
			t.Fatal(err)
		}
	}
	var calls [][2]int
	if _, err := b.e.RebuildWith(ctx, kaizen.RebuildOptions{Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }}); err != nil {
		t.Fatal(err)
	}
	// 10 observations, 5 outcomes × 4 default criteria, 2 patterns.
	if len(calls) == 0 || calls[len(calls)-1] != [2]int{32, 32} {
		t.Errorf("rebuild progress: %v, want to end at 32/32", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] < calls[i-1][0] {
			t.Errorf("rebuild progress went back: %v", calls)
		}
	}
	if _, err := b.e.Capture(ctx, kaizen.CaptureInput{TaskID: "m", Turns: []kaizen.TurnInput{
		{Role: "user", Content: "a memory long enough to be indexed"}, {Role: "user", Content: "and another one of the same kind"}}}); err != nil {
		t.Fatal(err)
	}
	calls = nil
	res, err := b.e.ReembedWith(ctx, kaizen.ReembedOptions{Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is stale for the configured embedder: one call, 0 of 0.
	if len(calls) != 1 || calls[0] != [2]int{0, 0} || res.Items["memory"] != 0 {
		t.Errorf("reembed progress with nothing stale: %v, %+v", calls, res)
	}
	// Three search documents without a vector are stale.
	if err := b.e.Store().Update(ctx, func(tx store.Tx) error {
		for _, id := range []string{"turn-a", "turn-b", "turn-c"} {
			if err := tx.PutSearchDoc(ctx, "proj", experience.ItemMemory, id, "orphan text"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	calls = nil
	if res, err = b.e.ReembedWith(ctx, kaizen.ReembedOptions{Project: "proj", Progress: func(done, total int) {
		calls = append(calls, [2]int{done, total})
	}}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0] != [2]int{0, 3} || calls[1] != [2]int{3, 3} || res.Items["memory"] != 3 {
		t.Errorf("reembed progress of three stale items: %v, %+v", calls, res.Items)
	}
}
