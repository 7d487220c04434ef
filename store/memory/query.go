package memory

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Stored records are immutable: a change replaces the pointer in its map,
// never the record behind it. Queries therefore select, order and page
// pointers, and copy only the records they return.

// selectAll returns the records keep accepts (every record if keep is nil).
func selectAll[V any](records map[string]*V, keep func(*V) bool) []*V {
	out := make([]*V, 0, len(records))
	for _, v := range records {
		if keep == nil || keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// selectIndexed returns the records the index holds under key that keep
// accepts.
func selectIndexed[V any](ix index, key string, records map[string]*V, keep func(*V) bool) []*V {
	out := make([]*V, 0, len(ix[key]))
	for id := range ix[key] {
		if v := records[id]; keep == nil || keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// sorted sorts s in place and returns it.
func sorted[V any](s []*V, compare func(a, b *V) int) []*V {
	slices.SortFunc(s, compare)
	return s
}

// page applies a filter's Offset and Limit (zero or negative: none).
func page[V any](s []V, limit, offset int) []V {
	if offset > 0 {
		s = s[min(offset, len(s)):]
	}
	if limit > 0 && len(s) > limit {
		s = s[:limit]
	}
	return s
}

// copies returns copies of the records, for the caller to own.
func copies[V any](s []*V, clone func(V) V) []V {
	out := make([]V, len(s))
	for i, v := range s {
		out[i] = clone(*v)
	}
	return out
}

// count returns how many records keep accepts.
func count[V any](records map[string]*V, keep func(*V) bool) int64 {
	var n int64
	for _, v := range records {
		if keep(v) {
			n++
		}
	}
	return n
}

// each calls fn on a copy of every record in order, stopping at the first
// error.
func each[V any](ctx context.Context, records []*V, clone func(V) V, fn func(V) error) error {
	for _, v := range records {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(clone(*v)); err != nil {
			return err
		}
	}
	return nil
}

// stored returns a pointer to a copy of v, the form records are kept in.
func stored[V any](v V, clone func(V) V) *V {
	c := clone(v)
	return &c
}

// oldestFirst orders by time, then id, ascending.
func oldestFirst(at1 time.Time, id1 string, at2 time.Time, id2 string) int {
	if c := at1.Compare(at2); c != 0 {
		return c
	}
	return strings.Compare(id1, id2)
}

// newestFirst orders by time, then id, descending.
func newestFirst(at1 time.Time, id1 string, at2 time.Time, id2 string) int {
	return oldestFirst(at2, id2, at1, id1)
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
