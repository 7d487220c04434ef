package learningsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
				_, _, loads := likeFullLoad(t, st, db, home, now, learning.RankingThompson, step)
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

// TestPatternSnapshotSavedAtClose: a service that caught up with at least
// closeSaveMin changed patterns saves its state at Close, so that the next
// one starts from a file at the store's version with nothing to catch up;
// with fewer changes it does not (the next one catches up); the guidance is
// a full load's each time.
func TestPatternSnapshotSavedAtClose(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, db := openStore(t, backend)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := t0.Add(2 * time.Hour)
			snapWorld(t, st, 600, t0)
			home := t.TempDir()
			check := func(step string, wantOverlay int) {
				t.Helper()
				snap, full, loads := likeFullLoad(t, st, db, home, now, learning.RankingThompson, step)
				if loads != 0 || snap.version != full.version {
					t.Fatalf("%s: %d full loads, version %d, want none at %d", step, loads, snap.version, full.version)
				}
				if len(snap.overlay) != wantOverlay {
					t.Fatalf("%s: %d patterns caught up, want %d", step, len(snap.overlay), wantOverlay)
				}
			}
			guidanceJSON(t, st, db, home, now, learning.RankingThompson) // full load, saves the file
			changePatterns(t, st, closeSaveMin+36)
			check("caught up, saved at close", closeSaveMin+36)
			check("from the file saved at close", 0)
			changePatterns(t, st, 10)
			check("a few changes, not saved at close", 10)
			check("the file is still the older one", 10)
		})
	}
}

// TestSnapshotOfOverlay: the file Close writes from a base and its overlay
// (layout, writePatternSnapshotOf) is byte for byte the file of the base
// made from the same rows (newPatternBase of rows()), with changed
// patterns and added ones whose ids fall before, between and after the
// base's.
func TestSnapshotOfOverlay(t *testing.T) {
	rows := snapRows(300)
	p := &cachedProject{version: 9, base: newPatternBase(rows), overlay: map[string]*store.PatternRecord{}}
	for i, id := range []string{rows[3].id, rows[100].id, "0-first", "p-00007~", "zz-last", "p-00150b"} {
		rec := &store.PatternRecord{Pattern: learning.Pattern{ID: id, Kind: learning.KindPattern,
			Content: fmt.Sprintf("changed or added %d", i), SuccessCount: int64(i)}}
		if _, inBase := p.base.pos(id); !inBase {
			p.added = append(p.added, id)
		}
		p.overlay[id] = rec
	}
	h := patternSnapHeader{StoreID: "s", Locator: "l", Project: "x", Version: 9}
	want := newPatternBase(overlayRows(p))
	wantFile, err := encodePatternSnapshot(h, want.rows, want.byID)
	if err != nil {
		t.Fatal(err)
	}
	n, row, byID := p.layout()
	if !slices.Equal(byID, want.byID) {
		t.Fatalf("id order %v…, want %v…", byID[:8], want.byID[:8])
	}
	var buf bytes.Buffer
	if err := writePatternSnapshotOf(&buf, h, n, row, byID); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), wantFile) {
		t.Fatal("snapshot from the overlay differs from the snapshot of the rows")
	}
	// The base the cache makes of a grown overlay is that same layout.
	if got := p.rebase(); !reflect.DeepEqual(got.rows, want.rows) || !slices.Equal(got.byID, want.byID) {
		t.Fatal("rebase differs from the rows laid out by hand")
	}
}

// overlayRows lays out every pattern of p by hand, in the store's order
// (base order, changed records in place, added ones last): the reference
// that layout and rebase must agree with.
func overlayRows(p *cachedProject) []patternRow {
	rows := make([]patternRow, len(p.base.rows), len(p.base.rows)+len(p.added))
	copy(rows, p.base.rows)
	for id, r := range p.overlay {
		if pos, ok := p.base.pos(id); ok {
			rows[pos] = rowOf(r)
		}
	}
	for _, id := range p.added {
		rows = append(rows, rowOf(p.overlay[id]))
	}
	return rows
}
