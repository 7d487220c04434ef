package storetest_test

import (
	"cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
	"github.com/kaizenhq/kaizen/store/storetest"
)

// The suite is only as good as the faults it catches. Each mutant below is
// the SQLite backend with one fault a real backend could have; the suite,
// run in a child process on the mutant, must fail the test named.

const mutantEnv = "KAIZEN_STORETEST_MUTANT"

type mutant struct {
	name    string
	catches string // -test.run pattern below TestMutant
	wrap    func(*sqlite.Store) store.Store
}

func mutants() []mutant {
	return []mutant{
		{"none", "", func(s *sqlite.Store) store.Store { return s }},
		{"drops a field", "^Outcome$/^RoundTrip$", withTx(func(tx store.Tx) store.Tx { return dropsField{tx} })},
		{"nil for empty lists", "^Pattern$/^RoundTrip$", withTx(func(tx store.Tx) store.Tx { return nilLists{tx} })},
		{"ignores the project", "^Isolation$/^EmptyNeighbour$", withTx(func(tx store.Tx) store.Tx { return unscoped{tx} })},
		{"ties in the wrong order", "^Error$/^ListOrder$", withTx(func(tx store.Tx) store.Tx { return misordered{tx} })},
		{"case-sensitive search", "^Pattern$/^Filter$", withTx(func(tx store.Tx) store.Tx { return caseSensitive{tx} })},
		{"count pages", "^Outcome$/^Filter$", withTx(func(tx store.Tx) store.Tx { return pagedCount{tx} })},
		{"insert not idempotent", "^Error$/^InsertIdempotent$", withTx(func(tx store.Tx) store.Tx { return alwaysInserted{tx} })},
		{"lock creates nothing", "^Criterion$/^LockCreates$", withTx(func(tx store.Tx) store.Tx { return lockNoCreate{tx} })},
		{"loses updates", "^Concurrency$/^LockPattern$", func(s *sqlite.Store) store.Store {
			cache := &lockCache{m: map[string]learning.Pattern{}}
			return faulty{Store: s, tx: func(tx store.Tx) store.Tx { return staleLock{tx, cache} }}
		}},
		{"commits failed updates", "^Tx$/^RollbackOnError$", func(s *sqlite.Store) store.Store { return noRollback{s} }},
		{"closes twice", "^Store$/^CloseTwice$", func(s *sqlite.Store) store.Store { return closesTwice{s} }},
	}
}

func TestMutant(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("run in a child process by TestSuiteCatchesMutants")
	}
	i := slices.IndexFunc(mutants(), func(m mutant) bool { return m.name == name })
	if i < 0 {
		t.Fatalf("no mutant %q", name)
	}
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.OpenEphemeral(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return mutants()[i].wrap(s)
	})
}

