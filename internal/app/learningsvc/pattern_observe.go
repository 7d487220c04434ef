package learningsvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// PatternUpdate reports what one observation did to a pattern.
type PatternUpdate struct {
	ID           string                 `json:"id"`
	Content      string                 `json:"content"`
	Created      bool                   `json:"created"`
	Success      bool                   `json:"success"`
	FeedbackType learning.FeedbackType  `json:"feedback_type"`
	SuccessCount int64                  `json:"success_count"`
	FailureCount int64                  `json:"failure_count"`
	StateBefore  learning.MaturityState `json:"state_before"`
	StateAfter   learning.MaturityState `json:"state_after"`
	Multiplier   float64                `json:"multiplier"`
	Maturity     learning.MaturityEval  `json:"maturity"`
	// AntiPattern is set when the pattern is inverted: newly by this
	// observation (see Inverted) or earlier, refreshed with the new counts.
	AntiPattern *AntiPatternRef `json:"anti_pattern,omitempty"`
	// Recovered is set when this use withdrew the pattern's anti-pattern.
	Recovered *Recovery `json:"recovered,omitempty"`
}

// AntiPatternRef identifies a pattern's anti-pattern in an update.
type AntiPatternRef struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Reason  string `json:"reason"`
	// New is true when this observation caused the inversion.
	New bool `json:"new"`
}

// patternRef is a resolved reference to a pattern used by a task.
type patternRef struct {
	pattern learning.Pattern
	created bool
}

func isPatternID(ref string) bool {
	return strings.HasPrefix(ref, "pattern-") || strings.HasPrefix(ref, "anti-pattern-")
}

// resolvePattern finds the pattern a reference names (an id, or content
// matched by learning.ContentKey, or one of the seed's strategies in either
// language) and creates it from the content when it does not exist yet.
func (s *Service) resolvePattern(ctx context.Context, tx store.Tx, op, project, ref string, tags []string, now time.Time) (patternRef, error) {
	ref = strings.TrimSpace(ref)
	if isPatternID(ref) {
		p, err := tx.GetPattern(ctx, project, ref)
		if errors.Is(err, store.ErrNotFound) {
			return patternRef{}, &app.Error{Op: op, Kind: app.KindNotFound, Field: "patterns",
				Message: fmt.Sprintf("no pattern %q in project %q", ref, project), Hint: "list the project's patterns to find its id or exact content", Next: "list_patterns"}
		}
		return patternRef{pattern: p}, err
	}
	content := ref
	if st, ok := learning.StrategyByLabel(ref); ok {
		content = st.LabelFor(s.lc.Locale)
		tags = append(tags, st.Tag())
		if p, ok, err := findStrategy(ctx, tx, project, st); err != nil || ok {
			return patternRef{pattern: p}, err
		}
	}
	if p, ok, err := FindPattern(ctx, tx, project, content); err != nil || ok {
		return patternRef{pattern: p}, err
	}
	p := learning.Pattern{
		ID: app.NewID("pattern-"), Project: project, Content: content, Kind: learning.KindPattern,
		Tags: uniqueSorted(tags), ExampleTasks: []string{}, CreatedAt: now, UpdatedAt: now,
	}
	ok, err := tx.InsertPattern(ctx, p)
	if err != nil {
		return patternRef{}, err
	}
	if !ok { // created concurrently under the same content key
		found, ok, err := FindPattern(ctx, tx, project, content)
		if err == nil && !ok {
			err = errors.New("pattern vanished after a content conflict")
		}
		return patternRef{pattern: found}, err
	}
	return patternRef{pattern: p, created: true}, nil
}

// FindPattern finds the pattern (not anti-pattern) with the content key.
func FindPattern(ctx context.Context, tx store.Tx, project, content string) (learning.Pattern, bool, error) {
	found, err := tx.FindPatternsByContent(ctx, project, content)
	if err != nil {
		return learning.Pattern{}, false, err
	}
	for _, p := range found {
		if p.Kind == learning.KindPattern {
			return p, true, nil
		}
	}
	return learning.Pattern{}, false, nil
}

// findStrategy finds the pattern of one of the seed's strategies under its
// English or Chinese label (indexed lookups; no tag scan).
func findStrategy(ctx context.Context, tx store.Tx, project string, st learning.Strategy) (learning.Pattern, bool, error) {
	for _, label := range []string{st.Label, st.LabelZH} {
		if p, ok, err := FindPattern(ctx, tx, project, label); err != nil || ok {
			return p, ok, err
		}
	}
	return learning.Pattern{}, false, nil
}

func uniqueSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// maturityOf loads a pattern's maturity record, or a fresh one.
func maturityOf(ctx context.Context, tx store.Tx, p learning.Pattern) (learning.Maturity, error) {
	m, err := tx.GetMaturity(ctx, p.Project, p.ID)
	if errors.Is(err, store.ErrNotFound) {
		return learning.Maturity{Project: p.Project, PatternID: p.ID, Generation: p.Generation}, nil
	}
	return m, err
}

// evaluate returns the maturity of m at now: from the incremental sums, or
// by recomputation from the events when now precedes the newest event.
func (s *Service) evaluate(ctx context.Context, tx store.Tx, m learning.Maturity, now time.Time) (learning.MaturityEval, error) {
	now = settle(now, m.Helpful.Ref, m.Harmful.Ref)
	if !m.NeedsRecompute(now) {
		return s.lc.Maturity.Evaluate(m, now), nil
	}
	events, err := tx.MaturityFeedback(ctx, m.Project, m.PatternID)
	if err != nil {
		return learning.MaturityEval{}, err
	}
	return s.lc.Maturity.EvaluateFromEvents(m, events, now), nil
}

// clockSkew is how far the newest event of an aggregate may be ahead of
// the evaluation time and still count as "now": concurrent writers (other
// transactions, other servers) read their clocks at slightly different
// moments. Within it the aggregate is evaluated at its newest event (decay
// over one second changes a value by less than 1e-7 of itself); beyond it,
// it is time travel, answered exactly by recomputation from the events.
const clockSkew = time.Second

// settle moves now up to the newest of refs when it trails it by less than
// clockSkew.
func settle(now time.Time, refs ...time.Time) time.Time {
	for _, r := range refs {
		if r.After(now) && r.Sub(now) < clockSkew {
			now = r
		}
	}
	return now
}

// observation is one use of a pattern to record.
type observation struct {
	success bool
	fbType  learning.FeedbackType
	taskID  string
	// id is the maturity feedback row's id (default: a new one).
	id string
	at time.Time
}

// observe records a use of a pattern inside tx: its maturity feedback row,
// the pattern's counts, its maturity, and the anti-pattern inversion. The
// pattern is locked first.
func (s *Service) observe(ctx context.Context, tx store.Tx, id, project string, o observation, now time.Time) (PatternUpdate, *learning.Inversion, error) {
	p, err := tx.LockPattern(ctx, project, id)
	if err != nil {
		return PatternUpdate{}, nil, err
	}
	if p.Kind == learning.KindAntiPattern {
		return PatternUpdate{}, nil, &app.Error{Op: "observe pattern", Kind: app.KindInvalid, Field: "pattern",
			Message: fmt.Sprintf("%s is an anti-pattern", p.ID), Hint: "observe its source pattern " + p.SourceID}
	}
	m, err := maturityOf(ctx, tx, p)
	if err != nil {
		return PatternUpdate{}, nil, err
	}
	before, err := s.evaluate(ctx, tx, m, now)
	if err != nil {
		return PatternUpdate{}, nil, err
	}
	if o.id == "" {
		o.id = app.NewID("mf-")
	}
	mf := learning.MaturityFeedback{ID: o.id, Project: project, PatternID: p.ID, Success: o.success,
		Type: o.fbType, Weight: 1, TaskID: o.taskID, Timestamp: o.at, Generation: m.Generation}
	if err := tx.AppendMaturityFeedback(ctx, mf); err != nil {
		return PatternUpdate{}, nil, err
	}
	p.Observe(mf, s.lc.MaxExampleTasks)
	m.Apply(mf, s.lc.Maturity.HalfLifeDays)
	m.UpdatedAt = now
	after, err := s.evaluate(ctx, tx, m, now)
	if err != nil {
		return PatternUpdate{}, nil, err
	}
	var inv *learning.Inversion
	var anti *AntiPatternRef
	var recovered *Recovery
	if p.AntiPatternID != "" && s.lc.AntiPatternRecovery && m.Manual == "" {
		if recovered, err = s.recover(ctx, tx, &p, &m, now); err != nil {
			return PatternUpdate{}, nil, err
		}
		if recovered != nil {
			after, err = s.evaluate(ctx, tx, m, now)
			if err != nil {
				return PatternUpdate{}, nil, err
			}
		}
	}
	if p.AntiPatternID != "" || s.lc.ShouldInvert(p) {
		var a learning.Pattern
		if p, a, inv, err = s.invert(ctx, tx, p, now); err != nil {
			return PatternUpdate{}, nil, err
		}
		anti = &AntiPatternRef{ID: a.ID, Content: a.Content, Reason: a.Reason, New: inv != nil}
	}
	p.UpdatedAt = now
	if err := tx.UpdatePattern(ctx, p); err != nil {
		return PatternUpdate{}, nil, err
	}
	if err := tx.PutMaturity(ctx, m); err != nil {
		return PatternUpdate{}, nil, err
	}
	return PatternUpdate{
		ID: p.ID, Content: p.Content, Success: o.success, FeedbackType: o.fbType,
		SuccessCount: p.SuccessCount, FailureCount: p.FailureCount,
		StateBefore: before.State, StateAfter: after.State, Multiplier: after.Multiplier, Maturity: after,
		AntiPattern: anti, Recovered: recovered,
	}, inv, nil
}

