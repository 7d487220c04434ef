package learningsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// TestPatternCacheAfterDeletion: a running service whose cached patterns
// are older than a deletion by another writer brings them up to date from
// the store's ids (afterReset) without loading every pattern again, and
// answers byte for byte what a new service loading every pattern answers.
func TestPatternCacheAfterDeletion(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, db := openStore(t, backend)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := t0.Add(2 * time.Hour)
			snapWorld(t, st, 400, t0)
			ctx := context.Background()
			for k, ranking := range []string{learning.RankingSeed, learning.RankingThompson} {
				id := func(i int) string { return fmt.Sprintf("p-%05d", i+k) } // other patterns for each ranking
				lc := learning.DefaultConfig()
				lc.Ranking = ranking
				s := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), lc, Hooks{})
				ask := func() string {
					t.Helper()
					var out []byte
					for _, task := range []string{"split by feature and see", "fix the login page"} {
						g, err := s.PlanGuidance(ctx, PlanInput{Project: "x", Task: task, Limit: 7})
						if err != nil {
							t.Fatal(err)
						}
						b, _ := json.Marshal(g)
						out = append(out, b...)
					}
					return string(out)
				}
				ask()
				steps := []struct {
					name   string
					change func(tx store.Tx) error
				}{
					{"a pattern deleted", func(tx store.Tx) error { return tx.DeletePattern(ctx, "x", id(50)) }},
					{"a changed pattern, then one deleted", func(tx store.Tx) error {
						p, err := tx.GetPattern(ctx, "x", id(60))
						if err != nil {
							return err
						}
						p.SuccessCount += 9
						p.Tags = []string{learning.Strategies[0].Tag()}
						if err := tx.UpdatePattern(ctx, p); err != nil {
							return err
						}
						return tx.DeletePattern(ctx, "x", id(70))
					}},
					{"a pattern deleted and created again, one added", func(tx store.Tx) error {
						p, err := tx.GetPattern(ctx, "x", id(2))
						if err != nil {
							return err
						}
						if err := tx.DeletePattern(ctx, "x", p.ID); err != nil {
							return err
						}
						p.CreatedAt = now
						if _, err := tx.InsertPattern(ctx, p); err != nil {
							return err
						}
						_, err = tx.InsertPattern(ctx, learning.Pattern{ID: id(1000), Project: "x", Kind: learning.KindPattern,
							Content: "Split by feature", Tags: []string{}, ExampleTasks: []string{}, CreatedAt: now, UpdatedAt: now})
						return err
					}},
				}
				for _, step := range steps {
					if err := st.Update(ctx, step.change); err != nil {
						t.Fatal(err)
					}
					got := ask()
					want, full, _ := guidanceJSON(t, st, db, "", now, ranking)
					if got != want {
						t.Fatalf("%s (%s): cached guidance differs from a full load:\ncached %s\nfull   %s", step.name, ranking, got, want)
					}
					if n := s.cache.fullLoads.Load(); n != 1 {
						t.Fatalf("%s (%s): %d full loads, want 1 (the first request's)", step.name, ranking, n)
					}
					if v := s.cache.projects["x"].version; v != full.version {
						t.Fatalf("%s: cached version %d, store %d", step.name, v, full.version)
					}
				}
			}
		})
	}
}

// TestPatternCacheAfterDeletionStaleState: a cached state that lacks a
// pattern the store lists unchanged (it does not match the store) is not
// patched: the service loads every pattern again.
func TestPatternCacheAfterDeletionStaleState(t *testing.T) {
	st, db := openStore(t, "sqlite")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(2 * time.Hour)
	snapWorld(t, st, 200, t0)
	ctx := context.Background()
	s := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), learning.DefaultConfig(), Hooks{})
	if _, err := s.PlanGuidance(ctx, PlanInput{Project: "x", Task: "split by feature"}); err != nil {
		t.Fatal(err)
	}
	cur := s.cache.projects["x"]
	rows := append([]patternRow(nil), cur.base.rows[1:]...) // the first pattern missing
	s.cache.projects["x"] = &cachedProject{version: cur.version, base: newPatternBase(rows)}
	if err := st.Update(ctx, func(tx store.Tx) error { return tx.DeletePattern(ctx, "x", "p-00100") }); err != nil {
		t.Fatal(err)
	}
	g, err := s.PlanGuidance(ctx, PlanInput{Project: "x", Task: "split by feature and see", Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.cache.fullLoads.Load(); n != 2 {
		t.Fatalf("%d full loads, want 2 (the stale state reloaded)", n)
	}
	if got := len(s.cache.projects["x"].base.rows); got != 199 {
		t.Fatalf("%d patterns cached, want 199", got)
	}
	want, _, _ := guidanceJSON(t, st, db, "", now, learning.RankingThompson)
	b, _ := json.Marshal(g)
	if !strings.HasPrefix(want, string(b)) {
		t.Fatalf("guidance after reloading differs from a full load:\ngot  %s\nfull %s", b, want)
	}
}
