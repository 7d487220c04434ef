package storetest

import (
	"errors"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

func patternID(p learning.Pattern) string { return p.ID }

func recordID(r store.PatternRecord) string { return r.Pattern.ID }

func antiPattern(project, id, content string) learning.Pattern {
	p := fullPattern(project, id, content)
	p.Kind = learning.KindAntiPattern
	return p
}

func testPattern(t *testing.T, setup setupFunc) {
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullPattern("p", "pat-full", "Split by file.")
		requireAllSet(t, full)
		cases := []learning.Pattern{
			full,
			antiPattern("p", "pat-anti", "AVOID: split by file. Failed 3/5 times (60% failure rate)"),
			unicodePattern("ид-🚀-1"),
			{ID: "pat-zero", Project: "p"}, // no kind, no content, zero times, nil lists
			{ID: "pat-empty", Project: "p", Kind: learning.KindPattern, Content: "empty lists", Tags: []string{}, ExampleTasks: []string{}},
		}
		b.seed(toAny(cases)...)
		for _, p := range cases {
			want := wantPattern(p)
			got := read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, p.Project, p.ID) })
			requireEqual(t, "GetPattern "+p.ID, want, got)
			got = write(b, func(tx store.Tx) (learning.Pattern, error) { return tx.LockPattern(b.ctx, p.Project, p.ID) })
			requireEqual(t, "LockPattern "+p.ID, want, got)
			found := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
				return tx.FindPatternsByContent(b.ctx, p.Project, p.Content)
			})
			requireList(t, "FindPatternsByContent "+p.ID, []learning.Pattern{want}, found)
		}
		for _, project := range []string{"p", uniProject} {
			var want []learning.Pattern
			var records []store.PatternRecord
			for _, p := range cases {
				if p.Project == project {
					want = append(want, wantPattern(p))
					records = append(records, store.PatternRecord{Pattern: wantPattern(p),
						Maturity: learning.Maturity{Project: p.Project, PatternID: p.ID, Generation: p.Generation}})
				}
			}
			got := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
				return tx.ListPatterns(b.ctx, project, store.PatternFilter{})
			})
			requireSet(t, "ListPatterns "+project, want, got, patternID)
			requireSet(t, "EachPattern "+project, want, eachPattern(b, project), patternID)
			withMaturity := read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
				return tx.PatternsWithMaturity(b.ctx, project, store.PatternFilter{})
			})
			requireSet(t, "PatternsWithMaturity "+project, records, withMaturity, recordID)
		}
	})

	t.Run("InsertIdempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		first := fullPattern("p", "pat-1", "split by file")
		b.seed(first)
		for _, dup := range []learning.Pattern{
			fullPattern("p", "pat-1", "split by module"),
			antiPattern("p", "pat-1", "something else entirely"),
		} {
			if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertPattern(b.ctx, dup) }); ok {
				t.Errorf("second InsertPattern of id pat-1 (content %q) reported true, want false", dup.Content)
			}
		}
		requireList(t, "patterns after duplicate inserts", []learning.Pattern{first}, eachPattern(b, "p"))

		other := unicodePattern("pat-1")
		other.Project = "q"
		if ok := write(b, func(tx store.Tx) (bool, error) { return tx.InsertPattern(b.ctx, other) }); !ok {
			t.Error("InsertPattern of an id taken in another project reported false, want true")
		}
		requireList(t, "patterns of project q", []learning.Pattern{other}, eachPattern(b, "q"))
		requireList(t, "patterns of project p", []learning.Pattern{first}, eachPattern(b, "p"))
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullPattern("p", "pat-1", "split by file"))
		for _, k := range []struct{ project, id, why string }{
			{"p", "pat-2", "a missing id"},
			{"q", "pat-1", "an id of another project"},
		} {
			_, err := get(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, k.project, k.id) })
			requireNotFound(t, "GetPattern of "+k.why, err)
			err = b.s.Update(b.ctx, func(tx store.Tx) error {
				_, err := tx.LockPattern(b.ctx, k.project, k.id)
				return err
			})
			requireNotFound(t, "LockPattern of "+k.why, err)
			err = b.s.Update(b.ctx, func(tx store.Tx) error {
				return tx.UpdatePattern(b.ctx, fullPattern(k.project, k.id, "split by module"))
			})
			requireNotFound(t, "UpdatePattern of "+k.why, err)
			err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.DeletePattern(b.ctx, k.project, k.id) })
			requireNotFound(t, "DeletePattern of "+k.why, err)
		}
		requireList(t, "patterns after failed changes", []learning.Pattern{fullPattern("p", "pat-1", "split by file")},
			eachPattern(b, "p"))
		requireList(t, "patterns of q after failed changes", nil, eachPattern(b, "q"))
	})

	t.Run("UpdateReplaces", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullPattern("p", "pat-1", "split by file"), fullPattern("p", "pat-2", "split by module"))
		next := unicodePattern("pat-1")
		next.Project = "p"
		b.update(func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, next) })
		got := read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "pat-1") })
		requireEqual(t, "pattern after UpdatePattern", next, got)

		cleared := learning.Pattern{ID: "pat-1", Project: "p", Kind: learning.KindPattern, Content: "cleared"}
		b.update(func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, cleared) })
		got = read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "pat-1") })
		requireEqual(t, "pattern after UpdatePattern clearing every field", wantPattern(cleared), got)
		untouched := read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "pat-2") })
		requireEqual(t, "other pattern after UpdatePattern", fullPattern("p", "pat-2", "split by module"), untouched)
	})

	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		keep := fullPattern("p", "pat-2", "split by module")
		b.seed(fullPattern("p", "pat-1", "split by file"), keep)
		b.update(func(tx store.Tx) error { return tx.DeletePattern(b.ctx, "p", "pat-1") })
		_, err := get(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "pat-1") })
		requireNotFound(t, "GetPattern of a deleted pattern", err)
		got := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
			return tx.ListPatterns(b.ctx, "p", store.PatternFilter{})
		})
		requireList(t, "ListPatterns after DeletePattern", []learning.Pattern{keep}, got)
		n := read(b, func(tx store.Tx) (int64, error) { return tx.CountPatterns(b.ctx, "p", store.PatternFilter{}) })
		if n != 1 {
			t.Errorf("CountPatterns after DeletePattern = %d, want 1", n)
		}
		found := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
			return tx.FindPatternsByContent(b.ctx, "p", "split by file")
		})
		requireList(t, "FindPatternsByContent of a deleted pattern", nil, found)
		err = b.s.Update(b.ctx, func(tx store.Tx) error { return tx.DeletePattern(b.ctx, "p", "pat-1") })
		requireNotFound(t, "second DeletePattern", err)
	})

	t.Run("ContentUnique", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tryInsert := func(p learning.Pattern) bool {
			t.Helper()
			return write(b, func(tx store.Tx) (bool, error) { return tx.InsertPattern(b.ctx, p) })
		}
		b.seed(fullPattern("p", "p-1", "Split by file."))

		// Same content key (case, inner and outer whitespace, trailing
		// period), another id: refused.
		if tryInsert(fullPattern("p", "p-2", "  split BY\t file  ")) {
			t.Error("InsertPattern of a pattern duplicating another's content key reported true, want false")
		}
		_, err := get(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "p-2") })
		requireNotFound(t, "GetPattern of a refused duplicate", err)

		// Anti-patterns are exempt, among themselves and against patterns.
		if !tryInsert(antiPattern("p", "a-1", "split by file")) || !tryInsert(antiPattern("p", "a-2", "SPLIT BY FILE.")) {
			t.Error("InsertPattern of anti-patterns sharing a pattern's content key reported false, want true")
		}
		// Another project has its own keys.
		if !tryInsert(fullPattern("q", "q-1", "split by file")) {
			t.Error("InsertPattern of a content key taken in another project reported false, want true")
		}

		// Exact key matches, across kinds, within the project.
		found := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
			return tx.FindPatternsByContent(b.ctx, "p", "  SPLIT by   file.")
		})
		requireEqual(t, "FindPatternsByContent", []string{"a-1", "a-2", "p-1"}, keys(sortedBy(found, patternID), patternID))
		for _, near := range []string{"split by", "split by files", "split by file and module", "split-by-file"} {
			found := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
				return tx.FindPatternsByContent(b.ctx, "p", near)
			})
			requireList(t, "FindPatternsByContent (not fuzzy) "+near, nil, keys(found, patternID))
		}

		// Deleting a pattern frees its key.
		b.update(func(tx store.Tx) error { return tx.DeletePattern(b.ctx, "p", "p-1") })
		if !tryInsert(fullPattern("p", "p-3", "split by file")) {
			t.Error("InsertPattern of the content key of a deleted pattern reported false, want true")
		}
		// Changing a pattern's content frees the old key.
		b.update(func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, fullPattern("p", "p-3", "split by module")) })
		if !tryInsert(fullPattern("p", "p-4", "Split by file")) {
			t.Error("InsertPattern of the old content key of an updated pattern reported false, want true")
		}
		// UpdatePattern cannot create a duplicate either.
		for _, dup := range []learning.Pattern{
			fullPattern("p", "p-4", "split by module."),
			fullPattern("p", "a-1", "split by file"), // an anti-pattern turned pattern
		} {
			err := b.s.Update(b.ctx, func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, dup) })
			if err == nil || errors.Is(err, store.ErrNotFound) {
				t.Errorf("UpdatePattern of %s to a duplicate content key returned %v, want a constraint error", dup.ID, err)
			}
		}
		got := read(b, func(tx store.Tx) (learning.Pattern, error) { return tx.GetPattern(b.ctx, "p", "p-4") })
		requireEqual(t, "pattern after a refused UpdatePattern", fullPattern("p", "p-4", "Split by file"), got)
		// A pattern turned anti-pattern frees its key.
		b.update(func(tx store.Tx) error { return tx.UpdatePattern(b.ctx, antiPattern("p", "p-3", "split by module")) })
		if !tryInsert(fullPattern("p", "p-5", "split by module")) {
			t.Error("InsertPattern of the key of a pattern turned anti-pattern reported false, want true")
		}
		n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountPatterns(b.ctx, "p", store.PatternFilter{Kind: learning.KindPattern})
		})
		if n != 2 {
			t.Errorf("CountPatterns of kind pattern = %d, want 2 (p-4, p-5)", n)
		}
	})

	t.Run("ListOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// CreatedAt, ties by id ascending; UpdatedAt runs the other way.
		mk := func(id string, created, updated int) learning.Pattern {
			p := fullPattern("p", id, "content of "+id)
			p.CreatedAt, p.UpdatedAt = at(created), at(updated)
			return p
		}
		b.seed(mk("k-b", 10, 1), mk("k-d", 5, 2), mk("k-a", 10, 3), mk("k-c", 20, 4), mk("k-e", 10, 0))
		want := []string{"k-d", "k-a", "k-b", "k-e", "k-c"}
		got := read(b, func(tx store.Tx) ([]learning.Pattern, error) {
			return tx.ListPatterns(b.ctx, "p", store.PatternFilter{})
		})
		requireEqual(t, "ListPatterns order", want, keys(got, patternID))
		records := read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
			return tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{})
		})
		requireEqual(t, "PatternsWithMaturity order", want, keys(records, recordID))
	})

	t.Run("Filter", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id string, kind learning.PatternKind, content string, tags []string, created int) learning.Pattern {
			p := fullPattern("p", id, content)
			p.Kind, p.Tags, p.CreatedAt = kind, tags, at(created)
			return p
		}
		pat, anti := learning.KindPattern, learning.KindAntiPattern
		b.seed(
			mk("k-1", pat, "Split by file", []string{"go", "db"}, 1),
			mk("k-2", anti, "AVOID: split by file. Failed 3/5 times (60% failure rate)", []string{"go"}, 2),
			mk("k-3", pat, "100% test coverage first", []string{"golang", "a,b"}, 3),
			mk("k-4", pat, "Use snake_case names", []string{"Go", `c"q`}, 4),
			mk("k-5", pat, "Привет мир: по модулям", []string{"标签"}, 5),
			mk("k-6", anti, "plain words", []string{}, 6),
			mk("k-7", pat, "Review  twice.", nil, 7),
		)
		all := []string{"k-1", "k-2", "k-3", "k-4", "k-5", "k-6", "k-7"}
		for _, tc := range []struct {
			name  string
			f     store.PatternFilter
			want  []string
			count int64
		}{
			{"none", store.PatternFilter{}, all, 7},
			{"kind pattern", store.PatternFilter{Kind: pat}, []string{"k-1", "k-3", "k-4", "k-5", "k-7"}, 5},
			{"kind anti-pattern", store.PatternFilter{Kind: anti}, []string{"k-2", "k-6"}, 2},
			{"tag is exact", store.PatternFilter{Tag: "go"}, []string{"k-1", "k-2"}, 2},
			{"tag is case-sensitive", store.PatternFilter{Tag: "Go"}, []string{"k-4"}, 1},
			{"tag with a quote", store.PatternFilter{Tag: `c"q`}, []string{"k-4"}, 1},
			{"tag with a comma", store.PatternFilter{Tag: "a,b"}, []string{"k-3"}, 1},
			{"tag is not a substring", store.PatternFilter{Tag: "a"}, nil, 0},
			{"unicode tag", store.PatternFilter{Tag: "标签"}, []string{"k-5"}, 1},
			{"tag and kind", store.PatternFilter{Tag: "db", Kind: anti}, nil, 0},
			{"search", store.PatternFilter{Search: "split"}, []string{"k-1", "k-2"}, 2},
			{"search ignores case", store.PatternFilter{Search: "SPLIT BY FILE"}, []string{"k-1", "k-2"}, 2},
			{"search unicode ignores case", store.PatternFilter{Search: "ПРИВЕТ"}, []string{"k-5"}, 1},
			{"search % is literal", store.PatternFilter{Search: "%"}, []string{"k-2", "k-3"}, 2},
			{"search _ is literal", store.PatternFilter{Search: "_"}, []string{"k-4"}, 1},
			{"search punctuation is literal", store.PatternFilter{Search: "file."}, []string{"k-2"}, 1},
			{"search whitespace is literal", store.PatternFilter{Search: "review twice"}, nil, 0},
			{"search and kind", store.PatternFilter{Search: "split", Kind: anti}, []string{"k-2"}, 1},
			{"search and tag", store.PatternFilter{Search: "by", Tag: "go"}, []string{"k-1", "k-2"}, 2},
			{"limit", store.PatternFilter{Limit: 2}, []string{"k-1", "k-2"}, 7},
			{"limit and offset", store.PatternFilter{Limit: 2, Offset: 2}, []string{"k-3", "k-4"}, 7},
			{"offset without limit", store.PatternFilter{Offset: 5}, []string{"k-6", "k-7"}, 7},
			{"offset past the end", store.PatternFilter{Offset: 7}, nil, 7},
			{"kind and paging", store.PatternFilter{Kind: pat, Limit: 2, Offset: 1}, []string{"k-3", "k-4"}, 5},
		} {
			got := read(b, func(tx store.Tx) ([]learning.Pattern, error) { return tx.ListPatterns(b.ctx, "p", tc.f) })
			requireList(t, "ListPatterns "+tc.name, tc.want, keys(got, patternID))
			records := read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
				return tx.PatternsWithMaturity(b.ctx, "p", tc.f)
			})
			requireList(t, "PatternsWithMaturity "+tc.name, tc.want, keys(records, recordID))
			n := read(b, func(tx store.Tx) (int64, error) { return tx.CountPatterns(b.ctx, "p", tc.f) })
			if n != tc.count {
				t.Errorf("CountPatterns %s = %d, want %d (Count ignores Limit and Offset)", tc.name, n, tc.count)
			}
		}
	})

	t.Run("WithMaturity", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w1 := fullPattern("p", "w-1", "with a maturity record")
		w1.Generation, w1.CreatedAt = 2, at(2)
		w2 := antiPattern("p", "w-2", "without one")
		w2.Generation, w2.CreatedAt = 3, at(1)
		w3 := learning.Pattern{ID: "w-3", Project: "p", Kind: learning.KindPattern, Content: "generation zero", CreatedAt: at(2)}
		m1 := fullMaturity("p", "w-1") // its own generation (6), stored as given
		b.seed(w1, w2, w3, m1,
			fullMaturity("p", "ghost"), // a maturity record without a pattern
			fullMaturity("q", "w-2"),   // the same pattern id in another project
		)
		want := []store.PatternRecord{
			{Pattern: w2, Maturity: learning.Maturity{Project: "p", PatternID: "w-2", Generation: 3}},
			{Pattern: w1, Maturity: m1},
			{Pattern: wantPattern(w3), Maturity: learning.Maturity{Project: "p", PatternID: "w-3"}},
		}
		got := read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
			return tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{})
		})
		requireList(t, "PatternsWithMaturity", want, got)
		got = read(b, func(tx store.Tx) ([]store.PatternRecord, error) {
			return tx.PatternsWithMaturity(b.ctx, "p", store.PatternFilter{Kind: learning.KindPattern, Limit: 1, Offset: 1})
		})
		requireList(t, "PatternsWithMaturity filtered", want[2:], got)
	})

	t.Run("EachStops", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(fullPattern("p", "pat-1", "one"), fullPattern("p", "pat-2", "two"))
		calls := 0
		err := b.s.View(b.ctx, func(tx store.Tx) error {
			return tx.EachPattern(b.ctx, "p", func(learning.Pattern) error { calls++; return errStop })
		})
		requireStopped(t, "EachPattern", err, calls)
	})
}

func eachPattern(b *bundle, project string) []learning.Pattern {
	b.t.Helper()
	return read(b, func(tx store.Tx) ([]learning.Pattern, error) {
		var out []learning.Pattern
		err := tx.EachPattern(b.ctx, project, func(p learning.Pattern) error { out = append(out, p); return nil })
		return out, err
	})
}
