package learningsvc

import (
	"io"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/internal/atomicfile"
)

// Saving at Close (issue 17). A base is saved after a full load and when
// a new base is made from a grown overlay; between the two, a process
// catches up with up to max(512, n/64) changed patterns in its overlay,
// and the next process would read them all again as full records (at
// 100,000 patterns, 1,500 changed cost the first request of a new process
// 126–139 MiB against about 105 MiB from a current file). So Close saves
// the cached state of every project whose overlay holds at least
// closeSaveMin patterns (as a new base: the rows in the cache's order, as
// when an overlay that grew is made a base; written from the base and the
// overlay without laying out a copy of the rows — 14 MiB at 100,000
// patterns — nor sorting the ids again), unless a file at that version was
// saved already.

// closeSaveMin is the overlay size from which Close saves a project's
// cached state.
const closeSaveMin = 64

// saveAtClose saves the cached states worth saving (see above) and waits
// for them.
func (c *patternCache) saveAtClose() {
	s := c.snaps
	if s == nil {
		return
	}
	s.mu.Lock()
	storeID := s.storeID // known once a file was read or saved
	s.mu.Unlock()
	if storeID == "" {
		return
	}
	type item struct {
		project string
		p       *cachedProject
	}
	var todo []item
	c.mu.Lock()
	for name, p := range c.projects {
		if len(p.overlay) >= closeSaveMin {
			todo = append(todo, item{name, p})
		}
	}
	c.mu.Unlock()
	for _, it := range todo {
		s.mu.Lock()
		saved := s.saving[it.project] >= it.p.version
		if !saved {
			s.saving[it.project] = it.p.version
		}
		s.mu.Unlock()
		if saved {
			continue
		}
		h := patternSnapHeader{StoreID: storeID, Locator: s.locator, Project: it.project, Version: it.p.version}
		n, row, byID := it.p.layout()
		err := atomicfile.Write(s.file(h.StoreID, h.Project), func(w io.Writer) error {
			return writePatternSnapshotOf(w, h, n, row, byID)
		})
		if err != nil {
			s.logger.Warn("pattern snapshot not saved at close", "project", it.project, "err", err)
		}
	}
}

// layout returns p's patterns as the rows of one base — n rows, row(i)
// the i-th in the store's order (base order, changed records in place,
// added ones last) — and their positions in id order.
func (p *cachedProject) layout() (n int, row func(int) *patternRow, byID []int32) {
	b := p.base
	nb := len(b.rows)
	n = nb + len(p.added)
	changed := make(map[int32]*patternRow, len(p.overlay))
	for id, r := range p.overlay {
		if pos, ok := b.pos(id); ok {
			row := rowOf(r)
			changed[pos] = &row
		}
	}
	added := make([]patternRow, len(p.added))
	for i, id := range p.added {
		added[i] = rowOf(p.overlay[id])
	}
	row = func(i int) *patternRow {
		if i >= nb {
			return &added[i-nb]
		}
		if r := changed[int32(i)]; r != nil {
			return r
		}
		return &b.rows[i]
	}
	// The id order: the base's, merged with the added ids sorted.
	extra := make([]int32, len(added))
	for i := range extra {
		extra[i] = int32(nb + i)
	}
	slices.SortFunc(extra, func(x, y int32) int { return strings.Compare(added[x-int32(nb)].id, added[y-int32(nb)].id) })
	byID = make([]int32, 0, n)
	i, j := 0, 0
	for i < len(b.byID) || j < len(extra) {
		if j == len(extra) || (i < len(b.byID) && b.rows[b.byID[i]].id < added[extra[j]-int32(nb)].id) {
			byID = append(byID, b.byID[i])
			i++
		} else {
			byID = append(byID, extra[j])
			j++
		}
	}
	return n, row, byID
}
