package learningsvc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// changePatterns has another writer change the success counts of the
// patterns p-00000 … p-(n-1).
func changePatterns(t *testing.T, st store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	err := st.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			p, err := tx.GetPattern(ctx, "x", fmt.Sprintf("p-%05d", i))
			if err != nil {
				return err
			}
			p.SuccessCount += 3
			if err := tx.UpdatePattern(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPatternSnapshotStale: a snapshot file with more than
// max(staleMin, patterns/staleDivisor) patterns changed since it, or a
// cached state of a running service as far behind, is not caught up by
// full records but replaced by a full load (which saves a new snapshot);
// a snapshot with fewer changes is still caught up; a deleted snapshot
// file means a full load. The guidance is byte for byte a full load's in
// every case.
func TestPatternSnapshotStale(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, db := openStore(t, backend)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := t0.Add(2 * time.Hour)
			const n = 600
			snapWorld(t, st, n, t0)
			home := t.TempDir()
			check := func(step string, wantLoads int64) {
				t.Helper()
				want, _, _ := guidanceJSON(t, st, db, "", now, learning.RankingThompson)
				got, _, loads := guidanceJSON(t, st, db, home, now, learning.RankingThompson)
				if got != want {
					t.Fatalf("%s: guidance differs from a full load:\ngot  %s\nwant %s", step, got, want)
				}
				if loads != wantLoads {
					t.Fatalf("%s: %d full loads, want %d", step, loads, wantLoads)
				}
			}
			check("first load", 1) // saves the snapshot
			check("from the snapshot", 0)
			changePatterns(t, st, 100) // fewer than staleMin
			check("a few changes since the snapshot", 0)
			changePatterns(t, st, staleMin+50)
			check("many changes since the snapshot", 1) // saves a new snapshot
			check("from the new snapshot", 0)
			files, _ := filepath.Glob(filepath.Join(home, "patterns", "*.kzp"))
			for _, f := range files {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
			check("snapshot deleted", 1)

			// A running service far behind another writer.
			lc := learning.DefaultConfig()
			s := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), lc, Hooks{})
			ask := func() string {
				g, err := s.PlanGuidance(context.Background(), PlanInput{Project: "x", Task: "split by feature and see", Limit: 7})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(g)
				return string(b)
			}
			ask()
			changePatterns(t, st, 10)
			ask()
			if got := s.cache.fullLoads.Load(); got != 1 {
				t.Fatalf("running service caught up with 10 changes by %d full loads, want 1", got)
			}
			changePatterns(t, st, staleMin+50)
			got := ask()
			if loads := s.cache.fullLoads.Load(); loads != 2 {
				t.Fatalf("running service far behind: %d full loads, want 2", loads)
			}
			fresh := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), lc, Hooks{})
			g, err := fresh.PlanGuidance(context.Background(), PlanInput{Project: "x", Task: "split by feature and see", Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(g); string(b) != got {
				t.Fatalf("running service after a full load differs from a new one:\ngot  %s\nwant %s", got, b)
			}
		})
	}
}
