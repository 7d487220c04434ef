package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

func openAt(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func carryPattern(id, content string) learning.Pattern {
	at := time.UnixMicro(1_700_000_000_000_000).UTC()
	return learning.Pattern{ID: id, Project: "p", Content: content, Kind: learning.KindPattern,
		Tags: []string{}, ExampleTasks: []string{}, CreatedAt: at, UpdatedAt: at}
}

// observe reads a pattern with its lock and its content lookup, as
// recording an outcome does, and adds one success.
func observe(ctx context.Context, s store.Store, id, content string) (learning.Pattern, error) {
	var got learning.Pattern
	err := s.Update(ctx, func(tx store.Tx) error {
		found, err := tx.FindPatternsByContent(ctx, "p", content)
		if err != nil {
			return err
		}
		if len(found) != 1 || found[0].ID != id {
			return errors.New("content lookup did not find the pattern")
		}
		p, err := tx.LockPattern(ctx, "p", id)
		if err != nil {
			return err
		}
		if _, err := tx.GetMaturity(ctx, "p", id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		p.SuccessCount++
		got = p
		return tx.UpdatePattern(ctx, p)
	})
	return got, err
}

// The writer carries its cache of patterns and maturity records from one
// group to the next, and drops it when another connection (here a second
// store on the same file, as another process would) committed in between:
// the next group sees that connection's writes.
func TestCarriedCacheSeesOtherConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	a := openAt(t, path)
	if err := a.Update(ctx, func(tx store.Tx) error {
		_, err := tx.InsertPattern(ctx, carryPattern("pattern-1", "Split by feature"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ { // carried from group to group
		p, err := observe(ctx, a, "pattern-1", "Split by feature")
		if err != nil {
			t.Fatal(err)
		}
		if p.SuccessCount != int64(i) {
			t.Fatalf("observation %d: success count %d", i, p.SuccessCount)
		}
	}
	if a.Stats().Carried == 0 {
		t.Fatal("no group started from the carried cache")
	}

	// Another connection changes the pattern's counts and its maturity
	// record, deletes it and creates another with its content.
	b := openAt(t, path)
	if err := b.Update(ctx, func(tx store.Tx) error {
		p, err := tx.LockPattern(ctx, "p", "pattern-1")
		if err != nil {
			return err
		}
		p.SuccessCount = 100
		return tx.UpdatePattern(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	p, err := observe(ctx, a, "pattern-1", "Split by feature")
	if err != nil {
		t.Fatal(err)
	}
	if p.SuccessCount != 101 {
		t.Fatalf("after another connection set 100: success count %d, want 101 (stale carried cache)", p.SuccessCount)
	}
	if err := b.Update(ctx, func(tx store.Tx) error {
		if err := tx.DeletePattern(ctx, "p", "pattern-1"); err != nil {
			return err
		}
		_, err := tx.InsertPattern(ctx, carryPattern("pattern-2", "Split by feature"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := observe(ctx, a, "pattern-2", "Split by feature"); err != nil {
		t.Fatalf("after another connection replaced the pattern: %v", err)
	}
	if err := a.Update(ctx, func(tx store.Tx) error {
		_, err := tx.GetPattern(ctx, "p", "pattern-1")
		if !errors.Is(err, store.ErrNotFound) {
			return errors.New("the deleted pattern is still found")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A group that rolls back carries nothing: a pattern it created and then
// lost with the rollback is not found by the next group.
func TestCarriedCacheNotKeptAfterRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "k.db"))
	if err := s.Update(ctx, func(tx store.Tx) error {
		_, err := tx.InsertPattern(ctx, carryPattern("pattern-1", "Split by feature"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := observe(ctx, s, "pattern-1", "Split by feature"); err != nil {
		t.Fatal(err)
	}
	errBoom := errors.New("boom")
	err := s.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.InsertPattern(ctx, carryPattern("pattern-2", "Respect dependency chain")); err != nil {
			return err
		}
		if _, err := tx.FindPatternsByContent(ctx, "p", "Respect dependency chain"); err != nil {
			return err
		}
		p, err := tx.LockPattern(ctx, "p", "pattern-1")
		if err != nil {
			return err
		}
		p.SuccessCount = 50
		if err := tx.UpdatePattern(ctx, p); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want boom", err)
	}
	if err := s.Update(ctx, func(tx store.Tx) error {
		found, err := tx.FindPatternsByContent(ctx, "p", "Respect dependency chain")
		if err != nil {
			return err
		}
		if len(found) != 0 {
			return errors.New("a pattern of a rolled-back group is found")
		}
		if _, err := tx.GetPattern(ctx, "p", "pattern-2"); !errors.Is(err, store.ErrNotFound) {
			return errors.New("a pattern of a rolled-back group is still there")
		}
		p, err := tx.GetPattern(ctx, "p", "pattern-1")
		if err != nil {
			return err
		}
		if p.SuccessCount != 1 {
			return errors.New("a rolled-back update of a pattern is seen")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Groups that follow each other on one store, with background checkpoints
// running (one after every 12 groups), all start from the carried cache
// but the first: a checkpoint does not change the data version.
func TestCarriedCacheKeptAcrossGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "k.db"))
	const groups = 60
	for i := range groups {
		if err := s.Update(ctx, func(tx store.Tx) error {
			if i == 0 {
				_, err := tx.InsertPattern(ctx, carryPattern("pattern-1", "Split by feature"))
				return err
			}
			_, err := tx.FindPatternsByContent(ctx, "p", "Split by feature")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.Batches != groups || st.Carried != groups-1 {
		t.Fatalf("%d groups, %d started from the carried cache; want %d and %d (checkpoints: %d)",
			st.Batches, st.Carried, groups, groups-1, st.Checkpoints)
	}
}

// Criteria are not sharded on SQLite, so the writer carries their rows
// from group to group like patterns (issue 17): a group that adds an event
// to a criterion a previous group wrote reads nothing from SQL, and the
// criterion it sees is the one that group committed. Another connection's
// write still drops the carried rows.
func TestCarriedCacheKeepsCriteria(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	s := openAt(t, path)
	now := time.UnixMicro(1_700_000_000_000_000).UTC()
	addOne := func(s *sqlite.Store) (learning.Criterion, error) {
		var got learning.Criterion
		err := s.Update(ctx, func(tx store.Tx) error {
			c, err := tx.LockCriterion(ctx, "p", "tests_pass", now)
			if err != nil {
				return err
			}
			c.HelpfulCount++
			got = c
			return tx.PutCriterion(ctx, c)
		})
		return got, err
	}
	for i := 1; i <= 3; i++ {
		before := s.Stats().Statements
		c, err := addOne(s)
		if err != nil {
			t.Fatal(err)
		}
		if c.HelpfulCount != int64(i) {
			t.Fatalf("group %d: helpful count %d", i, c.HelpfulCount)
		}
		// the first group reads the criterion (and creates it); the
		// later ones only write it
		if n := s.Stats().Statements - before; i > 1 && n != 1 {
			t.Fatalf("group %d made %d statements, want 1 (the criterion's write; its read carried)", i, n)
		}
	}
	other := openAt(t, path)
	if err := other.Update(ctx, func(tx store.Tx) error {
		c, err := tx.LockCriterion(ctx, "p", "tests_pass", now)
		if err != nil {
			return err
		}
		c.HelpfulCount = 100
		return tx.PutCriterion(ctx, c)
	}); err != nil {
		t.Fatal(err)
	}
	c, err := addOne(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.HelpfulCount != 101 {
		t.Fatalf("after another connection set 100: helpful count %d, want 101 (stale carried criterion)", c.HelpfulCount)
	}
}

// A group that changes several patterns writes them in one statement that
// also stamps them with the pattern version it advanced (issue 17), where
// it wrote each with an UPDATE of its own and then stamped them all again:
// two statements per group here (the version, the patterns) instead of
// five. Every changed pattern carries the new version, an unchanged one
// keeps its own, and one changed by another connection in between is
// seen.
func TestGroupStampsPatternsInOneWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	s := openAt(t, path)
	ids := []string{"pattern-1", "pattern-2", "pattern-3", "pattern-4"}
	if err := s.Update(ctx, func(tx store.Tx) error {
		for i, id := range ids {
			if _, err := tx.InsertPattern(ctx, carryPattern(id, "content "+string(rune('a'+i)))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	changeThree := func() error {
		return s.Update(ctx, func(tx store.Tx) error {
			for _, id := range ids[:3] {
				p, err := tx.LockPattern(ctx, "p", id)
				if err != nil {
					return err
				}
				p.SuccessCount++
				if err := tx.UpdatePattern(ctx, p); err != nil {
					return err
				}
			}
			return nil
		})
	}
	records := func() map[string]store.PatternRecord {
		var got []store.PatternRecord
		if err := s.View(ctx, func(tx store.Tx) error {
			var err error
			got, err = tx.PatternsWithMaturity(ctx, "p", store.PatternFilter{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		out := map[string]store.PatternRecord{}
		for _, r := range got {
			out[r.Pattern.ID] = r
		}
		return out
	}
	if err := changeThree(); err != nil { // reads the patterns
		t.Fatal(err)
	}
	before := records()
	n := s.Stats().Statements
	if err := changeThree(); err != nil { // carried: only the writes
		t.Fatal(err)
	}
	if got := s.Stats().Statements - n; got != 2 {
		t.Fatalf("a group changing three carried patterns made %d statements, want 2", got)
	}
	after := records()
	for _, id := range ids[:3] {
		if after[id].Version <= before[id].Version || after[id].Pattern.SuccessCount != before[id].Pattern.SuccessCount+1 {
			t.Fatalf("%s: version %d → %d, successes %d → %d", id, before[id].Version, after[id].Version,
				before[id].Pattern.SuccessCount, after[id].Pattern.SuccessCount)
		}
		if after[id].Version != after[ids[0]].Version {
			t.Fatalf("%s stamped %d, %s %d: one version per group", id, after[id].Version, ids[0], after[ids[0]].Version)
		}
	}
	if after[ids[3]].Version != before[ids[3]].Version {
		t.Fatalf("the unchanged pattern's version moved: %d → %d", before[ids[3]].Version, after[ids[3]].Version)
	}
	var pv store.PatternVersion
	if err := s.View(ctx, func(tx store.Tx) error {
		var err error
		pv, err = tx.PatternVersion(ctx, "p")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if pv.Version != after[ids[0]].Version {
		t.Fatalf("pattern version %d, changed patterns stamped %d", pv.Version, after[ids[0]].Version)
	}
}
