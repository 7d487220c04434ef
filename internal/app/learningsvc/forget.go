package learningsvc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// DeleteOutcomeResult reports an outcome's deletion and what was
// recomputed without it.
type DeleteOutcomeResult struct {
	Project string `json:"project"`
	// Outcome is the deleted outcome.
	Outcome learning.Outcome `json:"outcome"`
	// Observations counts the pattern observations the outcome had made,
	// removed with it.
	Observations int `json:"observations_removed"`
	// Patterns are the patterns the outcome had fed, recomputed without it
	// (counts, maturity, inversion).
	Patterns []PatternInfo `json:"patterns"`
	// PatternsRemoved are patterns no other evidence supports any more:
	// only the deleted outcome had used them, so they went with it.
	PatternsRemoved []string `json:"patterns_removed"`
	// AntiPatternsRemoved are inversions that no longer hold: without the
	// outcome, the pattern's failures never reached the inversion rule.
	AntiPatternsRemoved []string `json:"anti_patterns_removed"`
	// Criteria are the criteria the outcome judged, with their weights
	// recomputed without it.
	Criteria []learning.CriterionWeight `json:"criteria"`
	// TaskReopened is true when the outcome had ended its tracked task and
	// the task has no other outcome: the task is open again.
	TaskReopened bool `json:"task_reopened"`
}

