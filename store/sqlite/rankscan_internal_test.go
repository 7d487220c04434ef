package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// rankOf is a copy of a streamed pattern rank (its byte fields are only
// valid during the callback); nil and empty byte fields compare alike.
type rankOf struct {
	ID, Content, Tags, Kind, Manual string
	Inverted                        bool
	SuccessCount, FailureCount      int64
	Helpful, Harmful                learning.DecayedSum
	Created                         int64
}

// ranksByID reads the project's pattern ranks in a read transaction,
// through the rank scanner unless it is held (then on the transaction's
// own cursors).
func ranksByID(t *testing.T, s *Store, project string, hold bool) []rankOf {
	t.Helper()
	if hold {
		s.ranks.mu.Lock()
		defer s.ranks.mu.Unlock()
	}
	out, err := readRanks(s, project)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readRanks(s *Store, project string) ([]rankOf, error) {
	ctx := context.Background()
	var out []rankOf
	err := s.View(ctx, func(tx store.Tx) error {
		ok, err := tx.(store.PatternRankIDReader).EachPatternRankByID(ctx, project, func(r *store.PatternRank) error {
			out = append(out, rankOf{ID: string(r.ID), Content: string(r.Content), Tags: string(r.Tags), Kind: string(r.Kind),
				Manual: string(r.Manual), Inverted: r.Inverted, SuccessCount: r.SuccessCount, FailureCount: r.FailureCount,
				Helpful: r.Helpful, Harmful: r.Harmful, Created: r.Created})
			return nil
		})
		if err == nil && !ok {
			err = fmt.Errorf("EachPatternRankByID declined on SQLite")
		}
		return err
	})
	return out, err
}

// rankWorld stores patterns of every shape in project "x" (and a few in
// project "y"): creation times unset for some, tags, text outside ASCII,
// anti-patterns, maturity rows with and without manual states and
// reference times, maturity rows of no pattern.
func rankWorld(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := s.Update(ctx, func(tx store.Tx) error {
		for _, project := range []string{"x", "y"} {
			for i := range 700 {
				id := fmt.Sprintf("p-%05d", (i*7919)%10_000)
				p := learning.Pattern{ID: id, Project: project, Kind: learning.KindPattern,
					Content: fmt.Sprintf("pattern %d — découper par fonctionnalité 按功能拆分", i),
					Tags:    []string{}, ExampleTasks: []string{}, SuccessCount: int64(i % 5), FailureCount: int64(i % 3),
					UpdatedAt: t0}
				if i%4 != 0 {
					p.CreatedAt = t0.Add(time.Duration(i%50) * time.Second)
				}
				if i%3 == 0 {
					p.Tags = []string{"go", fmt.Sprintf("t%d", i%7)}
				}
				if i%11 == 0 {
					p.Kind, p.AntiPatternID = learning.KindAntiPattern, "p-00000"
				}
				if _, err := tx.InsertPattern(ctx, p); err != nil {
					return err
				}
				if i%5 == 0 {
					continue // no maturity row
				}
				m := learning.Maturity{Project: project, PatternID: id,
					Helpful: learning.DecayedSum{Value: float64(i) / 3, Ref: t0.Add(time.Duration(i) * time.Microsecond)},
					Harmful: learning.DecayedSum{Value: float64(i%7) / 7}}
				if i%3 != 0 {
					m.Harmful.Ref = t0.Add(time.Hour)
				}
				if i%6 == 0 {
					m.Manual, m.ManualReason = learning.Proven, "by hand"
				}
				if err := tx.PutMaturity(ctx, m); err != nil {
					return err
				}
			}
			for _, id := range []string{"0-orphan", "p-00001x", "zz-orphan"} {
				if err := tx.PutMaturity(ctx, learning.Maturity{Project: project, PatternID: id, Manual: learning.Proven}); err != nil {
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

// TestRankScanSameAsCursors: a full load of pattern ranks through the
// rank scanner (its own connection, SQLite's C interface) yields exactly
// the rows of the transaction's own two cursors, and is used when nothing
// was written in between.
func TestRankScanSameAsCursors(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "kaizen.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rankWorld(t, s)
	want := ranksByID(t, s, "x", true)
	if n := s.ranks.lent.Load(); n != 0 {
		t.Fatalf("the rank scanner was asked %d times while held", n)
	}
	if len(want) != 700 {
		t.Fatalf("%d ranks, want 700", len(want))
	}
	for range 2 { // the connection is opened once and reused
		got := ranksByID(t, s, "x", false)
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("rank %d: %+v, want %+v", i, got[i], want[i])
				}
			}
			t.Fatalf("%d ranks, want %d", len(got), len(want))
		}
	}
	if lent, used := s.ranks.lent.Load(), s.ranks.used.Load(); lent != 2 || used != 2 {
		t.Fatalf("rank scanner asked %d times, used %d; want 2, 2", lent, used)
	}
	if got := ranksByID(t, s, "none", false); len(got) != 0 {
		t.Fatalf("%d ranks of a project without patterns", len(got))
	}
}

// TestRankScanWriteBetween: a write committed after the caller's
// transaction started and before the rank scanner's is detected (the
// scanner sees another pattern version) and the caller's own cursors read
// the rows of its snapshot instead; the next load, with nothing in
// between, sees the write through the scanner.
func TestRankScanWriteBetween(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "kaizen.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rankWorld(t, s)
	before := ranksByID(t, s, "x", true)
	s.ranks.before = func() {
		s.ranks.before = nil
		err := s.Update(ctx, func(tx store.Tx) error {
			m, err := tx.GetMaturity(ctx, "x", before[1].ID)
			if err != nil {
				return err
			}
			m.Helpful.Value += 100
			return tx.PutMaturity(ctx, m)
		})
		if err != nil {
			t.Error(err)
		}
	}
	got := ranksByID(t, s, "x", false)
	if lent, used := s.ranks.lent.Load(), s.ranks.used.Load(); lent != 1 || used != 0 {
		t.Fatalf("rank scanner asked %d times, used %d; want 1, 0 (the write in between seen)", lent, used)
	}
	if !reflect.DeepEqual(got, before) {
		t.Fatalf("the load saw a write committed after its transaction started")
	}
	after := ranksByID(t, s, "x", false)
	if used := s.ranks.used.Load(); used != 1 {
		t.Fatalf("rank scanner used %d times, want 1", used)
	}
	if after[1].Helpful.Value != before[1].Helpful.Value+100 {
		t.Fatalf("helpful %v after the write, want %v", after[1].Helpful.Value, before[1].Helpful.Value+100)
	}
	after[1].Helpful = before[1].Helpful
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("rows other than the written one changed")
	}
}

// TestRankScanConcurrentLoads: loads at the same time each get the same
// rows, whether through the rank scanner or, when another load holds it,
// on their own cursors (none waits for it).
func TestRankScanConcurrentLoads(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "kaizen.db"), Options{Readers: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rankWorld(t, s)
	want := ranksByID(t, s, "x", true)
	const loads = 4
	got := make([][]rankOf, loads)
	errs := make(chan error, loads)
	for i := range loads {
		go func() {
			var err error
			got[i], err = readRanks(s, "x")
			errs <- err
		}()
	}
	for range loads {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("load %d: other rows than the cursors'", i)
		}
	}
	if lent := s.ranks.lent.Load(); lent < 1 || lent > loads {
		t.Fatalf("rank scanner asked %d times by %d loads", lent, loads)
	}
}
