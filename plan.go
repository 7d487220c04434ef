package kaizen

import (
	"context"
	"sync"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// PlanInput asks for guidance before planning a task.
type PlanInput = learning.GuidanceRequest

// viewBuffers recycles the per-plan slice of pattern views (one entry per
// pattern of the project), so planning creates little garbage.
var viewBuffers = sync.Pool{New: func() any { return new([]learning.PatternView) }}

// PlanGuidance returns structured guidance for planning a task: the ranked
// patterns (base score × maturity multiplier, with the evidence), the
// anti-patterns to avoid, warnings when the task description mentions an
// anti-pattern or deprecated pattern, criterion weights, and the open
// errors of the task. Render it with Guidance.Markdown.
func (e *Engine) PlanGuidance(ctx context.Context, in PlanInput) (*learning.Guidance, error) {
	const op = "plan guidance"
	now := e.Now()
	project, err := e.project(op, in.Project)
	if err != nil {
		return nil, err
	}
	in.Project = project
	if err := validText(op, "task", in.Task, maxTextLen, false); err != nil {
		return nil, err
	}
	if in.TaskID != "" {
		if err := validID(op, "bead_id", in.TaskID); err != nil {
			return nil, err
		}
	}
	if in.Limit < 0 || in.Limit > 1000 {
		return nil, invalid(op, "limit", "must be between 0 and 1000")
	}
	var g learning.Guidance
	err = e.view(ctx, op, func(tx store.Tx) error {
		recs, err := e.cache.records(ctx, tx, project)
		if err != nil {
			return err
		}
		buf := viewBuffers.Get().(*[]learning.PatternView)
		defer func() {
			clear(*buf) // drop the references before pooling
			viewBuffers.Put(buf)
		}()
		views := (*buf)[:0]
		reasons := map[string]string{}
		var antis []learning.Pattern
		for _, r := range recs {
			if r.Pattern.Kind == learning.KindAntiPattern {
				antis = append(antis, r.Pattern)
				continue
			}
			ev, err := e.evaluate(ctx, tx, r.Maturity, now)
			if err != nil {
				return err
			}
			views = append(views, learning.PatternView{Pattern: &r.Pattern, Maturity: ev})
			if r.Maturity.ManualReason != "" {
				reasons[r.Pattern.ID] = r.Maturity.ManualReason
			}
		}
		cs, err := tx.ListCriteria(ctx, project)
		if err != nil {
			return err
		}
		weights := make([]learning.CriterionWeight, 0, len(cs))
		for _, c := range cs {
			w, err := e.weight(ctx, tx, c, now)
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
		g = e.lc.BuildGuidance(in, views, reasons, antis, weights, open, now)
		*buf = views
		return nil
	})
	if err != nil {
		return nil, err
	}
	g.Sections = append(g.Sections, e.guidanceSections(ctx, in)...)
	return &g, nil
}

// ExtractPatterns detects the seed's decomposition strategies in a
// description, in English or Chinese (see the package function; it needs
// no stored data).
func (e *Engine) ExtractPatterns(description string) ([]learning.Extracted, error) {
	return ExtractPatterns(description)
}

// ExtractPatterns detects the seed's decomposition strategies in a
// description, in English or Chinese. It needs no engine or store.
func ExtractPatterns(description string) ([]learning.Extracted, error) {
	const op = "extract patterns"
	if err := validText(op, "description", description, maxTextLen, true); err != nil {
		return nil, err
	}
	out := learning.ExtractPatterns(description)
	if out == nil {
		out = []learning.Extracted{}
	}
	return out, nil
}