// DeleteOutcome forgets an outcome and everything it taught, in one
// transaction: the outcome with its criterion feedback, the pattern
// observations it made, an inversion that only held because of it, a
// pattern only it had used; then the project's aggregates (pattern counts
// and maturity, criterion sums) are rebuilt from the events that remain,
// so they equal what they would be had the outcome never been recorded.
func (s *Service) DeleteOutcome(ctx context.Context, in app.ForgetInput) (*DeleteOutcomeResult, error) {
	const op = "delete outcome"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "id", in.ID); err != nil {
		return nil, err
	}
	start := s.env.Now()
	var res *DeleteOutcomeResult
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		now := app.Latest(start, s.env.Now())
		o, err := tx.GetOutcome(ctx, project, in.ID)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "id", Message: fmt.Sprintf("no outcome %q in project %q", in.ID, project),
				Hint: "list the project's outcomes to find its id", Next: "list_outcomes"}
		}
		if err != nil {
			return err
		}
		res = &DeleteOutcomeResult{Project: project, Outcome: o, Patterns: []PatternInfo{}, PatternsRemoved: []string{},
			AntiPatternsRemoved: []string{}, Criteria: []learning.CriterionWeight{}}
		removal, err := s.removeOutcome(ctx, tx, o, now)
		if err != nil {
			return err
		}
		res.Observations, res.PatternsRemoved, res.AntiPatternsRemoved = removal.Observations, removal.PatternsRemoved, removal.AntiPatternsRemoved
		kept := removal.Kept
		if res.TaskReopened, err = reopenTask(ctx, tx, o, now); err != nil {
			return err
		}
		for _, pid := range kept {
			p, err := tx.GetPattern(ctx, project, pid)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			m, err := maturityOf(ctx, tx, p)
			if err != nil {
				return err
			}
			info, err := s.info(ctx, tx, store.PatternRecord{Pattern: p, Maturity: m})
			if err != nil {
				return err
			}
			res.Patterns = append(res.Patterns, info)
		}
		for _, name := range o.Criteria {
			c, err := tx.GetCriterion(ctx, project, name)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			w, err := s.weight(ctx, tx, c, now)
			if err != nil {
				return err
			}
			res.Criteria = append(res.Criteria, w)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// deleteOutcomeObservation removes the observation an outcome made of a
// pattern: the observation with the id derived from the outcome's, or for
// an outcome recorded before observations had such ids, the one with the
// outcome's task, time, result and scored type (of the pattern's current
// generation when there is one). Two records matching all of these are
// interchangeable (they fed the aggregates identically), so removing
// either gives the same result.
func deleteOutcomeObservation(ctx context.Context, tx store.Tx, o learning.Outcome, patternID string) (int, error) {
	// Outcomes recorded since observations carry their outcome's id.
	switch err := tx.DeleteMaturityFeedback(ctx, o.Project, outcomeFeedbackID(o.ID, patternID)); {
	case err == nil:
		return 1, nil
	case !errors.Is(err, store.ErrNotFound):
		return 0, err
	}
	fbs, err := tx.MaturityFeedback(ctx, o.Project, patternID)
	if err != nil {
		return 0, err
	}
	gen := int64(-1)
	if p, err := tx.GetPattern(ctx, o.Project, patternID); err == nil {
		gen = p.Generation
	} else if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	var match *learning.MaturityFeedback
	for i := len(fbs) - 1; i >= 0; i-- {
		f := fbs[i]
		if f.TaskID != o.TaskID || !f.Timestamp.Equal(o.Timestamp) || f.Success != o.Success || f.Type != o.Score.Type {
			continue
		}
		if match == nil || (match.Generation != gen && f.Generation == gen) {
			match = &fbs[i]
		}
	}
	if match == nil {
		return 0, nil // already gone (a reset pattern, a partial import)
	}
	return 1, tx.DeleteMaturityFeedback(ctx, o.Project, match.ID)
}

// settlePattern undoes what a pattern no longer has evidence for once an
// outcome's observation of it is removed: its anti-pattern, when the
// pattern's remaining observations of its generation never met the
// inversion rule at any point (inversion is sticky, so any point counts),
// and the pattern itself, when no observation of it remains and no
// manual state or anti-pattern holds it. It reports whether the pattern
// was deleted and the id of a deleted anti-pattern.
func (s *Service) settlePattern(ctx context.Context, tx store.Tx, project, id string) (gone bool, anti string, err error) {
	p, err := tx.GetPattern(ctx, project, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, "", nil
	}
	if err != nil || p.Kind != learning.KindPattern {
		return false, "", err
	}
	fbs, err := tx.MaturityFeedback(ctx, project, id)
	if err != nil {
		return false, "", err
	}
	if p.AntiPatternID != "" && !s.everInverted(p, fbs) {
		anti = p.AntiPatternID
		if err := tx.DeletePattern(ctx, project, anti); err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, "", err
		}
		p.AntiPatternID = ""
		if err := tx.UpdatePattern(ctx, p); err != nil {
			return false, "", err
		}
	}
	m, err := maturityOf(ctx, tx, p)
	if err != nil {
		return false, "", err
	}
	if len(fbs) > 0 || m.Manual != "" || p.AntiPatternID != "" {
		return false, anti, nil
	}
	if err := tx.DeleteMaturity(ctx, project, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, "", err
	}
	return true, anti, tx.DeletePattern(ctx, project, id)
}

// everInverted replays a pattern's observations of its current generation
// in order and reports whether the inversion rule held after any of them.
func (s *Service) everInverted(p learning.Pattern, fbs []learning.MaturityFeedback) bool {
	q := learning.Pattern{Project: p.Project, ID: p.ID, Kind: learning.KindPattern, Generation: p.Generation}
	for _, f := range fbs {
		q.Observe(f, 0)
		if s.lc.ShouldInvert(q) {
			return true
		}
	}
	return false
}

// reopenTask opens the outcome's tracked task again when no other outcome
// of the task remains.
func reopenTask(ctx context.Context, tx store.Tx, o learning.Outcome, now time.Time) (bool, error) {
	n, err := tx.CountOutcomes(ctx, o.Project, store.OutcomeFilter{TaskID: o.TaskID})
	if err != nil || n > 0 {
		return false, err
	}
	t, err := tx.LockTask(ctx, o.Project, o.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil || t.EndedAt == nil {
		return false, err
	}
	t.EndedAt, t.UpdatedAt = nil, now
	return true, tx.UpdateTask(ctx, t)
}
