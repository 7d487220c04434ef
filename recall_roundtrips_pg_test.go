package kaizen_test

import (
	"slices"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/bench"
	"github.com/kaizenhq/kaizen/store/postgres"
)

// maxRecallRoundTrips bounds the times a recall of heuristics, skills and
// memories waits for PostgreSQL in its read transactions (issue 18 item
// 5): 5 for the heuristics (the search's statistics, terms and version in
// one pipeline, the postings in one, the bodies, the heuristics, ROLLBACK)
// and 6 for skills and memories (the skills' search head, the memories'
// head, postings, bodies, turns, ROLLBACK). One statement at a time (no
// pipelines) it is 19–21.
const maxRecallRoundTrips = 11

// A recall on PostgreSQL waits for the server at most maxRecallRoundTrips
// times, and returns what the same recall returns on SQLite over the same
// items: the same candidates with the same scores, the same injected ones.
func TestRecallRoundTripsOnPostgres(t *testing.T) {
	pg := setup(t, "postgres")
	lite := setup(t, "sqlite")
	const project = "rt"
	spec := bench.ExperienceSpec{Project: project, Heuristics: 400, Memories: 400, Now: pg.clock.Now(), Seed: 3}
	for _, b := range []*bundle{pg, lite} {
		if err := bench.PopulateExperience(ctx, b.e, spec, nil); err != nil {
			t.Fatal(err)
		}
	}
	st, ok := pg.e.Store().(interface{ ReadStats() postgres.ReadStats })
	if !ok {
		t.Fatalf("store %T has no ReadStats", pg.e.Store())
	}
	queries := []string{
		"I need to edit generated files without breaking the build",
		"rename the config loader and migrate the schema",
		"fix the flaky test in the payment service",
		"update the API client retries",
		"refactor the cache invalidation",
		// a rare term (a ticket number) and a common one: the common
		// term's postings are read in part (sqlstore.PostingsWithin)
		"please look at ticket 417 again",
		"case 12 and ticket 305 please",
	}
	for i, q := range queries {
		for _, b := range []*bundle{pg, lite} { // the first recall loads the vector indexes
			if i == 0 {
				if _, err := b.e.Recall(ctx, kaizen.RecallInput{Project: project, Query: q, DryRun: true}); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := st.ReadStats()
		got, err := pg.e.Recall(ctx, kaizen.RecallInput{Project: project, Query: q, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		after := st.ReadStats()
		trips := after.RoundTrips - before.RoundTrips
		if views := after.Transactions - before.Transactions; views != 2 {
			t.Errorf("%q: %d read transactions, want 2 (heuristics; skills and memories)", q, views)
		}
		if trips > maxRecallRoundTrips {
			t.Errorf("%q: %d round trips to PostgreSQL, want at most %d", q, trips, maxRecallRoundTrips)
		}
		t.Logf("%q: %d round trips, %d items", q, trips, len(got.Items))
		want, err := lite.e.Recall(ctx, kaizen.RecallInput{Project: project, Query: q, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		key := func(r *kaizen.RecallResult) []string {
			var out []string
			for _, it := range r.Items {
				out = append(out, sprintf("%s %s %.12f %v", it.Kind, it.RefID, it.Score, it.Injected))
			}
			return out
		}
		if len(got.Items) == 0 {
			t.Errorf("%q: nothing recalled", q)
		}
		if g, w := key(got), key(want); !slices.Equal(g, w) {
			t.Errorf("%q: PostgreSQL recalled\n%v\nSQLite\n%v", q, g, w)
		}
		if got.Text != want.Text {
			t.Errorf("%q: rendered texts differ", q)
		}
	}
}
