package kaizen_test

import (
	"encoding/json"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// Plan guidance is served from an in-memory cache refreshed by pattern
// version. A second engine on the same database (another process or
// server) changes patterns, inverts one and resets it; the first engine's
// guidance must always equal what a fresh engine computes.
func TestGuidanceCacheSeesOtherWriters(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			a := setup(t, backend)
			cfg := a.cfg
			b, err := kaizen.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			check := func(step string) {
				t.Helper()
				fresh, err := kaizen.Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer fresh.Close()
				want, err := fresh.PlanGuidance(ctx, kaizen.PlanInput{Task: "split by file type"})
				if err != nil {
					t.Fatal(err)
				}
				got, err := a.e.PlanGuidance(ctx, kaizen.PlanInput{Task: "split by file type"})
				if err != nil {
					t.Fatal(err)
				}
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(got)
				if string(w) != string(g) {
					t.Fatalf("%s: cached guidance differs from a fresh engine's:\ncached %s\nfresh  %s", step, g, w)
				}
			}
			check("empty")
			for i := range 3 {
				if _, err := b.RecordOutcome(ctx, outcome(sprintf("b-%d", i), true, "Split by feature")); err != nil {
					t.Fatal(err)
				}
			}
			check("after another engine's outcomes")
			for i := range 5 {
				if _, err := b.RecordOutcome(ctx, outcome(sprintf("c-%d", i), false, "Split by file type")); err != nil {
					t.Fatal(err)
				}
				check(sprintf("failure %d", i))
			}
			if _, err := b.PromotePattern(ctx, kaizen.ManualInput{Pattern: "Split by feature", Reason: "validated"}); err != nil {
				t.Fatal(err)
			}
			check("after a promotion (maturity only)")
			if _, err := b.ResetPattern(ctx, kaizen.ManualInput{Pattern: "Split by file type"}); err != nil {
				t.Fatal(err)
			}
			check("after a reset deleted the anti-pattern")
			if _, err := a.e.RecordOutcome(ctx, outcome("a-1", true, "Split by file type")); err != nil {
				t.Fatal(err)
			}
			check("after its own write")
		})
	}
}
