package learningsvc

import (
	"context"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// KindRanking is what plan guidance recommends for a task of one kind:
// the recommendation for a plan request that names the kind and nothing
// else.
type KindRanking struct {
	Kind           string                  `json:"kind"`
	Recommendation learning.Recommendation `json:"recommendation"`
}

// KindRankings returns the ranking for each kind of task (learning.TaskKinds)
// that has similar past tasks in the project, with at most limit strategies
// each (default 5): the per-context view of the learning. The patterns are
// evaluated and the outcome index read once for all kinds. Under the seed
// ranking, which ranks the same for every task, there is none.
func (s *Service) KindRankings(ctx context.Context, project string, limit int) ([]KindRanking, error) {
	const op = "kind rankings"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 5
	}
	if s.lc.Ranking == learning.RankingSeed {
		return nil, nil
	}
	now := s.env.Now()
	var out []KindRanking
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		pv, err := s.patternViews(ctx, tx, project, now, nil)
		if err != nil {
			return err
		}
		idx, err := s.contexts.index(ctx, tx, project)
		if err != nil {
			return err
		}
		choices := s.lc.ChoicesOf(pv.views)
		for _, kind := range learning.TaskKinds {
			req := learning.GuidanceRequest{Project: project, Kind: kind, Limit: limit}
			rec := s.lc.Recommend(req, choices, idx, now, learning.RequestSeed(req, now))
			if len(rec.SimilarTasks) > 0 {
				out = append(out, KindRanking{Kind: kind, Recommendation: rec})
			}
		}
		return nil
	})
	return out, err
}
