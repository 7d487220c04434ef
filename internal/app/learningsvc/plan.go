package learningsvc

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// PlanInput asks for guidance before planning a task.
type PlanInput = learning.GuidanceRequest

// patternSet is a project's patterns as guidance reads them at an
// instant: every pattern but the anti-patterns with its maturity
// evaluated, the anti-patterns, and the reasons of manual changes.
type patternSet struct {
	views   []learning.PatternView
	antis   []learning.Pattern
	reasons map[string]string
}

// patternViews evaluates every pattern of the project at now, read from
// the store (views is reused for the result): the rare request dated
// before the guidance index.
func (s *Service) patternViews(ctx context.Context, tx store.Tx, project string, now time.Time, views []learning.PatternView) (patternSet, error) {
	recs, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{})
	if err != nil {
		return patternSet{}, err
	}
	ps := patternSet{views: views, reasons: map[string]string{}}
	for i := range recs {
		r := &recs[i]
		if r.Pattern.Kind == learning.KindAntiPattern {
			ps.antis = append(ps.antis, r.Pattern)
			continue
		}
		ev, err := s.evaluate(ctx, tx, r.Maturity, now)
		if err != nil {
			return patternSet{}, err
		}
		ps.views = append(ps.views, learning.PatternView{Pattern: &r.Pattern, Maturity: ev})
		if r.Maturity.ManualReason != "" {
			ps.reasons[r.Pattern.ID] = r.Maturity.ManualReason
		}
	}
	return ps, nil
}

// viewBuffers recycles the per-plan slice of pattern views (one entry per
// pattern of the project), so planning creates little garbage.
var viewBuffers = sync.Pool{New: func() any { return new([]learning.PatternView) }}

// PlanGuidance returns structured guidance for planning a task: the ranked
// patterns (base score × maturity multiplier, with the evidence), the
// anti-patterns to avoid, warnings when the task description mentions an
// anti-pattern or deprecated pattern, criterion weights, and the open
// errors of the task. Render it with Guidance.Markdown.
func (s *Service) PlanGuidance(ctx context.Context, in PlanInput) (*learning.Guidance, error) {
	const op = "plan guidance"
	in = scrubPlan(in)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	in.Project = project
	if err := app.ValidText(op, "task", in.Task, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	if in.TaskID != "" {
		if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
			return nil, err
		}
	}
	if in.Limit < 0 || in.Limit > 1000 {
		return nil, app.Invalid(op, "limit", "must be between 0 and 1000")
	}
	if err := validTags(op, in.Tags); err != nil {
		return nil, err
	}
	if in.Kind != "" && !slices.Contains(learning.TaskKinds, in.Kind) {
		return nil, app.Invalid(op, "kind", "must be one of %s", strings.Join(learning.TaskKinds, ", "))
	}
	// The strategies the task mentions, extracted once: the guidance index
	// looks them up and the guidance flags them.
	if in.Mentioned = learning.ExtractPatterns(in.Task); in.Mentioned == nil {
		in.Mentioned = []learning.Extracted{}
	}
	var g learning.Guidance
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		// Evaluate at a time read once the read has begun (after SQLite's
		// barrier, which may wait for the writer): not before the events it
		// sees, so the O(1) decayed sums stay exact. Read before the wait,
		// a call queued for over a second under load (clockSkew) fell back
		// to recomputing every criterion's weight from its events, which
		// made the next calls wait longer still.
		now = app.Latest(now, s.env.Now())
		buf := viewBuffers.Get().(*[]learning.PatternView)
		defer func() {
			clear(*buf) // drop the references before pooling
			viewBuffers.Put(buf)
		}()
		snap, err := s.cache.snapshot(ctx, tx, project)
		if err != nil {
			return err
		}
		// A new base's guidance index and choice set are built in the
		// background while the outcome history is read.
		s.prepareBase(snap, now)
		var idx *learning.ContextIndex
		if s.lc.Ranking != learning.RankingSeed {
			if idx, err = s.contexts.index(ctx, tx, project); err != nil {
				return err
			}
		}
		pv, ok, err := s.guidanceViews(ctx, tx, snap, in, now, (*buf)[:0])
		if err != nil {
			return err
		}
		if !ok { // the clock went back before the guidance index: evaluate every pattern
			if pv, err = s.patternViews(ctx, tx, project, now, (*buf)[:0]); err != nil {
				return err
			}
		}
		views := pv.views
		cs, err := tx.ListCriteria(ctx, project)
		if err != nil {
			return err
		}
		weights := make([]learning.CriterionWeight, 0, len(cs))
		for _, c := range cs {
			w, err := s.weight(ctx, tx, c, now)
			if err != nil {
				return err
			}
			weights = append(weights, w)
		}
		var open []learning.ErrorEntry
		if in.TaskID != "" {
			if open, err = tx.ErrorsByTask(ctx, project, in.TaskID, false); err != nil {
				return err
			}
		}
		g = s.lc.BuildGuidance(in, views, pv.reasons, pv.antis, weights, open, now)
		if s.lc.Ranking == learning.RankingSeed {
			g.Recommendation = learning.SeedRecommendation(g)
		} else {
			g.Contextualize(s.recommend(snap, in, idx, now))
		}
		*buf = views
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.hooks.Sections != nil {
		g.Sections = append(g.Sections, s.hooks.Sections(ctx, in)...)
	}
	return &g, nil
}

// ExtractPatterns detects the seed's decomposition strategies in a
// description, in English or Chinese (see the package function; it needs
// no stored data).
func (s *Service) ExtractPatterns(description string) ([]learning.Extracted, error) {
	return ExtractPatterns(app.Scrub(description))
}

// ExtractPatterns detects the seed's decomposition strategies in a
// description, in English or Chinese. It needs no engine or store.
func ExtractPatterns(description string) ([]learning.Extracted, error) {
	const op = "extract patterns"
	if err := app.ValidText(op, "description", description, app.MaxTextLen, true); err != nil {
		return nil, err
	}
	out := learning.ExtractPatterns(description)
	if out == nil {
		out = []learning.Extracted{}
	}
	return out, nil
}
