package learningsvc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Meta keys recording the half-lives the stored decayed sums were built with.
const (
	metaHalfLife         = "learning.half_life_days"
	metaMaturityHalfLife = "learning.maturity.half_life_days"
	metaHarmfulWeight    = "learning.harmful_weight"
)

// CheckHalfLives rebuilds every project's aggregates when the configured
// half-lives differ from those the stored sums were accumulated with: a
// running decayed sum is only exact for the half-life that built it.
func (s *Service) CheckHalfLives(ctx context.Context) error {
	want := map[string]string{
		metaHalfLife:         strconv.FormatFloat(s.lc.HalfLifeDays, 'g', -1, 64),
		metaMaturityHalfLife: strconv.FormatFloat(s.lc.Maturity.HalfLifeDays, 'g', -1, 64),
		metaHarmfulWeight:    s.lc.HarmfulWeight,
	}
	stale := false
	err := s.env.View(ctx, "open", func(tx store.Tx) error {
		for k, v := range want {
			got, err := tx.GetMeta(ctx, k)
			switch {
			case errors.Is(err, store.ErrNotFound):
				stale = true
			case err != nil:
				return err
			case got != v:
				stale = true
			}
		}
		return nil
	})
	if err != nil || !stale {
		return err
	}
	return s.env.Update(ctx, "rebuild aggregates", func(tx store.Tx) error {
		projects, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		for _, p := range projects {
			if err := s.RebuildTx(ctx, tx, p, s.env.Now()); err != nil {
				return err
			}
		}
		for k, v := range want {
			if err := tx.SetMeta(ctx, k, v); err != nil {
				return err
			}
		}
		if len(projects) > 0 {
			s.env.Logger.Info("rebuilt learning aggregates for new half-lives", "projects", len(projects),
				"half_life_days", s.lc.HalfLifeDays, "maturity_half_life_days", s.lc.Maturity.HalfLifeDays)
		}
		return nil
	})
}

// RebuildResult counts what a rebuild recomputed.
type RebuildResult struct {
	Project  string `json:"project"`
	Patterns int    `json:"patterns"`
	Criteria int    `json:"criteria"`
}

// Rebuild recomputes a project's aggregates (pattern counts, maturity sums,
// inversions, criterion sums) from the stored events. The result equals the
// incremental aggregates; use it to repair or after changing half-lives.
func (s *Service) Rebuild(ctx context.Context, project string) (*RebuildResult, error) {
	return s.RebuildWith(ctx, RebuildOptions{Project: project})
}

// RebuildOptions configure a rebuild.
type RebuildOptions struct {
	Project string `json:"project,omitempty"`
	// Progress, when set, is called as the rebuild goes with the records
	// done and the total of its three passes (the pattern observations
	// and the criterion feedback read, the patterns written); the total
	// is known once the first two passes are read.
	Progress func(done, total int) `json:"-"`
}

