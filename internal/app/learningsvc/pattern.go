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

// ObserveInput records one use of a pattern directly (the seed's
// recordPatternObservation), outside an outcome.
type ObserveInput struct {
	Project string `json:"project,omitempty"`
	// Pattern is an id or the pattern's content (created when new).
	Pattern string `json:"pattern"`
	Success *bool  `json:"success"`
	TaskID  string `json:"bead_id,omitempty"`
	// Timestamp of the observation (RFC 3339), default now.
	Timestamp string   `json:"timestamp,omitempty"`
	Tags      []string `json:"tags,omitempty"`
}

// ObservationResult is the pattern after an observation, and its inversion
// when this observation turned it into an anti-pattern.
type ObservationResult struct {
	Pattern   learning.Pattern    `json:"pattern"`
	Update    PatternUpdate       `json:"update"`
	Inversion *learning.Inversion `json:"inversion,omitempty"`
}

// ObservePattern records a success or failure of a pattern: the
// observation, helpful or harmful maturity feedback, and the inversion check.
func (s *Service) ObservePattern(ctx context.Context, in ObserveInput) (*ObservationResult, error) {
	const op = "observe pattern"
	in = scrubObserve(in)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := PatternContent(op, "pattern", in.Pattern); err != nil {
		return nil, err
	}
	if in.Success == nil {
		return nil, app.Invalid(op, "success", "is required (true or false)")
	}
	if in.TaskID != "" {
		if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
			return nil, err
		}
	}
	for _, t := range in.Tags {
		if err := learning.ValidateName("tags", t); err != nil {
			return nil, app.Invalid(op, "tags", "%v", err)
		}
	}
	at, err := app.ParseTime(op, "timestamp", in.Timestamp, now)
	if err != nil {
		return nil, err
	}
	fb := learning.Harmful
	if *in.Success {
		fb = learning.Helpful
	}
	var res ObservationResult
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		now := app.Latest(now, s.env.Now()) // see RecordOutcome
		ref, err := s.resolvePattern(ctx, tx, op, project, in.Pattern, in.Tags, now)
		if err != nil {
			return err
		}
		u, inv, err := s.observe(ctx, tx, ref.pattern.ID, project,
			observation{success: *in.Success, fbType: fb, taskID: in.TaskID, at: at}, now)
		if err != nil {
			return err
		}
		u.Created = ref.created
		res = ObservationResult{Update: u, Inversion: inv}
		res.Pattern, err = tx.GetPattern(ctx, project, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// PatternInfo is a pattern with its maturity at the engine's now.
type PatternInfo struct {
	learning.Pattern
	Maturity     learning.MaturityEval `json:"maturity"`
	ManualReason string                `json:"manual_reason,omitempty"`
	Label        string                `json:"label"`
	SuccessCI95  [2]float64            `json:"success_ci95"`
}

// PatternQuery selects patterns.
type PatternQuery struct {
	Project string                 `json:"project,omitempty"`
	Kind    learning.PatternKind   `json:"kind,omitempty"`
	State   learning.MaturityState `json:"state,omitempty"`
	Tag     string                 `json:"tag,omitempty"`
	Search  string                 `json:"search,omitempty"`
	Limit   int                    `json:"limit,omitempty"`
	Offset  int                    `json:"offset,omitempty"`
}

// PatternList is a page of patterns.
type PatternList = app.Page[PatternInfo]

func (s *Service) info(ctx context.Context, tx store.Tx, rec store.PatternRecord) (PatternInfo, error) {
	ev, err := s.evaluate(ctx, tx, rec.Maturity, s.env.Now())
	if err != nil {
		return PatternInfo{}, err
	}
	v := learning.PatternView{Pattern: &rec.Pattern, Maturity: ev}
	label := learning.MaturityLabel(v, rec.Maturity.ManualReason)
	if rec.Pattern.Kind == learning.KindAntiPattern {
		// anti-patterns have no maturity of their own: they are excluded
		ev = learning.MaturityEval{State: learning.Deprecated, ComputedState: learning.Deprecated, At: ev.At}
		label = "[ANTI-PATTERN - " + rec.Pattern.Reason + "]"
	}
	return PatternInfo{Pattern: rec.Pattern, Maturity: ev, ManualReason: rec.Maturity.ManualReason, Label: label,
		SuccessCI95: learning.Wilson95(rec.Pattern.SuccessCount, rec.Pattern.Observations())}, nil
}

// ListPatterns lists patterns with their maturity. The state filter is
// evaluated at the engine's now (maturity decays), so it is applied after
// loading the project's patterns.
func (s *Service) ListPatterns(ctx context.Context, q PatternQuery) (*PatternList, error) {
	const op = "list patterns"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	if q.Kind != "" && q.Kind != learning.KindPattern && q.Kind != learning.KindAntiPattern {
		return nil, app.Invalid(op, "kind", "must be %q or %q", learning.KindPattern, learning.KindAntiPattern)
	}
	if q.State != "" && !q.State.Valid() {
		return nil, app.Invalid(op, "state", "must be candidate, established, proven or deprecated")
	}
	if err := app.CheckQuery(op, "search", q.Search); err != nil {
		return nil, err
	}
	if err := app.CheckQuery(op, "tag", q.Tag); err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	offset := q.Offset
	f := store.PatternFilter{Kind: q.Kind, Tag: q.Tag, Search: q.Search}
	if q.State == "" {
		f.Limit, f.Offset = limit, offset
	}
	out := PatternList{Project: project, Items: []PatternInfo{}, Limit: limit, Offset: q.Offset}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		recs, err := tx.PatternsWithMaturity(ctx, project, f)
		if err != nil {
			return err
		}
		for _, r := range recs {
			pi, err := s.info(ctx, tx, r)
			if err != nil {
				return err
			}
			if q.State == "" || pi.Maturity.State == q.State {
				out.Items = append(out.Items, pi)
			}
		}
		if q.State != "" {
			out.Total = int64(len(out.Items))
			out.Items = out.Items[min(offset, len(out.Items)):min(offset+limit, len(out.Items))]
			return nil
		}
		f.Limit, f.Offset = 0, 0
		out.Total, err = tx.CountPatterns(ctx, project, f)
		return err
	})
	return app.Finish(&out, err)
}