// Recovery says that an anti-pattern was withdrawn: the uses of its source
// pattern since the inversion no longer meet the seed's inversion rule, so
// the project-wide judgement was stale (the seed's own principle: decay
// exists so that stale judgements do not dominate).
type Recovery struct {
	AntiPatternID string `json:"anti_pattern_id"`
	// Since is when the pattern was inverted; Successes and Failures count
	// its uses since.
	Since     time.Time `json:"since"`
	Successes int64     `json:"successes"`
	Failures  int64     `json:"failures"`
	Reason    string    `json:"reason"`
}

// recover withdraws the anti-pattern of an inverted pattern when the uses
// since the inversion (at least the seed's minimum of observations) no
// longer meet the seed's inversion rule: the anti-pattern is deleted and
// the pattern starts a new evaluation (a new generation: counts and
// maturity evidence start over, as after a reset). Nil when it does not
// recover.
func (s *Service) recover(ctx context.Context, tx store.Tx, p *learning.Pattern, m *learning.Maturity, now time.Time) (*Recovery, error) {
	anti, err := tx.GetPattern(ctx, p.Project, p.AntiPatternID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	uses, err := tx.MaturityFeedback(ctx, p.Project, p.ID)
	if err != nil {
		return nil, err
	}
	window := learning.Pattern{Kind: learning.KindPattern}
	for _, f := range uses {
		if f.Generation == p.Generation && f.Timestamp.After(anti.CreatedAt) {
			if f.Success {
				window.SuccessCount++
			} else {
				window.FailureCount++
			}
		}
	}
	if window.Observations() < int64(s.lc.AntiPattern.MinObservations) || s.lc.ShouldInvert(window) {
		return nil, nil
	}
	if err := tx.DeletePattern(ctx, p.Project, anti.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	r := &Recovery{AntiPatternID: anti.ID, Since: anti.CreatedAt, Successes: window.SuccessCount, Failures: window.FailureCount,
		Reason: fmt.Sprintf("recovered: %d of %d uses since the inversion on %s succeeded; the pattern is evaluated anew",
			window.SuccessCount, window.Observations(), anti.CreatedAt.Format("2006-01-02"))}
	learning.Reset(m, now)
	p.Generation, p.SuccessCount, p.FailureCount = m.Generation, 0, 0
	p.AntiPatternID, p.ExampleTasks = "", []string{}
	return r, nil
}

// invert creates or refreshes the anti-pattern of p. It returns the
// updated source pattern, the anti-pattern, and the inversion when it is
// new. Inversion is sticky: an anti-pattern stays until its source is reset,
// its counts and reason kept current.
func (s *Service) invert(ctx context.Context, tx store.Tx, p learning.Pattern, now time.Time) (learning.Pattern, learning.Pattern, *learning.Inversion, error) {
	var existing *learning.Pattern
	if p.AntiPatternID != "" {
		a, err := tx.GetPattern(ctx, p.Project, p.AntiPatternID)
		switch {
		case err == nil:
			existing = &a
		case !errors.Is(err, store.ErrNotFound):
			return p, learning.Pattern{}, nil, err
		}
	}
	inv := s.lc.Invert(p, existing, now)
	written, err := false, error(nil)
	if existing == nil {
		written, err = tx.InsertPattern(ctx, inv.Inverted)
	}
	if err == nil && !written {
		err = tx.UpdatePattern(ctx, inv.Inverted)
	}
	if err != nil {
		return p, learning.Pattern{}, nil, err
	}
	if !inv.New {
		return inv.Original, inv.Inverted, nil, nil
	}
	return inv.Original, inv.Inverted, &inv, nil
}