func TestSuiteCatchesMutants(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("in a child process")
	}
	for _, m := range mutants()[1:] {
		t.Run(strings.ReplaceAll(m.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			run := func(mutant string) (string, error) {
				cmd := exec.CommandContext(t.Context(), os.Args[0],
					"-test.run=^TestMutant$/"+m.catches, "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), mutantEnv+"="+mutant)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			top, _, _ := strings.Cut(strings.Trim(m.catches, "^$"), "$")
			if out, err := run("none"); err != nil || !strings.Contains(out, "--- PASS: TestMutant/"+top) {
				t.Fatalf("without the mutant, the suite's %s does not pass (%v):\n%s", m.catches, err, out)
			}
			out, err := run(m.name)
			if err == nil {
				t.Errorf("the suite's %s passes on a backend that %s: it misses the fault", m.catches, m.name)
			} else if !strings.Contains(out, "--- FAIL: TestMutant/"+top) {
				t.Errorf("the mutant run failed without a failing suite test (%v):\n%s", err, out)
			}
		})
	}
}

// faulty hands fn a faulty Tx.
type faulty struct {
	store.Store
	tx func(store.Tx) store.Tx
}

func withTx(wrap func(store.Tx) store.Tx) func(*sqlite.Store) store.Store {
	return func(s *sqlite.Store) store.Store { return faulty{Store: s, tx: wrap} }
}

func (f faulty) Update(ctx context.Context, fn func(store.Tx) error) error {
	return f.Store.Update(ctx, func(tx store.Tx) error { return fn(f.tx(tx)) })
}

func (f faulty) View(ctx context.Context, fn func(store.Tx) error) error {
	return f.Store.View(ctx, func(tx store.Tx) error { return fn(f.tx(tx)) })
}

// dropsField does not store an outcome's failure details.
type dropsField struct{ store.Tx }

func (t dropsField) InsertOutcome(ctx context.Context, o learning.Outcome) (bool, error) {
	o.FailureDetails = ""
	return t.Tx.InsertOutcome(ctx, o)
}

// nilLists reads empty tag lists back as nil.
type nilLists struct{ store.Tx }

func (t nilLists) GetPattern(ctx context.Context, project, id string) (learning.Pattern, error) {
	p, err := t.Tx.GetPattern(ctx, project, id)
	if len(p.Tags) == 0 {
		p.Tags = nil
	}
	return p, err
}

// unscoped lists the patterns of every project.
type unscoped struct{ store.Tx }

func (t unscoped) ListPatterns(ctx context.Context, project string, f store.PatternFilter) ([]learning.Pattern, error) {
	projects, err := t.Projects(ctx)
	if err != nil {
		return nil, err
	}
	var all []learning.Pattern
	for _, p := range append(projects, project) {
		l, err := t.Tx.ListPatterns(ctx, p, store.PatternFilter{Kind: f.Kind, Tag: f.Tag, Search: f.Search})
		if err != nil {
			return nil, err
		}
		for _, x := range l {
			if !slices.ContainsFunc(all, func(y learning.Pattern) bool { return y.Project == x.Project && y.ID == x.ID }) {
				all = append(all, x)
			}
		}
	}
	return page(all, f.Limit, f.Offset), nil
}

// misordered breaks ListErrors ties by id ascending.
type misordered struct{ store.Tx }

func (t misordered) ListErrors(ctx context.Context, project string, f store.ErrorFilter) ([]learning.ErrorEntry, error) {
	l, err := t.Tx.ListErrors(ctx, project, f)
	slices.SortStableFunc(l, func(a, b learning.ErrorEntry) int {
		return cmp.Or(b.Timestamp.Compare(a.Timestamp), strings.Compare(a.ID, b.ID))
	})
	return l, err
}

// caseSensitive searches pattern content case-sensitively.
type caseSensitive struct{ store.Tx }

func (t caseSensitive) ListPatterns(ctx context.Context, project string, f store.PatternFilter) ([]learning.Pattern, error) {
	l, err := t.Tx.ListPatterns(ctx, project, store.PatternFilter{Kind: f.Kind, Tag: f.Tag})
	l = slices.DeleteFunc(l, func(p learning.Pattern) bool { return !strings.Contains(p.Content, f.Search) })
	return page(l, f.Limit, f.Offset), err
}

// pagedCount applies Limit to counts.
type pagedCount struct{ store.Tx }

func (t pagedCount) CountOutcomes(ctx context.Context, project string, f store.OutcomeFilter) (int64, error) {
	n, err := t.Tx.CountOutcomes(ctx, project, f)
	if f.Limit > 0 {
		n = min(n, int64(f.Limit))
	}
	return n, err
}

// alwaysInserted reports every insert of an error as new.
type alwaysInserted struct{ store.Tx }

func (t alwaysInserted) InsertError(ctx context.Context, e learning.ErrorEntry) (bool, error) {
	_, err := t.Tx.InsertError(ctx, e)
	return true, err
}

// lockNoCreate returns a fresh criterion without storing it.
type lockNoCreate struct{ store.Tx }

func (t lockNoCreate) LockCriterion(ctx context.Context, project, name string, now time.Time) (learning.Criterion, error) {
	c, err := t.GetCriterion(ctx, project, name)
	if errors.Is(err, store.ErrNotFound) {
		return learning.Criterion{Project: project, Name: name, CreatedAt: now, UpdatedAt: now}, nil
	}
	return c, err
}

// staleLock serves LockPattern from a cache filled by the first lock, as
// a backend reading outside the row lock would.
type staleLock struct {
	store.Tx
	cache *lockCache
}

type lockCache struct {
	mu sync.Mutex
	m  map[string]learning.Pattern
}

func (t staleLock) LockPattern(ctx context.Context, project, id string) (learning.Pattern, error) {
	t.cache.mu.Lock()
	defer t.cache.mu.Unlock()
	if p, ok := t.cache.m[project+"\x00"+id]; ok {
		return p, nil
	}
	p, err := t.Tx.LockPattern(ctx, project, id)
	if err == nil {
		t.cache.m[project+"\x00"+id] = p
	}
	return p, err
}

// noRollback commits whatever fn wrote, even when it fails.
type noRollback struct{ *sqlite.Store }

func (s noRollback) Update(ctx context.Context, fn func(store.Tx) error) error {
	var fnErr error
	if err := s.Store.Update(ctx, func(tx store.Tx) error { fnErr = fn(tx); return nil }); err != nil {
		return err
	}
	return fnErr
}

// closesTwice accepts a second Close.
type closesTwice struct{ *sqlite.Store }

func (s closesTwice) Close() error {
	_ = s.Store.Close()
	return nil
}

func page[T any](s []T, limit, offset int) []T {
	s = s[min(offset, len(s)):]
	if limit > 0 && len(s) > limit {
		s = s[:limit]
	}
	return s
}