// PatternDetail is everything known about one pattern.
type PatternDetail struct {
	PatternInfo
	MaturityRecord learning.Maturity `json:"maturity_record"`
	AntiPattern    *learning.Pattern `json:"anti_pattern,omitempty"`
	// RecentObservations are the pattern's newest uses (at most 20).
	RecentObservations []learning.MaturityFeedback `json:"recent_observations"`
}

// GetPattern returns a pattern by id, or by content when ref is not an id.
func (s *Service) GetPattern(ctx context.Context, project, ref string) (*PatternDetail, error) {
	const op = "get pattern"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var d PatternDetail
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		p, err := lookupPattern(ctx, tx, op, project, ref)
		if err != nil {
			return err
		}
		m, err := maturityOf(ctx, tx, p)
		if err != nil {
			return err
		}
		if d.PatternInfo, err = s.info(ctx, tx, store.PatternRecord{Pattern: p, Maturity: m}); err != nil {
			return err
		}
		d.MaturityRecord = m
		if p.AntiPatternID != "" {
			if a, err := tx.GetPattern(ctx, project, p.AntiPatternID); err == nil {
				d.AntiPattern = &a
			}
		}
		obs, err := tx.MaturityFeedback(ctx, project, p.ID)
		if err != nil {
			return err
		}
		slices.Reverse(obs)
		d.RecentObservations = obs[:min(len(obs), 20)]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// lookupPattern finds an existing pattern by id or content.
func lookupPattern(ctx context.Context, tx store.Tx, op, project, ref string) (learning.Pattern, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return learning.Pattern{}, app.Invalid(op, "pattern", "is required (an id or the content)")
	}
	notFound := &app.Error{Op: op, Kind: app.KindNotFound, Field: "pattern",
		Message: fmt.Sprintf("no pattern %q in project %q", ref, project), Hint: "list the project's patterns to find its id or exact content", Next: "list_patterns"}
	if isPatternID(ref) {
		p, err := tx.GetPattern(ctx, project, ref)
		if errors.Is(err, store.ErrNotFound) {
			return p, notFound
		}
		return p, err
	}
	if st, ok := learning.StrategyByLabel(ref); ok {
		if p, ok, err := findStrategy(ctx, tx, project, st); err != nil || ok {
			return p, err
		}
	}
	p, ok, err := FindPattern(ctx, tx, project, ref)
	if err == nil && !ok {
		err = notFound
	}
	return p, err
}

// ManualInput names a pattern and a reason for a manual state change.
type ManualInput struct {
	Project string `json:"project,omitempty"`
	Pattern string `json:"pattern"`
	Reason  string `json:"reason,omitempty"`
}

// ManualResult is a pattern after a manual change, with notes about it.
type ManualResult struct {
	Pattern PatternInfo `json:"pattern"`
	Notes   []string    `json:"notes"`
}

// PromotePattern marks a pattern proven by external validation. A
// deprecated pattern cannot be promoted; reset it first.
func (s *Service) PromotePattern(ctx context.Context, in ManualInput) (*ManualResult, error) {
	in = scrubManual(in)
	return s.manual(ctx, "promote pattern", in, func(m *learning.Maturity, now time.Time) ([]string, error) {
		notes, err := s.lc.Maturity.Promote(m, now, in.Reason)
		if errors.Is(err, learning.ErrPromoteDeprecated) {
			return nil, &app.Error{Op: "promote pattern", Kind: app.KindConflict, Field: "pattern", Message: err.Error(),
				Hint: "reset the pattern first: that starts its evaluation over", Next: "reset_pattern"}
		}
		return notes, err
	})
}

