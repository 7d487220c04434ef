package experiencesvc

import (
	"context"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// gathered is what one group of a recall's retrievals found.
type gathered struct {
	live   []experience.LiveSignal
	cands  []experience.Candidate
	scores map[string]experience.HeuristicScore
	topics map[string]float64
}

// gather retrieves and scores the candidates of every asked kind. The
// heuristics (with the task's live signals, which score them) and the
// skills and memories are independent: they run concurrently, each group
// in a read transaction of its own, so that a recall's two costly
// retrievals (heuristics and memories: a full-text search, a vector search
// and a batch read each) take the time of one on two cores. The candidates
// come back in the same order as sequential retrieval gave (heuristics,
// skills, memories), and with the same scores: the groups share nothing
// but the query.
func (s *Service) gather(ctx context.Context, op string, in RecallInput, kinds map[experience.ItemKind]bool,
	qv []float32, tokens []string, now time.Time) (gathered, error) {
	project := in.Project
	heuristics := func(g *gathered) error {
		g.scores = map[string]experience.HeuristicScore{}
		g.live = []experience.LiveSignal{}
		if in.TaskID == "" && !kinds[experience.ItemHeuristic] {
			return nil
		}
		return s.env.View(ctx, op, func(tx store.Tx) error {
			if in.TaskID != "" {
				live, err := s.liveSignals(ctx, tx, project, in.TaskID)
				if err != nil {
					return err
				}
				g.live = live
			}
			if !kinds[experience.ItemHeuristic] {
				return nil
			}
			hs, err := s.recallHeuristics(ctx, tx, project, qv, tokens, g.live, g.scores, now)
			g.cands = hs
			return err
		})
	}
	others := func(g *gathered) error {
		g.topics = map[string]float64{}
		var hybrid []experience.ItemKind
		for _, kind := range []experience.ItemKind{experience.ItemSkill, experience.ItemMemory} {
			if kinds[kind] {
				hybrid = append(hybrid, kind)
			}
		}
		if len(hybrid) == 0 {
			return nil
		}
		return s.env.View(ctx, op, func(tx store.Tx) error {
			for _, kind := range hybrid {
				got, err := s.recallHybrid(ctx, tx, project, kind, qv, tokens, in.TaskID, g.topics)
				if err != nil {
					return err
				}
				g.cands = append(g.cands, got...)
			}
			return nil
		})
	}
	var a, b gathered
	var errA, errB error
	if kinds[experience.ItemHeuristic] && (kinds[experience.ItemSkill] || kinds[experience.ItemMemory]) {
		var wg sync.WaitGroup
		wg.Go(func() { errB = others(&b) })
		errA = heuristics(&a)
		wg.Wait()
	} else {
		errA = heuristics(&a)
		if errA == nil {
			errB = others(&b)
		}
	}
	if errA != nil {
		return gathered{}, errA
	}
	if errB != nil {
		return gathered{}, errB
	}
	a.cands = append(a.cands, b.cands...)
	a.topics = b.topics
	return a, nil
}