// RebuildWith is Rebuild with options (a progress callback).
func (s *Service) RebuildWith(ctx context.Context, opts RebuildOptions) (*RebuildResult, error) {
	const op = "rebuild"
	project := opts.Project
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	res := RebuildResult{Project: project}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		if err := s.rebuildTx(ctx, tx, project, s.env.Now(), opts.Progress); err != nil {
			return err
		}
		n, err := tx.CountPatterns(ctx, project, store.PatternFilter{})
		res.Patterns = int(n)
		if err != nil {
			return err
		}
		cs, err := tx.ListCriteria(ctx, project)
		res.Criteria = len(cs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// RebuildTx recomputes a project's aggregates from its events inside tx
// (after an import, or when the half-lives changed).
func (s *Service) RebuildTx(ctx context.Context, tx store.Tx, project string, now time.Time) error {
	return s.rebuildTx(ctx, tx, project, now, nil)
}

// progressEvery is how often a rebuild reports progress, in records.
const progressEvery = 1000

func (s *Service) rebuildTx(ctx context.Context, tx store.Tx, project string, now time.Time, progress func(done, total int)) error {
	// Outcomes may have been added out of order (an import) or deleted:
	// the task-context index is rebuilt on the next plan.
	s.contexts.forget(project)
	done := 0
	tick := func(total int) {
		done++
		if progress != nil && (done%progressEvery == 0 || done == total) {
			progress(done, max(total, 0)) // 0 while the total is unknown
		}
	}
	patterns := map[string]*learning.Pattern{}
	var order []string
	var antis []learning.Pattern
	err := tx.EachPattern(ctx, project, func(p learning.Pattern) error {
		if p.Kind == learning.KindAntiPattern {
			antis = append(antis, p)
			return nil
		}
		p.SuccessCount, p.FailureCount, p.ExampleTasks = 0, 0, []string{}
		patterns[p.ID] = &p
		order = append(order, p.ID)
		return nil
	})
	if err != nil {
		return err
	}
	maturity := map[string]*learning.Maturity{}
	ms, err := tx.ListMaturity(ctx, project)
	if err != nil {
		return err
	}
	for _, m := range ms {
		m := m
		m.Helpful, m.Harmful = learning.DecayedSum{}, learning.DecayedSum{}
		m.HelpfulCount, m.HarmfulCount, m.NeutralCount = 0, 0, 0
		m.LastValidated = time.Time{}
		maturity[m.PatternID] = &m
	}
	err = tx.EachMaturityFeedback(ctx, project, func(f learning.MaturityFeedback) error {
		tick(-1)
		p := patterns[f.PatternID]
		if p == nil {
			return nil
		}
		p.Observe(f, s.lc.MaxExampleTasks)
		m := maturity[f.PatternID]
		if m == nil {
			m = &learning.Maturity{Project: project, PatternID: f.PatternID, Generation: p.Generation}
			maturity[f.PatternID] = m
		}
		m.Apply(f, s.lc.Maturity.HalfLifeDays)
		return nil
	})
	if err != nil {
		return err
	}
	criteria := map[string]*learning.Criterion{}
	err = tx.EachFeedback(ctx, project, func(f learning.FeedbackEvent) error {
		tick(-1)
		c := criteria[f.Criterion]
		if c == nil {
			c = &learning.Criterion{Project: project, Name: f.Criterion, CreatedAt: f.Timestamp}
			criteria[f.Criterion] = c
		}
		c.Apply(f, s.lc.EventWeight(f), s.lc.HalfLifeDays)
		return nil
	})
	if err != nil {
		return err
	}
	for _, a := range antis { // sticky inversion: keep the link from source to anti-pattern
		if p := patterns[a.SourceID]; p != nil && p.AntiPatternID == "" {
			p.AntiPatternID = a.ID
		}
	}
	total := done + len(order)
	for _, id := range order {
		tick(total)
		p := patterns[id]
		if p.AntiPatternID != "" || s.lc.ShouldInvert(*p) {
			q, _, _, err := s.invert(ctx, tx, *p, now)
			if err != nil {
				return err
			}
			p = &q
		}
		p.UpdatedAt = now
		if err := tx.UpdatePattern(ctx, *p); err != nil {
			return err
		}
		if m := maturity[id]; m != nil {
			m.UpdatedAt = now
			if err := tx.PutMaturity(ctx, *m); err != nil {
				return err
			}
		}
	}
	existing, err := tx.ListCriteria(ctx, project)
	if err != nil {
		return err
	}
	for _, c := range existing {
		if criteria[c.Name] == nil {
			criteria[c.Name] = &learning.Criterion{Project: project, Name: c.Name}
		}
		criteria[c.Name].CreatedAt = c.CreatedAt
	}
	for _, c := range criteria {
		c.UpdatedAt = now
		if err := tx.PutCriterion(ctx, *c); err != nil {
			return err
		}
	}
	if progress != nil {
		progress(total, total)
	}
	return nil
}
