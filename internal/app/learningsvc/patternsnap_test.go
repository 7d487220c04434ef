package learningsvc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	_ "github.com/kaizenhq/kaizen/store/postgres"
	_ "github.com/kaizenhq/kaizen/store/sqlite"
)

// snapWorld writes n patterns of indexWorld's kinds (tags, manual states,
// anti-patterns, inverted patterns, ties) into the store.
func snapWorld(t *testing.T, st store.Store, n int, t0 time.Time) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	recs := indexWorld(n, t0, false, r)
	err := st.Update(context.Background(), func(tx store.Tx) error {
		for i, rec := range recs {
			p, m := rec.Pattern, rec.Maturity
			p.Project, m.Project = "x", "x"
			p.CreatedAt, p.UpdatedAt = t0.Add(time.Duration(i)*time.Microsecond), t0
			if p.Kind == learning.KindPattern {
				p.Content = fmt.Sprintf("%s #%d", p.Content, i) // one pattern per content key
			}
			if p.Tags == nil {
				p.Tags = []string{}
			}
			p.ExampleTasks = []string{"t-1"}
			if _, err := tx.InsertPattern(context.Background(), p); err != nil {
				return err
			}
			if i%7 != 0 { // some patterns without a maturity record
				if err := tx.PutMaturity(context.Background(), m); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func openStore(t *testing.T, backend string) (st store.Store, db string) {
	t.Helper()
	switch backend {
	case "sqlite":
		db = filepath.Join(t.TempDir(), "k.db")
	case "postgres":
		db = pgtest.DSN(t)
	}
	st, err := store.Open(context.Background(), db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, db
}

// guidanceJSON is a new service's guidance (with snapshots under home when
// home is not empty), its cached state after the request and the number of
// times it loaded every pattern.
// likeFullLoad asks a service keeping its pattern snapshots in home and a
// service loading every pattern, fails unless their guidance is byte for
// byte the same, and returns the first's state and full loads and the
// second's state.
func likeFullLoad(t *testing.T, st store.Store, db, home string, now time.Time, ranking, step string) (snap, full *cachedProject, loads int64) {
	t.Helper()
	want, full, _ := guidanceJSON(t, st, db, "", now, ranking)
	got, snap, loads := guidanceJSON(t, st, db, home, now, ranking)
	if got != want {
		t.Fatalf("%s (%s): guidance with snapshots differs from a full load:\ngot  %s\nfull %s", step, ranking, got, want)
	}
	return snap, full, loads
}

func guidanceJSON(t *testing.T, st store.Store, db, home string, now time.Time, ranking string) (string, *cachedProject, int64) {
	t.Helper()
	lc := learning.DefaultConfig()
	lc.Ranking = ranking
	s := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), lc, Hooks{})
	if home != "" {
		s.UsePatternSnapshots(home, db, false, nil)
	}
	var out []byte
	for _, task := range []string{"split by feature and see", "fix the login page"} {
		g, err := s.PlanGuidance(context.Background(), PlanInput{Project: "x", Task: task, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(g)
		out = append(out, b...)
	}
	s.Close()
	return string(out), s.cache.projects["x"], s.cache.fullLoads.Load()
}

// TestPatternSnapshotAfterRestart: a new service starts from the snapshot
// a previous one saved, catches up with the changes made since by another
// writer (changed patterns and maturity, an added pattern), and answers
// byte for byte what a service loading every pattern answers, also after
// deletions since the snapshot; a damaged file and a file of another
// database each mean a full load with the same answer.
func TestPatternSnapshotAfterRestart(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, db := openStore(t, backend)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := t0.Add(2 * time.Hour)
			const n = 600
			snapWorld(t, st, n, t0)
			home := t.TempDir()
			check := func(step string, wantRestored bool) {
				t.Helper()
				for _, ranking := range []string{learning.RankingSeed, learning.RankingThompson} {
					snap, full, loads := likeFullLoad(t, st, db, home, now, ranking, step)
					if snap.version != full.version {
						t.Fatalf("%s: cached version %d, store %d", step, snap.version, full.version)
					}
					// The first ranking's service saves a snapshot when it
					// loads in full: the second one starts from it.
					wantR := wantRestored || ranking != learning.RankingSeed
					if restored := loads == 0; restored != wantR {
						t.Fatalf("%s (%s): restored from the snapshot %v, want %v (full loads %d, overlay %d)", step, ranking, restored, wantR, loads, len(snap.overlay))
					}
				}
			}
			check("first load", false) // saves the snapshot
			files, _ := filepath.Glob(filepath.Join(home, "patterns", "*.kzp"))
			if len(files) != 1 {
				t.Fatalf("snapshot files %v, want one", files)
			}
			// Another writer changes patterns after the snapshot.
			ctx := context.Background()
			err := st.Update(ctx, func(tx store.Tx) error {
				p, err := tx.GetPattern(ctx, "x", "p-00003")
				if err != nil {
					return err
				}
				p.Tags = []string{learning.Strategies[0].Tag()}
				p.SuccessCount += 5
				if err := tx.UpdatePattern(ctx, p); err != nil {
					return err
				}
				m := learning.Maturity{Project: "x", PatternID: "p-00010", Manual: learning.Proven, ManualReason: "checked",
					Helpful: learning.DecayedSum{Value: 40, Ref: t0}}
				if err := tx.PutMaturity(ctx, m); err != nil {
					return err
				}
				_, err = tx.InsertPattern(ctx, learning.Pattern{ID: "p-new", Project: "x", Kind: learning.KindPattern,
					Content: "Split by feature", Tags: []string{}, ExampleTasks: []string{}, CreatedAt: now, UpdatedAt: now})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			check("after another writer's changes", true)
			// Deletions since the snapshot: it is brought up to date from
			// the store's ids (afterReset), deleted patterns dropped; a
			// pattern deleted and created again with the same id takes its
			// new place in the store's order.
			if err := st.Update(ctx, func(tx store.Tx) error { return tx.DeletePattern(ctx, "x", "p-00020") }); err != nil {
				t.Fatal(err)
			}
			check("after a deletion", true) // saves a new snapshot
			check("from the snapshot saved after a deletion", true)
			err = st.Update(ctx, func(tx store.Tx) error {
				p, err := tx.GetPattern(ctx, "x", "p-00004")
				if err != nil {
					return err
				}
				if err := tx.DeletePattern(ctx, "x", "p-00004"); err != nil {
					return err
				}
				if err := tx.DeletePattern(ctx, "x", "p-00030"); err != nil {
					return err
				}
				p.CreatedAt = now
				p.Tags = []string{learning.Strategies[0].Tag()}
				_, err = tx.InsertPattern(ctx, p)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			check("after a pattern deleted and created again", true)
			// A damaged file: a full load, never a panic.
			files, _ = filepath.Glob(filepath.Join(home, "patterns", "*.kzp"))
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 0xff
			if err := os.WriteFile(files[0], data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := decodePatternSnapshot(data); !errors.Is(err, errBadPatternSnapshot) {
				t.Fatalf("damaged snapshot: %v, want errBadPatternSnapshot", err)
			}
			if err := st.Update(ctx, func(tx store.Tx) error {
				return tx.PutMaturity(ctx, learning.Maturity{Project: "x", PatternID: "p-00011", Manual: learning.Deprecated})
			}); err != nil {
				t.Fatal(err)
			}
			check("with a damaged snapshot", false)
			// A snapshot of another database (same project, same file name
			// inputs but the store id) is not used.
			other, otherDB := openStore(t, backend)
			snapWorld(t, other, 50, t0)
			guidanceJSON(t, other, otherDB, home, now, learning.RankingSeed) // saves its own file
			if err := st.Update(ctx, func(tx store.Tx) error {
				return tx.PutMaturity(ctx, learning.Maturity{Project: "x", PatternID: "p-00012", Manual: learning.Established})
			}); err != nil {
				t.Fatal(err)
			}
			check("next to another database's snapshot", true)
		})
	}
}

// TestLoadRowsSameAsRecords: the streamed ranking columns
// (store.PatternRankReader) give the rows of the full records.
func TestLoadRowsSameAsRecords(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			st, _ := openStore(t, backend)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			snapWorld(t, st, 300, t0)
			ctx := context.Background()
			err := st.View(ctx, func(tx store.Tx) error {
				if _, ok := tx.(store.PatternRankReader); !ok {
					t.Fatalf("%T does not stream pattern ranks", tx)
				}
				rows, err := loadRows(ctx, tx, "x")
				if err != nil {
					return err
				}
				recs, err := tx.PatternsWithMaturity(ctx, "x", store.PatternFilter{})
				if err != nil {
					return err
				}
				if len(rows) != len(recs) {
					t.Fatalf("%d rows, %d records", len(rows), len(recs))
				}
				for i := range recs {
					want := rowOf(&recs[i])
					if len(want.tags) == 0 {
						want.tags = nil
					}
					if !reflect.DeepEqual(rows[i], want) {
						t.Fatalf("row %d: %+v, want %+v", i, rows[i], want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func snapRows(n int) []patternRow {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := indexWorld(n, t0, true, rand.New(rand.NewPCG(5, 6)))
	rows := make([]patternRow, len(recs))
	for i, r := range recs {
		rows[i] = rowOf(r)
		if len(rows[i].tags) == 0 {
			rows[i].tags = nil
		}
	}
	rows[0].content = "Unicode — 按功能拆分"
	rows[1].tags = []string{"a", "", `q"uote`}
	return rows
}

// TestPatternSnapshotRoundTrip: a snapshot decodes to the rows and header
// it was made from; every truncation and every flipped byte is an error
// wrapping errBadPatternSnapshot.
func TestPatternSnapshotRoundTrip(t *testing.T) {
	rows := snapRows(200)
	h := patternSnapHeader{StoreID: "s", Locator: "sqlite:/x", Project: "p", Version: 42}
	byID := newPatternBase(rows).byID
	data, err := encodePatternSnapshot(h, rows, byID)
	if err != nil {
		t.Fatal(err)
	}
	gh, got, gotByID, err := decodePatternSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if gh != h || !reflect.DeepEqual(got, rows) || !reflect.DeepEqual(gotByID, byID) {
		t.Fatalf("round trip differs: header %+v", gh)
	}
	for cut := 0; cut < len(data); cut += max(1, len(data)/300) {
		if _, _, _, err := decodePatternSnapshot(data[:cut]); !errors.Is(err, errBadPatternSnapshot) {
			t.Fatalf("truncated at %d: %v", cut, err)
		}
	}
	for i := 0; i < len(data); i += max(1, len(data)/300) {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x41
		if _, _, _, err := decodePatternSnapshot(bad); !errors.Is(err, errBadPatternSnapshot) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
}

// FuzzDecodePatternSnapshot: any input decodes to rows or an error
// wrapping errBadPatternSnapshot, never a panic; the checksum is
// recomputed so that the fuzzer reaches the body's parser.
func FuzzDecodePatternSnapshot(f *testing.F) {
	rows := snapRows(5)
	data, err := encodePatternSnapshot(patternSnapHeader{Project: "p", Version: 1}, rows, newPatternBase(rows).byID)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:len(data)-4])
	f.Add([]byte(patternSnapMagic))
	f.Fuzz(func(t *testing.T, body []byte) {
		in := append([]byte(nil), body...)
		in = binary.LittleEndian.AppendUint32(in, crc32.ChecksumIEEE(in))
		_, rows, byID, err := decodePatternSnapshot(in)
		if err != nil && !errors.Is(err, errBadPatternSnapshot) {
			t.Fatalf("untyped error %v", err)
		}
		if err == nil {
			b := newPatternBaseSorted(rows, byID)
			for _, r := range rows {
				if p, ok := b.pos(r.id); !ok || rows[p].id != r.id {
					t.Fatalf("id %q not found in a decoded base", r.id)
				}
			}
		}
	})
}

// TestWarmGuidance: warming prepares the project with patterns (its
// cache from the snapshot file, its guidance index, choice set and context
// index) and skips a project without any; guidance afterwards is the
// guidance of a service that was not warmed.
func TestWarmGuidance(t *testing.T) {
	st, db := openStore(t, "sqlite")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(2 * time.Hour)
	snapWorld(t, st, 300, t0)
	ctx := context.Background()
	if err := st.Update(ctx, func(tx store.Tx) error {
		_, err := tx.InsertError(ctx, learning.ErrorEntry{ID: "e-1", Project: "other", TaskID: "t", Type: learning.ErrorType("build"),
			Message: "x", Timestamp: t0})
		if err != nil {
			return err
		}
		_, err = tx.InsertOutcome(ctx, learning.Outcome{ID: "o-1", Project: "x", TaskID: "t-1", Task: "split by feature",
			Success: true, Timestamp: t0, RecordedAt: t0, Patterns: []string{"p-00001"}, Tags: []string{}, Criteria: []string{},
			FilesTouched: []string{}, Score: learning.Score{Raw: 1, Type: learning.Helpful}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	guidanceJSON(t, st, db, home, now, learning.RankingThompson) // saves the snapshot
	s := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), learning.DefaultConfig(), Hooks{})
	s.UsePatternSnapshots(home, db, false, nil)
	n, err := s.WarmGuidance(ctx)
	if err != nil || n != 1 {
		t.Fatalf("WarmGuidance: %d projects, %v; want 1", n, err)
	}
	p := s.cache.projects["x"]
	if p == nil || p.base.g == nil || p.base.cs == nil || s.contexts.projects["x"] == nil {
		t.Fatalf("project x not prepared: %+v", p)
	}
	if _, ok := s.cache.projects["other"]; ok {
		t.Fatal("a project without patterns was loaded")
	}
	g, err := s.PlanGuidance(ctx, PlanInput{Project: "x", Task: "split by feature and see", Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(g)
	cold := New(app.NewEnv(st, func() time.Time { return now }, nil, "x"), learning.DefaultConfig(), Hooks{})
	w, err := cold.PlanGuidance(ctx, PlanInput{Project: "x", Task: "split by feature and see", Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(w)
	if string(got) != string(want) {
		t.Fatalf("guidance after warming differs:\nwarm %s\ncold %s", got, want)
	}
	s.Close()
}
