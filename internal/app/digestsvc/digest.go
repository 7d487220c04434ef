// Package digestsvc answers "what has kaizen learned lately" and "which
// projects hold data": reads across the learning and experience systems,
// for the overview of the viewer and the `kaizen learned` and `kaizen
// projects` commands. It writes nothing.
package digestsvc

import (
	"context"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/experiencesvc"
	"github.com/kaizenhq/kaizen/internal/app/learningsvc"
	"github.com/kaizenhq/kaizen/store"
)

// Service reads digests over the learning and experience services.
type Service struct {
	env        *app.Env
	learning   *learningsvc.Service
	experience *experiencesvc.Service
}

// New returns the digest service.
func New(env *app.Env, l *learningsvc.Service, x *experiencesvc.Service) *Service {
	return &Service{env: env, learning: l, experience: x}
}

// Limits of a digest's period.
const (
	DefaultDays = 7
	MaxDays     = 3660
)

// LearnedQuery selects a digest's project and period: Since (RFC 3339),
// else the last Days days (default 7).
type LearnedQuery struct {
	Project string `json:"project,omitempty"`
	Since   string `json:"since,omitempty"`
	Days    int    `json:"days,omitempty"`
}

// Learned is what a project learned in a period: the learning system's
// pattern changes and success trend, the experience system's heuristics
// and skills, and how much happened.
type Learned struct {
	Project string    `json:"project"`
	Since   time.Time `json:"since"`
	Until   time.Time `json:"until"`
	learningsvc.PatternsLearned
	experiencesvc.ExperienceLearned
	// Outcomes counts the outcomes recorded in the period, Tasks the
	// tracked tasks active in it.
	Outcomes int64 `json:"outcomes"`
	Tasks    int   `json:"tasks"`
}

// Empty reports whether nothing was learned in the period.
func (l *Learned) Empty() bool {
	return len(l.NewProven)+len(l.NewDeprecated)+len(l.NewAntiPatterns)+len(l.HeuristicsCreated)+
		len(l.HeuristicsPromoted)+len(l.HeuristicsStale)+len(l.SkillsActivated) == 0
}

