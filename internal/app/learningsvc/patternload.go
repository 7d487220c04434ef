package learningsvc

import (
	"cmp"
	"context"
	"slices"

	"github.com/kaizenhq/kaizen/store"
)

// loadBase reads every pattern of the project into a new base. When the
// store can stream the ranking columns in id order (store.PatternRankIDReader:
// two scans of the tables in key order instead of two B-tree searches a
// pattern, issue 17), the rows are put in the store's order (creation
// time, then id) here and the id index comes with them; else the rows are
// read in the store's order (loadRows) and the id index is sorted.
func loadBase(ctx context.Context, tx store.Tx, project string) (*patternBase, error) {
	n := int64(-1) // not counted
	if ir, ok := tx.(store.PatternRankIDReader); ok {
		var err error
		if n, err = tx.CountPatterns(ctx, project, store.PatternFilter{}); err != nil {
			return nil, err
		}
		l := rowLoader{rows: make([]patternRow, 0, n)}
		created := make([]int64, 0, n)
		ok, err := ir.EachPatternRankByID(ctx, project, func(r *store.PatternRank) error {
			created = append(created, r.Created)
			return l.add(r)
		})
		if err != nil {
			return nil, err
		}
		if ok {
			return baseByID(l.finish(), created), nil
		}
	}
	rows, err := loadRowsSized(ctx, tx, project, n)
	if err != nil {
		return nil, err
	}
	return newPatternBase(rows), nil
}

// baseByID returns the base of rows given in the byte order of their ids
// (strictly increasing), created[i] the creation time of rows[i]
// (store.NoCreated, lowest, when unset): the rows in the store's order
// (creation time, then id — a stable sort by creation time of the id
// order) and the id index, the identity when the creation times already
// follow the id order (time-ordered ids: the common case, no sort).
func baseByID(rows []patternRow, created []int64) *patternBase {
	n := len(rows)
	byID := make([]int32, n)
	if slices.IsSorted(created) {
		for i := range byID {
			byID[i] = int32(i)
		}
		return newPatternBaseSorted(rows, byID)
	}
	order := make([]int32, n) // store position → id position
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(created[a], created[b]) })
	out := make([]patternRow, n)
	for k, i := range order {
		out[k] = rows[i]
		byID[i] = int32(k)
	}
	return newPatternBaseSorted(out, byID)
}