// DeprecatePattern excludes a pattern (multiplier 0) for a reason.
func (s *Service) DeprecatePattern(ctx context.Context, in ManualInput) (*ManualResult, error) {
	in = scrubManual(in)
	return s.manual(ctx, "deprecate pattern", in, func(m *learning.Maturity, now time.Time) ([]string, error) {
		if strings.TrimSpace(in.Reason) == "" {
			return nil, app.Invalid("deprecate pattern", "reason", "is required: say why the pattern must not be used")
		}
		return nil, learning.Deprecate(m, now, in.Reason)
	})
}

// ResetPattern starts a pattern's evaluation over: manual state cleared,
// observations and maturity feedback recorded before now no longer count,
// and its anti-pattern (if any) removed. History stays stored.
func (s *Service) ResetPattern(ctx context.Context, in ManualInput) (*ManualResult, error) {
	in = scrubManual(in)
	return s.manual(ctx, "reset pattern", in, nil)
}

func (s *Service) manual(ctx context.Context, op string, in ManualInput,
	change func(*learning.Maturity, time.Time) ([]string, error)) (*ManualResult, error) {
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "reason", in.Reason, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	var res ManualResult
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		p, err := lookupPattern(ctx, tx, op, project, in.Pattern)
		if err != nil {
			return err
		}
		if p.Kind == learning.KindAntiPattern {
			return &app.Error{Op: op, Kind: app.KindInvalid, Field: "pattern", Message: fmt.Sprintf("%s is an anti-pattern", p.ID),
				Hint: "act on its source pattern " + p.SourceID}
		}
		if p, err = tx.LockPattern(ctx, project, p.ID); err != nil {
			return err
		}
		m, err := maturityOf(ctx, tx, p)
		if err != nil {
			return err
		}
		res.Notes = []string{}
		if change == nil { // reset
			learning.Reset(&m, now)
			if in.Reason != "" {
				res.Notes = append(res.Notes, "reset: "+in.Reason)
			}
			if p.AntiPatternID != "" {
				if err := tx.DeletePattern(ctx, project, p.AntiPatternID); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				res.Notes = append(res.Notes, "removed anti-pattern "+p.AntiPatternID)
			}
			p.Generation, p.SuccessCount, p.FailureCount = m.Generation, 0, 0
			p.AntiPatternID, p.ExampleTasks = "", []string{}
			p.UpdatedAt = now
			if err := tx.UpdatePattern(ctx, p); err != nil {
				return err
			}
		} else {
			notes, err := change(&m, now)
			if err != nil {
				return err
			}
			res.Notes = append(res.Notes, notes...)
			m.UpdatedAt = now
		}
		if err := tx.PutMaturity(ctx, m); err != nil {
			return err
		}
		res.Pattern, err = s.info(ctx, tx, store.PatternRecord{Pattern: p, Maturity: m})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// ExplainPattern answers why a pattern is in its state and whether it was
// inverted, with the numbers and thresholds involved.
func (s *Service) ExplainPattern(ctx context.Context, project, ref string) (*learning.PatternExplanation, error) {
	const op = "explain pattern"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var x learning.PatternExplanation
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		p, err := lookupPattern(ctx, tx, op, project, ref)
		if err != nil {
			return err
		}
		if p.Kind == learning.KindAntiPattern {
			if src, err := tx.GetPattern(ctx, project, p.SourceID); err == nil {
				p = src
			}
		}
		m, err := maturityOf(ctx, tx, p)
		if err != nil {
			return err
		}
		ev, err := s.evaluate(ctx, tx, m, s.env.Now())
		if err != nil {
			return err
		}
		x = s.lc.ExplainPattern(p, m, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &x, nil
}

// CriterionList is every criterion of a project with its weight (one page).
type CriterionList = app.Page[learning.CriterionWeight]

// ListCriteria returns every criterion's weight at the engine's now.
func (s *Service) ListCriteria(ctx context.Context, project string) (*CriterionList, error) {
	const op = "list criteria"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	out := []learning.CriterionWeight{}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		cs, err := tx.ListCriteria(ctx, project)
		if err != nil {
			return err
		}
		for _, c := range cs {
			w, err := s.weight(ctx, tx, c, s.env.Now())
			if err != nil {
				return err
			}
			out = append(out, w)
		}
		return nil
	})
	return app.Finish(&CriterionList{Project: project, Items: out, Total: int64(len(out)), Limit: len(out)}, err)
}

// ExplainCriterion explains a criterion's weight.
func (s *Service) ExplainCriterion(ctx context.Context, project, name string) (*learning.CriterionExplanation, error) {
	const op = "explain criterion"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := learning.ValidateName("criterion", name); err != nil {
		return nil, app.Invalid(op, "criterion", "%v", err)
	}
	var x learning.CriterionExplanation
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		c, err := tx.GetCriterion(ctx, project, name)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "criterion",
				Message: fmt.Sprintf("no feedback recorded for criterion %q in project %q", name, project)}
		}
		if err != nil {
			return err
		}
		w, err := s.weight(ctx, tx, c, s.env.Now())
		x = s.lc.ExplainCriterion(w)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &x, nil
}
