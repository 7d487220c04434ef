package viewer

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// Rankings by kind of task, on the learning page: for each kind of task
// the project has outcomes of (learning.InferKind, or named by a plan
// request), the strategies plan guidance would recommend for a task of
// that kind, by estimated success rate with the 95 % interval, and the
// ones to avoid there. It is the per-context view of the learning (issue
// 11): the same strategy may lead for migrations and be avoided for
// bugfixes.

// kindRanking is one kind of task's ranking.
type kindRanking struct {
	Kind    string
	Similar int // past tasks of this kind behind it (at most 10 listed by guidance)
	Rows    []kindRow
	Avoid   []kindRow
}

type kindRow struct {
	Content  string
	Rate     string // "72 %"
	Interval string // "58–84 %"
	Uses     string // similar uses behind it
}

// maxKindRows bounds the strategies shown per kind.
const maxKindRows = 5

// kindRankings reads the engine's rankings by kind and orders each by
// estimated rate for the page.
func kindRankings(ctx context.Context, e *kaizen.Engine, project string) ([]kindRanking, error) {
	rankings, err := e.KindRankings(ctx, project, maxKindRows)
	if err != nil {
		return nil, err
	}
	var out []kindRanking
	for _, r := range rankings {
		g := r.Recommendation
		kr := kindRanking{Kind: r.Kind, Similar: len(g.SimilarTasks)}
		recs := slices.Clone(g.Recommended)
		// the ranking's order is a draw under thompson: show the rates
		slices.SortStableFunc(recs, func(a, b learning.Recommended) int { return cmp.Compare(b.Rate, a.Rate) })
		for _, r := range recs {
			if r.Similar == 0 && r.Overall == 0 {
				continue // never tried: nothing to show
			}
			kr.Rows = append(kr.Rows, rowOf(r))
		}
		for _, r := range g.Avoid {
			kr.Avoid = append(kr.Avoid, rowOf(r))
		}
		if len(kr.Rows)+len(kr.Avoid) > 0 {
			out = append(out, kr)
		}
	}
	return out, nil
}

func rowOf(r learning.Recommended) kindRow {
	return kindRow{Content: r.Content, Rate: fmt.Sprintf("%.0f %%", 100*r.Rate),
		Interval: fmt.Sprintf("%.0f–%.0f %%", 100*r.Interval[0], 100*r.Interval[1]), Uses: fmt.Sprintf("%.1f", r.Similar)}
}
