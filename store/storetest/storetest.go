// Package storetest is the conformance suite of kaizen's storage contract
// (package store): every backend runs [Run] from its own tests and must
// pass all of it, so the engine behaves the same on SQLite and
// PostgreSQL. [RunBenchmarks] measures the operations the engine's hot paths
// depend on.
//
// The suite also pins down what the contract's doc comments leave open:
//   - A string list stored nil or empty reads back as an empty, non-nil
//     slice ([]string{}); order, duplicates and empty elements are kept.
//   - Times round-trip as instants to the microsecond (callers truncate)
//     and compare with time.Time.Equal; the zero time and a nil *time.Time
//     round-trip as such. Strings round-trip byte for byte (valid UTF-8
//     without NUL, 16 KB and more); integers and floats exactly.
//   - "Newest first (time, then id)" breaks ties by id descending, "oldest
//     first" by id ascending; "sorted" and "ordered by name" are bytewise
//     (Go string order, COLLATE "C"). Orders the contract leaves open
//     (Each*, ListMaturity, FindPatternsByContent) are not checked.
//   - Count* ignore Limit and Offset: they count every record the filter
//     matches, the total a pager needs. Offset applies without Limit.
//   - Search filters match a literal, case-insensitive (Unicode) substring:
//     "%" and "_" are no wildcards, and PatternFilter.Search compares with
//     the content itself, not its content key (whitespace and trailing
//     periods count). ErrorFilter.Search looks at least in the message, the
//     context and the tool name.
//   - UpdatePattern that would give two kind="pattern" patterns of a project
//     the same content key fails with an error other than ErrNotFound.
//   - A Tx used after its Update or View returned fails; Update and View
//     with a cancelled context fail with context.Canceled and write nothing.
//   - Close twice: the second call returns store.ErrClosed ("further
//     calls"), so an opener's cleanup must tolerate it.
//
// Each subtest opens its own store through the opener, which must return a
// fresh, empty, migrated store and register its own cleanup, so subtests
// run in parallel. Property tests share one store and work in a fresh
// project per check.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Run runs the conformance suite against the backend that open creates.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	setup := func(t *testing.T) *bundle {
		t.Helper()
		s := open(t)
		if s == nil {
			t.Fatal("open returned a nil store")
		}
		return &bundle{t: t, ctx: t.Context(), s: s}
	}
	t.Run("Outcome", func(t *testing.T) { testOutcome(t, setup) })
	t.Run("OutcomeResults", func(t *testing.T) { testOutcomeResults(t, setup) })
	t.Run("Feedback", func(t *testing.T) { testFeedback(t, setup) })
	t.Run("Criterion", func(t *testing.T) { testCriterion(t, setup) })
	t.Run("Pattern", func(t *testing.T) { testPattern(t, setup) })
	t.Run("Maturity", func(t *testing.T) { testMaturity(t, setup) })
	t.Run("Error", func(t *testing.T) { testError(t, setup) })
	t.Run("Meta", func(t *testing.T) { testMeta(t, setup) })
	t.Run("Tx", func(t *testing.T) { testTx(t, setup) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, setup) })
	t.Run("Isolation", func(t *testing.T) { testIsolation(t, setup) })
	t.Run("Property", func(t *testing.T) { testProperty(t, setup) })
	t.Run("Aliasing", func(t *testing.T) { testAliasing(t, setup) })
	t.Run("Store", func(t *testing.T) { testStore(t, setup) })
	t.Run("Version", func(t *testing.T) { testVersion(t, setup) })
	t.Run("Task", func(t *testing.T) { testTask(t, setup) })
	t.Run("Explore", func(t *testing.T) { testExplore(t, setup) })
	t.Run("Experience", func(t *testing.T) { testExperience(t, setup) })
	t.Run("Jobs", func(t *testing.T) { testJobs(t, setup) })
	t.Run("Forget", func(t *testing.T) { testForget(t, setup) })
	t.Run("Ledger", func(t *testing.T) { testLedger(t, setup) })
	t.Run("Retention", func(t *testing.T) { testRetention(t, setup) })
	t.Run("Trace", func(t *testing.T) { testTrace(t, setup) })
	t.Run("Team", func(t *testing.T) { testTeam(t, setup) })
	t.Run("TeamRuns", func(t *testing.T) { testTeamRuns(t, setup) })
	t.Run("CriterionEvents", func(t *testing.T) { testCriterionEvents(t, setup) })
}

type setupFunc func(t *testing.T) *bundle

// bundle is what a test needs: its store and a context.
type bundle struct {
	t   *testing.T
	ctx context.Context
	s   store.Store
}

// update runs fn in an Update and fails the test on error.
func (b *bundle) update(fn func(tx store.Tx) error) {
	b.t.Helper()
	if err := b.s.Update(b.ctx, fn); err != nil {
		b.t.Fatalf("Update: %v", err)
	}
}

// view runs fn in a View and fails the test on error.
func (b *bundle) view(fn func(tx store.Tx) error) {
	b.t.Helper()
	if err := b.s.View(b.ctx, fn); err != nil {
		b.t.Fatalf("View: %v", err)
	}
}

