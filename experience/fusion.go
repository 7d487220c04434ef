package experience

import (
	"cmp"
	"slices"
)

// Fused is one item of a reciprocal rank fusion.
type Fused struct {
	RefID string
	// Score is Σ 1/(k + rank) over the lists that hold the item.
	Score float64
	// Ranks[i] is the item's 1-based rank in list i, or 0 when list i does
	// not hold it.
	Ranks []int
}

// fusionDefaultK is the k used when RRF is given k < 1: the seed's 60.
const fusionDefaultK = 60

// RRF fuses ranked lists of ids (best first) by reciprocal rank fusion:
// an item's score is Σ 1/(k + rank) over the lists holding it, rank
// starting at 1. Within one list an id counted twice counts once, at its
// best (first) rank; empty ids are ignored but keep their place, so the
// ranks of the others are their positions in the list. The output is best
// first, ties broken by RefID ascending. Terms are added in list order, so
// the scores are deterministic. k < 1 means 60.
func RRF(k int, lists ...[]string) []Fused {
	if k < 1 {
		k = fusionDefaultK
	}
	index := map[string]int{}
	var out []Fused
	for li, list := range lists {
		for pos, id := range list {
			if id == "" {
				continue
			}
			i, ok := index[id]
			if !ok {
				i = len(out)
				index[id] = i
				out = append(out, Fused{RefID: id, Ranks: make([]int, len(lists))})
			}
			f := &out[i]
			if f.Ranks[li] != 0 {
				continue // already counted in this list at a better rank
			}
			f.Ranks[li] = pos + 1
		}
	}
	for i := range out {
		f := &out[i]
		for _, r := range f.Ranks {
			if r > 0 {
				f.Score += 1 / (float64(k) + float64(r)) // no int overflow for a huge k
			}
		}
	}
	slices.SortFunc(out, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.RefID, b.RefID)
	})
	return out
}
