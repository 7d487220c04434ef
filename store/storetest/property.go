package storetest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The properties compare listings with a model on random records and
// filters: small vocabularies make ties, duplicates and near misses common.
// Each check works in a project of its own, so one store serves them all.

var propProjects atomic.Int64

// The suite runs in backends' packages: rapid's fail files would land in
// their testdata directories (and from there in commits). A failure prints
// the -rapid.seed that reproduces it instead. -rapid.nofailfile=false or
// RAPID_NOFAILFILE bring the files back.
func init() {
	if _, set := os.LookupEnv("RAPID_NOFAILFILE"); !set {
		if f := flag.Lookup("rapid.nofailfile"); f != nil {
			_ = f.Value.Set("true")
		}
	}
}

func propProject() string { return fmt.Sprintf("prop-%d", propProjects.Add(1)) }

// drawTime is a time among a few (ties are likely), or zero when zeroOK.
func drawTime(rt *rapid.T, label string, zeroOK bool) time.Time {
	lo := 0
	if zeroOK {
		lo = -1
	}
	n := rapid.IntRange(lo, 5).Draw(rt, label)
	if n < 0 {
		return time.Time{}
	}
	return at(n)
}

// pageOf applies Offset and Limit the way the contract's filters do.
func pageOf[T any](s []T, limit, offset int) []T {
	s = s[min(max(offset, 0), len(s)):]
	if limit > 0 && len(s) > limit {
		s = s[:limit]
	}
	return s
}