// get runs fn in a View and returns its result and error (for the
// ErrNotFound checks).
func get[T any](b *bundle, fn func(tx store.Tx) (T, error)) (T, error) {
	b.t.Helper()
	var v T
	var inner error
	if err := b.s.View(b.ctx, func(tx store.Tx) error {
		v, inner = fn(tx)
		return nil
	}); err != nil {
		b.t.Fatalf("View: %v", err)
	}
	return v, inner
}

// read runs fn in a View and fails the test on error.
func read[T any](b *bundle, fn func(tx store.Tx) (T, error)) T {
	b.t.Helper()
	v, err := get(b, fn)
	if err != nil {
		b.t.Fatalf("read: %v", err)
	}
	return v
}

// write runs fn in an Update and fails the test on error.
func write[T any](b *bundle, fn func(tx store.Tx) (T, error)) T {
	b.t.Helper()
	var v T
	b.update(func(tx store.Tx) error {
		var err error
		v, err = fn(tx)
		return err
	})
	return v
}

// seed inserts records in one Update; every insert must report true.
// Criteria and maturity records are put.
func (b *bundle) seed(records ...any) {
	b.t.Helper()
	b.update(func(tx store.Tx) error {
		for _, r := range records {
			if err := insert(b.ctx, tx, r); err != nil {
				return err
			}
		}
		return nil
	})
}

var errNotInserted = errors.New("insert reported false")

func insert(ctx context.Context, tx store.Tx, r any) error {
	var ok bool
	var err error
	switch r := r.(type) {
	case learning.Outcome:
		ok, err = tx.InsertOutcome(ctx, r)
	case learning.Criterion:
		ok, err = true, tx.PutCriterion(ctx, r)
	case learning.Pattern:
		ok, err = tx.InsertPattern(ctx, r)
	case learning.Maturity:
		ok, err = true, tx.PutMaturity(ctx, r)
	case learning.MaturityFeedback:
		ok, err = tx.InsertMaturityFeedback(ctx, r)
	case learning.ErrorEntry:
		ok, err = tx.InsertError(ctx, r)
	default:
		panic("storetest: cannot seed a " + reflect.TypeOf(r).String())
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("seed %+v: %w", r, errNotInserted)
	}
	return nil
}

// cmpOpts compare times by instant (time.Time.Equal), whatever their
// location; everything else, nil versus empty slices included, exactly.
var cmpOpts = []cmp.Option{
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	// Record versions depend on how a backend groups commits; the
	// Versions tests assert them.
	cmpopts.IgnoreFields(store.PatternRecord{}, "Version"),
}

// requireEqual reports a difference between want and got.
func requireEqual(t testing.TB, what string, want, got any) {
	t.Helper()
	if d := diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// diff is the difference between want and got, "" when equal.
func diff(want, got any) string { return cmp.Diff(want, got, cmpOpts...) }

// requireList is requireEqual for listings, where an empty result may be
// nil or empty.
func requireList[T any](t testing.TB, what string, want, got []T) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	requireEqual(t, what, want, got)
}

// requireSet compares listings whose order the contract leaves open.
func requireSet[T any](t testing.TB, what string, want, got []T, key func(T) string) {
	t.Helper()
	requireList(t, what, sortedBy(want, key), sortedBy(got, key))
}

func sortedBy[T any](s []T, key func(T) string) []T {
	s = slices.Clone(s)
	slices.SortStableFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	return s
}

// keys maps records to their ids, for compact order assertions.
func keys[T any](s []T, key func(T) string) []string {
	out := []string{}
	for _, v := range s {
		out = append(out, key(v))
	}
	return out
}

func requireNotFound(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: got error %v, want store.ErrNotFound", what, err)
	}
}

// requireAllSet fails when a fixture leaves an exported field at its zero
// value, so a field added to a domain type must be added to the fixtures,
// and so to every backend, before the suite passes.
func requireAllSet(t testing.TB, v any) {
	t.Helper()
	timeType := reflect.TypeFor[time.Time]()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch {
		case v.Type() == timeType:
			if v.Interface().(time.Time).IsZero() {
				t.Errorf("fixture leaves %s zero: set it so the round trip covers it", path)
			}
		case v.Kind() == reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					walk(path+"."+f.Name, v.Field(i))
				}
			}
		case v.Kind() == reflect.Pointer:
			if v.IsNil() {
				t.Errorf("fixture leaves %s nil: set it so the round trip covers it", path)
				return
			}
			walk(path, v.Elem())
		case v.Kind() == reflect.Slice:
			if v.Len() == 0 {
				t.Errorf("fixture leaves %s empty: set it so the round trip covers it", path)
			}
		default:
			if v.IsZero() {
				t.Errorf("fixture leaves %s zero: set it so the round trip covers it", path)
			}
		}
	}
	walk(reflect.TypeOf(v).Name(), reflect.ValueOf(v))
}

// errStop is returned by iteration callbacks to stop them.
var errStop = errors.New("storetest: stop iterating")
