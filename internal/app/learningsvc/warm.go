package learningsvc

import (
	"context"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// WarmGuidance prepares plan guidance for every project with patterns (at
// most as many as the pattern cache keeps): its patterns (from the snapshot
// file when one fits, see patternSnapshots), its guidance index and, under
// a ranking that conditions on the task, its choice set and the context
// index of its recent outcomes — so that no request of a daemon that just
// started waits for them. It stops at the first error or when ctx ends and
// reports the projects prepared.
func (s *Service) WarmGuidance(ctx context.Context) (int, error) {
	const op = "warm guidance"
	var projects []string
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		projects, err = tx.Projects(ctx)
		return err
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, project := range projects {
		if n >= s.cache.limit {
			break
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		warmed := false
		err := s.env.View(ctx, op, func(tx store.Tx) error {
			v, err := tx.PatternVersion(ctx, project)
			if err != nil || v.Version == 0 { // no pattern yet
				return err
			}
			snap, err := s.cache.snapshot(ctx, tx, project)
			if err != nil {
				return err
			}
			snap.base.guidance(s, s.env.Now())
			if s.lc.Ranking != learning.RankingSeed {
				snap.base.choices(s)
				if _, err := s.contexts.index(ctx, tx, project); err != nil {
					return err
				}
			}
			warmed = true
			return nil
		})
		if err != nil {
			return n, err
		}
		if warmed {
			n++
		}
	}
	return n, nil
}