// Learned reports what a project learned in the period q names.
func (s *Service) Learned(ctx context.Context, q LearnedQuery) (*Learned, error) {
	const op = "learned"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	since, err := Period(op, q.Since, q.Days, now)
	if err != nil {
		return nil, err
	}
	out := &Learned{Project: project, Since: since, Until: now}
	p, err := s.learning.Learned(ctx, project, since)
	if err != nil {
		return nil, err
	}
	x, err := s.experience.Learned(ctx, project, since)
	if err != nil {
		return nil, err
	}
	out.PatternsLearned, out.ExperienceLearned = *p, *x
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		if out.Outcomes, err = tx.CountOutcomes(ctx, project, store.OutcomeFilter{Since: since}); err != nil {
			return err
		}
		for offset := 0; ; offset += 500 {
			page, err := tx.ListTasks(ctx, project, store.TaskFilter{Limit: 500, Offset: offset})
			if err != nil {
				return err
			}
			for _, t := range page {
				if t.LastActivityAt.Before(since) {
					return nil // most recently active first
				}
				out.Tasks++
			}
			if len(page) < 500 {
				return nil
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Period resolves a digest's start: since (RFC 3339, before now), else
// days before now (DefaultDays when 0).
func Period(op, since string, days int, now time.Time) (time.Time, error) {
	if since != "" {
		if days != 0 {
			return time.Time{}, app.Invalid(op, "days", "give since or days, not both")
		}
		t, err := app.ParseTime(op, "since", since, now)
		if err != nil {
			return t, err
		}
		if !t.Before(now) {
			return t, app.Invalid(op, "since", "must be before now")
		}
		if now.Sub(t) > MaxDays*24*time.Hour {
			return t, app.Invalid(op, "since", "must be within %d days", MaxDays)
		}
		return t, nil
	}
	if days == 0 {
		days = DefaultDays
	}
	if days < 1 || days > MaxDays {
		return time.Time{}, app.Invalid(op, "days", "must be between 1 and %d, got %d", MaxDays, days)
	}
	return now.Add(-time.Duration(days) * 24 * time.Hour), nil
}

// ProjectSummary is a project holding data, with what it holds and when
// it last changed.
type ProjectSummary struct {
	Project string `json:"project"`
	// LastActivity is the newest of its outcomes, tracked tasks,
	// exploration sessions, errors, captured turns and heuristic updates
	// (zero when none has a time).
	LastActivity time.Time `json:"last_activity"`
	Outcomes     int64     `json:"outcomes"`
	Patterns     int64     `json:"patterns"`
	Tasks        int64     `json:"tasks"`
	Heuristics   int64     `json:"heuristics"`
	Turns        int64     `json:"turns"`
	Errors       int64     `json:"errors"`
}

// ProjectQuery selects what ProjectSummaries reads: the last activity of
// every project (a few indexed reads each), and with Counts its record
// counts (which scan the project's indexes: for a listing, not a header).
type ProjectQuery struct {
	Counts bool `json:"counts,omitempty"`
}

// ProjectSummaries lists every project holding data (store order: sorted
// by name) with its last activity and, when asked, its counts.
func (s *Service) ProjectSummaries(ctx context.Context, q ProjectQuery) ([]ProjectSummary, error) {
	const op = "project summaries"
	out := []ProjectSummary{}
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		projects, err := tx.Projects(ctx)
		if err != nil {
			return err
		}
		for _, p := range projects {
			sum, err := summary(ctx, tx, p, q.Counts)
			if err != nil {
				return err
			}
			out = append(out, sum)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func summary(ctx context.Context, tx store.Tx, p string, counts bool) (ProjectSummary, error) {
	s := ProjectSummary{Project: p}
	latest := func(t time.Time) {
		if t.After(s.LastActivity) {
			s.LastActivity = t
		}
	}
	if counts {
		if err := countAll(ctx, tx, &s); err != nil {
			return s, err
		}
	}
	outcomes, err := tx.ListOutcomes(ctx, p, store.OutcomeFilter{Limit: 1})
	if err != nil {
		return s, err
	}
	for _, o := range outcomes {
		latest(o.RecordedAt)
	}
	tasks, err := tx.ListTasks(ctx, p, store.TaskFilter{Limit: 1})
	if err != nil {
		return s, err
	}
	for _, t := range tasks {
		latest(t.LastActivityAt)
	}
	sessions, err := tx.ListExploreSessions(ctx, p, store.ExploreFilter{Limit: 1})
	if err != nil {
		return s, err
	}
	for _, x := range sessions {
		latest(x.UpdatedAt)
	}
	errs, err := tx.ListErrors(ctx, p, store.ErrorFilter{Limit: 1})
	if err != nil {
		return s, err
	}
	for _, e := range errs {
		latest(e.Timestamp)
	}
	turns, err := tx.ListTurns(ctx, p, store.TurnFilter{NewestFirst: true, Limit: 1})
	if err != nil {
		return s, err
	}
	for _, t := range turns {
		latest(t.Time)
	}
	hs, err := tx.ListHeuristics(ctx, p, store.HeuristicFilter{Statuses: experience.HeuristicStatuses, Limit: 1})
	if err != nil {
		return s, err
	}
	for _, h := range hs {
		latest(h.UpdatedAt)
	}
	return s, nil
}

func countAll(ctx context.Context, tx store.Tx, s *ProjectSummary) error {
	p := s.Project
	var err error
	if s.Outcomes, err = tx.CountOutcomes(ctx, p, store.OutcomeFilter{}); err != nil {
		return err
	}
	if s.Patterns, err = tx.CountPatterns(ctx, p, store.PatternFilter{}); err != nil {
		return err
	}
	if s.Tasks, err = tx.CountTasks(ctx, p, store.TaskFilter{}); err != nil {
		return err
	}
	if s.Heuristics, err = tx.CountHeuristics(ctx, p, store.HeuristicFilter{}); err != nil {
		return err
	}
	if s.Turns, err = tx.CountTurns(ctx, p, store.TurnFilter{}); err != nil {
		return err
	}
	s.Errors, err = tx.CountErrors(ctx, p, store.ErrorFilter{})
	return err
}