func foldContains(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// newestFirst and oldestFirst are the contract's orders.
func newestFirst(t1 time.Time, id1 string, t2 time.Time, id2 string) int {
	if c := t2.Compare(t1); c != 0 {
		return c
	}
	return strings.Compare(id2, id1)
}

func oldestFirst(t1 time.Time, id1 string, t2 time.Time, id2 string) int {
	return newestFirst(t2, id2, t1, id1)
}

func testProperty(t *testing.T, setup setupFunc) {
	t.Run("OutcomeFilter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		rapid.Check(t, func(rt *rapid.T) {
			project := propProject()
			n := rapid.IntRange(0, 12).Draw(rt, "outcomes")
			var all []learning.Outcome
			for i := range n {
				all = append(all, learning.Outcome{ID: fmt.Sprintf("o-%02d", i), Project: project,
					TaskID:     rapid.SampledFrom([]string{"t1", "t2", "t3"}).Draw(rt, "task"),
					RecordedAt: drawTime(rt, "recorded", false)})
			}
			b.seed(toAny(rapid.Permutation(all).Draw(rt, "insertion order"))...)
			for range 4 {
				f := store.OutcomeFilter{
					TaskID: rapid.SampledFrom([]string{"", "t1", "t2", "t4"}).Draw(rt, "task filter"),
					Since:  drawTime(rt, "since", true),
					Until:  drawTime(rt, "until", true),
					Limit:  rapid.IntRange(0, 5).Draw(rt, "limit"),
					Offset: rapid.IntRange(0, 6).Draw(rt, "offset"),
				}
				var match []learning.Outcome
				for _, o := range all {
					if (f.TaskID == "" || o.TaskID == f.TaskID) && (f.Since.IsZero() || !o.RecordedAt.Before(f.Since)) &&
						(f.Until.IsZero() || o.RecordedAt.Before(f.Until)) {
						match = append(match, o)
					}
				}
				slices.SortFunc(match, func(a, b learning.Outcome) int { return newestFirst(a.RecordedAt, a.ID, b.RecordedAt, b.ID) })
				want := keys(pageOf(match, f.Limit, f.Offset), outcomeID)
				got := keys(read(b, func(tx store.Tx) ([]learning.Outcome, error) { return tx.ListOutcomes(b.ctx, project, f) }), outcomeID)
				if !slices.Equal(want, got) {
					rt.Fatalf("ListOutcomes(%+v) = %v, want %v", f, got, want)
				}
				if n := read(b, func(tx store.Tx) (int64, error) { return tx.CountOutcomes(b.ctx, project, f) }); n != int64(len(match)) {
					rt.Fatalf("CountOutcomes(%+v) = %d, want %d", f, n, len(match))
				}
			}
		})
	})

	t.Run("ErrorFilter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		messages := []string{"Disk full", "disk FULL again", "timeout reached", "50% done", "snake_case name", "Ошибка диска"}
		types := []learning.ErrorType{learning.ErrValidation, learning.ErrTimeout, learning.ErrConflict}
		rapid.Check(t, func(rt *rapid.T) {
			project := propProject()
			n := rapid.IntRange(0, 12).Draw(rt, "errors")
			var all []learning.ErrorEntry
			for i := range n {
				e := learning.ErrorEntry{ID: fmt.Sprintf("e-%02d", i), Project: project,
					TaskID:    rapid.SampledFrom([]string{"t1", "t2"}).Draw(rt, "task"),
					Type:      rapid.SampledFrom(types).Draw(rt, "type"),
					Message:   rapid.SampledFrom(messages).Draw(rt, "message"),
					Timestamp: drawTime(rt, "timestamp", false),
					Resolved:  rapid.Bool().Draw(rt, "resolved")}
				if e.Resolved {
					e.ResolvedAt = ptr(at(10))
				}
				all = append(all, e)
			}
			b.seed(toAny(rapid.Permutation(all).Draw(rt, "insertion order"))...)
			for range 4 {
				f := store.ErrorFilter{
					TaskID:         rapid.SampledFrom([]string{"", "t1", "t2"}).Draw(rt, "task filter"),
					UnresolvedOnly: rapid.Bool().Draw(rt, "unresolved only"),
					Type:           rapid.SampledFrom(append([]learning.ErrorType{""}, types...)).Draw(rt, "type filter"),
					Search:         rapid.SampledFrom([]string{"", "disk", "FULL", "%", "_", "time", "ДИСК", "zzz"}).Draw(rt, "search"),
					Limit:          rapid.IntRange(0, 5).Draw(rt, "limit"),
					Offset:         rapid.IntRange(0, 6).Draw(rt, "offset"),
				}
				var match []learning.ErrorEntry
				for _, e := range all {
					if (f.TaskID == "" || e.TaskID == f.TaskID) && (!f.UnresolvedOnly || !e.Resolved) &&
						(f.Type == "" || e.Type == f.Type) && (f.Search == "" || foldContains(e.Message, f.Search)) {
						match = append(match, e)
					}
				}
				slices.SortFunc(match, func(a, b learning.ErrorEntry) int { return newestFirst(a.Timestamp, a.ID, b.Timestamp, b.ID) })
				want := keys(pageOf(match, f.Limit, f.Offset), errorID)
				got := keys(read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) { return tx.ListErrors(b.ctx, project, f) }), errorID)
				if !slices.Equal(want, got) {
					rt.Fatalf("ListErrors(%+v) = %v, want %v", f, got, want)
				}
				if n := read(b, func(tx store.Tx) (int64, error) { return tx.CountErrors(b.ctx, project, f) }); n != int64(len(match)) {
					rt.Fatalf("CountErrors(%+v) = %d, want %d", f, n, len(match))
				}
				for _, task := range []string{"t1", "t2"} {
					var want []string
					for _, e := range sortedFunc(all, func(a, b learning.ErrorEntry) int {
						return oldestFirst(a.Timestamp, a.ID, b.Timestamp, b.ID)
					}) {
						if e.TaskID == task && (!f.UnresolvedOnly || !e.Resolved) {
							want = append(want, e.ID)
						}
					}
					got := keys(read(b, func(tx store.Tx) ([]learning.ErrorEntry, error) {
						return tx.ErrorsByTask(b.ctx, project, task, !f.UnresolvedOnly)
					}), errorID)
					if !slices.Equal(orNil(want), orNil(got)) {
						rt.Fatalf("ErrorsByTask(%s, includeResolved=%v) = %v, want %v", task, !f.UnresolvedOnly, got, want)
					}
				}
			}
		})
	})

	t.Run("PatternChanges", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		contents := []string{"Split by file", "split  by file", "Split by file.", "split by module", "SPLIT BY MODULE",
			"review twice", "100% coverage", "snake_case"}
		kinds := []learning.PatternKind{learning.KindPattern, learning.KindAntiPattern}
		ids := []string{"k-1", "k-2", "k-3", "k-4", "k-5", "k-6"}
		drawPattern := func(rt *rapid.T, project string) learning.Pattern {
			return learning.Pattern{
				ID:        rapid.SampledFrom(ids).Draw(rt, "id"),
				Project:   project,
				Kind:      rapid.SampledFrom(kinds).Draw(rt, "kind"),
				Content:   rapid.SampledFrom(contents).Draw(rt, "content"),
				Tags:      rapid.SliceOfDistinct(rapid.SampledFrom([]string{"go", "Go", "db", "a,b"}), rapid.ID).Draw(rt, "tags"),
				CreatedAt: drawTime(rt, "created", false),
			}
		}
		rapid.Check(t, func(rt *rapid.T) {
			project := propProject()
			model := map[string]learning.Pattern{}
			// duplicate reports whether p would share its content key with
			// another kind="pattern" pattern.
			duplicate := func(p learning.Pattern) bool {
				if p.Kind != learning.KindPattern {
					return false
				}
				for id, q := range model {
					if id != p.ID && q.Kind == learning.KindPattern && learning.ContentKey(q.Content) == learning.ContentKey(p.Content) {
						return true
					}
				}
				return false
			}
			steps := rapid.IntRange(1, 8).Draw(rt, "steps")
			for range steps {
				p := drawPattern(rt, project)
				_, exists := model[p.ID]
				switch op := rapid.SampledFrom([]string{"insert", "insert", "update", "delete", "rolled back"}).Draw(rt, "op"); op {
				case "insert":
					want := !exists && !duplicate(p)
					if got := write(b, func(tx store.Tx) (bool, error) { return tx.InsertPattern(b.ctx, p) }); got != want {
						rt.Fatalf("InsertPattern(%s %s %q) = %v, want %v", p.ID, p.Kind, p.Content, got, want)
					}
					if want {
						model[p.ID] = wantPattern(p)
					}
				case "update":
					err := b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, p) })
					switch {
					case !exists:
						if !errors.Is(err, store.ErrNotFound) {
							rt.Fatalf("UpdatePattern of missing %s = %v, want ErrNotFound", p.ID, err)
						}
					case duplicate(p):
						if err == nil || errors.Is(err, store.ErrNotFound) {
							rt.Fatalf("UpdatePattern(%s %s %q) to a duplicate content key = %v, want an error", p.ID, p.Kind, p.Content, err)
						}
					case err != nil:
						rt.Fatalf("UpdatePattern(%s %s %q) = %v", p.ID, p.Kind, p.Content, err)
					default:
						model[p.ID] = wantPattern(p)
					}
				case "delete":
					err := b.s.Update(b.ctx, func(tx store.Tx) error { return tx.DeletePattern(b.ctx, project, p.ID) })
					if exists != (err == nil) || (!exists && !errors.Is(err, store.ErrNotFound)) {
						rt.Fatalf("DeletePattern(%s) = %v, exists %v", p.ID, err, exists)
					}
					delete(model, p.ID)
				case "rolled back":
					q := drawPattern(rt, project)
					err := b.s.Update(b.ctx, func(tx store.Tx) error {
						_ = tx.DeletePattern(b.ctx, project, p.ID)
						if _, err := tx.InsertPattern(b.ctx, q); err != nil {
							return err
						}
						return errBoom
					})
					if !errors.Is(err, errBoom) {
						rt.Fatalf("a failing Update returned %v", err)
					}
				}
			}
			all := slices.Collect(func(yield func(learning.Pattern) bool) {
				for _, p := range model {
					if !yield(p) {
						return
					}
				}
			})
			slices.SortFunc(all, func(a, b learning.Pattern) int { return oldestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
			for range 4 {
				f := store.PatternFilter{
					Kind:   rapid.SampledFrom(append([]learning.PatternKind{""}, kinds...)).Draw(rt, "kind filter"),
					Tag:    rapid.SampledFrom([]string{"", "go", "Go", "a", "a,b"}).Draw(rt, "tag filter"),
					Search: rapid.SampledFrom([]string{"", "split", "by file", "by  file", "file.", "MODULE", "%", "_", "e"}).Draw(rt, "search"),
					Limit:  rapid.IntRange(0, 4).Draw(rt, "limit"),
					Offset: rapid.IntRange(0, 5).Draw(rt, "offset"),
				}
				var match []learning.Pattern
				for _, p := range all {
					if (f.Kind == "" || p.Kind == f.Kind) && (f.Tag == "" || slices.Contains(p.Tags, f.Tag)) &&
						(f.Search == "" || foldContains(p.Content, f.Search)) {
						match = append(match, p)
					}
				}
				want := pageOf(match, f.Limit, f.Offset)
				got := read(b, func(tx store.Tx) ([]learning.Pattern, error) { return tx.ListPatterns(b.ctx, project, f) })
				if d := diff(orNil(want), orNil(got)); d != "" {
					rt.Fatalf("ListPatterns(%+v) (-want +got):\n%s", f, d)
				}
				if n := read(b, func(tx store.Tx) (int64, error) { return tx.CountPatterns(b.ctx, project, f) }); n != int64(len(match)) {
					rt.Fatalf("CountPatterns(%+v) = %d, want %d", f, n, len(match))
				}
			}
			content := rapid.SampledFrom(contents).Draw(rt, "find content")
			var want []string
			for _, p := range all {
				if learning.ContentKey(p.Content) == learning.ContentKey(content) {
					want = append(want, p.ID)
				}
			}
			found := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
				return tx.FindPatternsByContent(b.ctx, project, content)
			})
			if got := keys(sortedBy(found, patternID), patternID); !slices.Equal(orNil(sortedBy(want, rapid.ID)), orNil(got)) {
				rt.Fatalf("FindPatternsByContent(%q) = %v, want %v", content, got, want)
			}
		})
	})
}

func sortedFunc[T any](s []T, cmp func(a, b T) int) []T {
	s = slices.Clone(s)
	slices.SortStableFunc(s, cmp)
	return s
}
