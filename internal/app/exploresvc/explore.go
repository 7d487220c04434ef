// Package exploresvc is the exploration tracker's service (seed 002): it
// keeps an explore.Session per agent session (the session id doubles as
// the task id of task tracking), persisted between the hook calls that
// feed it, so that a daemon restart or a hook process per event loses
// nothing, and the per-project settings that enable it.
package exploresvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/explore"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The exploration service keeps an explore.Session per agent session (the
// session id doubles as the task id of task tracking), persisted between
// the hook calls that feed it, so that a daemon restart or a hook process
// per event loses nothing.

// DefaultExploreStrategy is used when neither the request nor the
// project's settings name a strategy.
const DefaultExploreStrategy = "analyst"

// ExploreSettings enable exploration tracking for a project (opt-in): client
// hooks then feed every agent session of the project to a tracker.
type ExploreSettings struct {
	Project string `json:"project,omitempty"`
	Enabled bool   `json:"enabled"`
	// Strategy is a built-in strategy name, or the name of StrategyTOML.
	Strategy string `json:"strategy,omitempty"`
	// StrategyTOML is a custom strategy (see docs/explore.md).
	StrategyTOML string `json:"strategy_toml,omitempty"`
	// BudgetTOML overrides the strategy pipeline's default budget.
	BudgetTOML string `json:"budget_toml,omitempty"`
}

func exploreSettingsKey(project string) string { return "explore/" + project }

// strategyOf resolves settings into a strategy and budget, validating both.
func strategyOf(op string, s ExploreSettings) (explore.Strategy, explore.Budget, error) {
	var st explore.Strategy
	var err error
	switch {
	case s.StrategyTOML != "":
		st, err = explore.LoadStrategyTOML([]byte(s.StrategyTOML))
	default:
		name := s.Strategy
		if name == "" {
			name = DefaultExploreStrategy
		}
		st, err = explore.BuiltinStrategy(name)
		if err != nil {
			return st, explore.Budget{}, &app.Error{Op: op, Kind: app.KindInvalid, Field: "strategy", Message: err.Error(),
				Hint: "one of " + strings.Join(explore.BuiltinStrategies(), ", ") + ", or a custom strategy_toml"}
		}
	}
	if err != nil {
		return st, explore.Budget{}, &app.Error{Op: op, Kind: app.KindInvalid, Field: "strategy_toml", Message: err.Error(), Err: err}
	}
	budget := explore.BudgetFor(st.Pipeline)
	if s.BudgetTOML != "" {
		if budget, err = explore.LoadBudgetTOML([]byte(s.BudgetTOML)); err != nil {
			return st, budget, &app.Error{Op: op, Kind: app.KindInvalid, Field: "budget_toml", Message: err.Error(), Err: err}
		}
	}
	return st, budget, nil
}

// SetExploreSettings enables, disables or reconfigures exploration
// tracking for a project. The strategy and budget are validated.
func (svc *Service) SetExploreSettings(ctx context.Context, in ExploreSettings) (*ExploreSettings, error) {
	const op = "explore settings"
	project, err := svc.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	in.Project = project
	if err := app.ValidText(op, "strategy_toml", in.StrategyTOML, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "budget_toml", in.BudgetTOML, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	st, _, err := strategyOf(op, in)
	if err != nil {
		return nil, err
	}
	in.Strategy = st.Name
	data, _ := json.Marshal(in)
	err = svc.env.Update(ctx, op, func(tx store.Tx) error { return tx.SetMeta(ctx, exploreSettingsKey(project), string(data)) })
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// GetExploreSettings returns a project's exploration settings (disabled by
// default).
func (svc *Service) GetExploreSettings(ctx context.Context, project string) (*ExploreSettings, error) {
	const op = "explore settings"
	project, err := svc.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var s ExploreSettings
	err = svc.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		s, err = exploreSettings(ctx, tx, project)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func exploreSettings(ctx context.Context, tx store.Tx, project string) (ExploreSettings, error) {
	s := ExploreSettings{Project: project}
	v, err := tx.GetMeta(ctx, exploreSettingsKey(project))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s, nil
	case err != nil:
		return s, err
	}
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return s, err
	}
	s.Project = project
	return s, nil
}

// ExploreInfo describes an exploration session.
type ExploreInfo struct {
	Project   string          `json:"project"`
	SessionID string          `json:"session_id"`
	Strategy  string          `json:"strategy"`
	Phase     string          `json:"phase"`
	Iteration int             `json:"iteration"`
	Done      bool            `json:"done"`
	Exit      string          `json:"exit,omitempty"`
	Metrics   explore.Metrics `json:"metrics"`
	// Timeline is the per-round history (only in ExploreState).
	Timeline  *explore.Timeline `json:"timeline,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
}

func infoOf(rec store.ExploreSession, s *explore.Session, withTimeline bool) ExploreInfo {
	t := s.Tracker()
	info := ExploreInfo{Project: rec.Project, SessionID: rec.ID, Strategy: rec.Strategy, Phase: t.Phase(),
		Iteration: t.Iteration(), Done: rec.Done, Exit: rec.Exit, Metrics: t.Metrics(),
		CreatedAt: rec.CreatedAt.UTC(), UpdatedAt: rec.UpdatedAt.UTC()}
	if withTimeline {
		tl := s.Timeline()
		info.Timeline = &tl
	}
	return info
}

// summaryOf is the exploration summary attached to the session's task.
func summaryOf(id string, s *explore.Session) *learning.ExplorationSummary {
	m := s.Tracker().Metrics()
	n := 0
	for _, c := range m.Nudges {
		n += c
	}
	return &learning.ExplorationSummary{SessionID: id, Strategy: m.Strategy, Phase: m.Phase, Rounds: m.Iteration,
		ToolCalls: m.TotalToolCalls, NewInfoRate: m.NewInfoRate, Transitions: m.Transitions, Nudges: n, Exit: string(m.Exit)}
}

// ExploreStartInput starts an exploration session.
type ExploreStartInput struct {
	Project   string `json:"project,omitempty"`
	SessionID string `json:"session_id"`
	// Strategy, StrategyTOML and BudgetTOML override the project settings.
	Strategy     string `json:"strategy,omitempty"`
	StrategyTOML string `json:"strategy_toml,omitempty"`
	BudgetTOML   string `json:"budget_toml,omitempty"`
}

// ExploreStart starts an exploration session (an existing one is returned
// unchanged: starting is idempotent).
func (svc *Service) ExploreStart(ctx context.Context, in ExploreStartInput) (*ExploreInfo, error) {
	const op = "explore start"
	project, err := svc.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "session_id", in.SessionID); err != nil {
		return nil, err
	}
	var info ExploreInfo
	err = svc.env.Update(ctx, op, func(tx store.Tx) error {
		settings, err := exploreSettings(ctx, tx, project)
		if err != nil {
			return err
		}
		// A strategy given here replaces the project's strategy and budget
		// (a budget belongs to a pipeline); a budget alone replaces the
		// budget. Overrides are validated even when the session exists.
		switch {
		case in.Strategy != "" || in.StrategyTOML != "":
			settings.Strategy, settings.StrategyTOML, settings.BudgetTOML = in.Strategy, in.StrategyTOML, in.BudgetTOML
		case in.BudgetTOML != "":
			settings.BudgetTOML = in.BudgetTOML
		}
		if in.Strategy != "" || in.StrategyTOML != "" || in.BudgetTOML != "" {
			if _, _, err := strategyOf(op, settings); err != nil {
				return err
			}
		}
		rec, s, err := svc.startSession(ctx, tx, op, project, in.SessionID, settings)
		if err != nil {
			return err
		}
		info = infoOf(rec, s, false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// startSession creates the session if it does not exist and returns it.
func (svc *Service) startSession(ctx context.Context, tx store.Tx, op, project, id string, settings ExploreSettings) (store.ExploreSession, *explore.Session, error) {
	if rec, err := tx.LockExploreSession(ctx, project, id); err == nil {
		s, err := restoreSession(rec)
		return rec, s, err
	} else if !errors.Is(err, store.ErrNotFound) {
		return rec, nil, err
	}
	st, budget, err := strategyOf(op, settings)
	if err != nil {
		return store.ExploreSession{}, nil, err
	}
	s, err := explore.NewSession(st, budget)
	if err != nil {
		return store.ExploreSession{}, nil, &app.Error{Op: op, Kind: app.KindInvalid, Field: "strategy", Message: err.Error(), Err: err}
	}
	now := svc.env.Now()
	state, err := json.Marshal(s.Snapshot())
	if err != nil {
		return store.ExploreSession{}, nil, err
	}
	rec := store.ExploreSession{Project: project, ID: id, Strategy: st.Name, State: state, CreatedAt: now, UpdatedAt: now}
	if _, err := tx.InsertExploreSession(ctx, rec); err != nil {
		return rec, nil, err
	}
	rec, err = tx.LockExploreSession(ctx, project, id)
	if err != nil {
		return rec, nil, err
	}
	s, err = restoreSession(rec)
	return rec, s, err
}

func restoreSession(rec store.ExploreSession) (*explore.Session, error) {
	var st explore.SessionState
	if err := json.Unmarshal(rec.State, &st); err != nil {
		return nil, err
	}
	return explore.RestoreSession(st)
}

// ExploreEventInput feeds events to an exploration session. Events use the
// replay schema of package explore: tick, rollback, tool_call, end_round,
// thought, text, force_terminal.
type ExploreEventInput struct {
	Project   string          `json:"project,omitempty"`
	SessionID string          `json:"session_id"`
	Events    []explore.Event `json:"events"`
	// AutoStart starts the session with the project's settings when it does
	// not exist yet; it is refused when exploration is not enabled.
	AutoStart bool `json:"auto_start,omitempty"`
	// EventID identifies the delivery (a hook event's id): events already
	// applied under this id within app.DuplicateWindow of At are not
	// applied again (the result then has no steps).
	EventID string `json:"event_id,omitempty"`
	// At is the time of the events (RFC 3339; default now): the time of a
	// tick without its own, and of the event id.
	At string `json:"at,omitempty"`
}

// ExploreEventResult is what the events produced.
type ExploreEventResult struct {
	Session ExploreInfo    `json:"session"`
	Steps   []explore.Step `json:"steps"`
	// Nudge is the one message to give the agent now, if any: the first
	// force_exit nudge, else the last nudge the events produced.
	Nudge *explore.Nudge `json:"nudge,omitempty"`
}

// ExploreEvent applies events to a session in one transaction, persists it,
// and keeps the session's task (same id, when tracked) up to date with the
// exploration summary, which its outcome will carry.
func (svc *Service) ExploreEvent(ctx context.Context, in ExploreEventInput) (*ExploreEventResult, error) {
	const op = "explore event"
	project, err := svc.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "session_id", in.SessionID); err != nil {
		return nil, err
	}
	if len(in.Events) == 0 || len(in.Events) > 1000 {
		return nil, app.Invalid(op, "events", "give between 1 and 1000 events")
	}
	// Tool arguments and output, thoughts and text are untrusted: scrubbed
	// before they are replayed into the session and stored.
	in.Events = slices.Clone(in.Events)
	app.ScrubStruct(&in.Events)
	for i := range in.Events {
		if err := in.Events[i].Validate(); err != nil {
			return nil, app.Invalid(op, fmt.Sprintf("events[%d]", i), "%v", err)
		}
	}
	if in.EventID != "" {
		if err := app.ValidID(op, "event_id", in.EventID); err != nil {
			return nil, err
		}
	}
	at, err := app.ParseTime(op, "at", in.At, svc.env.Now())
	if err != nil {
		return nil, err
	}
	var res ExploreEventResult
	err = svc.env.Update(ctx, op, func(tx store.Tx) error {
		now := svc.env.Now()
		if in.At == "" {
			at = now
		}
		if in.EventID != "" {
			fresh, err := tx.MarkEvent(ctx, project, in.EventID+"/explore", at, app.DuplicateWindow)
			if err != nil {
				return err
			}
			if !fresh {
				res.Steps, res.Nudge = []explore.Step{}, nil
				return nil
			}
		}
		var rec store.ExploreSession
		var s *explore.Session
		var err error
		if rec, err = tx.LockExploreSession(ctx, project, in.SessionID); err == nil {
			s, err = restoreSession(rec)
			if err != nil {
				return err
			}
		} else if errors.Is(err, store.ErrNotFound) && in.AutoStart {
			settings, err := exploreSettings(ctx, tx, project)
			if err != nil {
				return err
			}
			if !settings.Enabled {
				return &app.Error{Op: op, Kind: app.KindConflict, Field: "session_id",
					Message: fmt.Sprintf("exploration tracking is not enabled for project %q", project),
					Hint:    "a user enables it for the project (kaizen explore enable), or start the session explicitly", Next: "explore_start"}
			}
			if rec, s, err = svc.startSession(ctx, tx, op, project, in.SessionID, settings); err != nil {
				return err
			}
		} else if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "session_id",
				Message: fmt.Sprintf("no exploration session %q in project %q", in.SessionID, project), Hint: "start it first", Next: "explore_start"}
		} else {
			return err
		}
		res.Steps = make([]explore.Step, 0, len(in.Events))
		res.Nudge = nil
		for _, ev := range in.Events {
			if ev.Type == explore.EventTick && ev.Time.IsZero() {
				ev.Time = at
			}
			step, err := s.Apply(ev)
			if err != nil {
				return app.Invalid(op, "events", "%v", err)
			}
			res.Steps = append(res.Steps, step)
			for i := range step.Nudges {
				n := step.Nudges[i]
				if res.Nudge == nil || res.Nudge.Kind != explore.NudgeForceExit {
					res.Nudge = &n
				}
			}
		}
		if reason, done := s.Tracker().Done(); done {
			rec.Done, rec.Exit = true, string(reason)
		}
		if rec.State, err = json.Marshal(s.Snapshot()); err != nil {
			return err
		}
		rec.UpdatedAt = now
		if err := tx.UpdateExploreSession(ctx, rec); err != nil {
			return err
		}
		if t, err := tx.LockTask(ctx, project, in.SessionID); err == nil {
			t.Exploration, t.UpdatedAt = summaryOf(in.SessionID, s), now
			if err := tx.UpdateTask(ctx, t); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		res.Session = infoOf(rec, s, false)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// ExploreState returns a session with its timeline.
func (svc *Service) ExploreState(ctx context.Context, project, id string) (*ExploreInfo, error) {
	const op = "explore state"
	project, err := svc.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "session_id", id); err != nil {
		return nil, err
	}
	var info ExploreInfo
	err = svc.env.View(ctx, op, func(tx store.Tx) error {
		rec, err := tx.GetExploreSession(ctx, project, id)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "session_id", Message: fmt.Sprintf("no exploration session %q in project %q", id, project)}
		}
		if err != nil {
			return err
		}
		s, err := restoreSession(rec)
		if err != nil {
			return err
		}
		info = infoOf(rec, s, true)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// ExploreQuery selects exploration sessions.
type ExploreQuery struct {
	Project    string `json:"project,omitempty"`
	ActiveOnly bool   `json:"active_only,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	Offset     int    `json:"offset,omitempty"`
}

// ExploreList is a page of sessions, most recently updated first.
type ExploreList = app.Page[ExploreInfo]

// ListExploreSessions lists exploration sessions.
func (svc *Service) ListExploreSessions(ctx context.Context, q ExploreQuery) (*ExploreList, error) {
	const op = "list exploration sessions"
	project, err := svc.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.ExploreFilter{ActiveOnly: q.ActiveOnly, Limit: limit, Offset: q.Offset}
	out := ExploreList{Project: project, Items: []ExploreInfo{}, Limit: limit, Offset: q.Offset}
	err = svc.env.View(ctx, op, func(tx store.Tx) error {
		recs, err := tx.ListExploreSessions(ctx, project, f)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			s, err := restoreSession(rec)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, infoOf(rec, s, false))
		}
		out.Total, err = tx.CountExploreSessions(ctx, project, f)
		return err
	})
	return app.Finish(&out, err)
}

// ExploreReplay runs a recorded agent log through a strategy and returns
// the timeline (nothing is stored): for tuning strategies and budgets.
func ExploreReplay(settings ExploreSettings, events []explore.Event) (*explore.Timeline, error) {
	const op = "explore replay"
	st, budget, err := strategyOf(op, settings)
	if err != nil {
		return nil, err
	}
	tl, err := explore.Replay(st, budget, events)
	if err != nil {
		return nil, &app.Error{Op: op, Kind: app.KindInvalid, Field: "events", Message: err.Error(), Err: err}
	}
	return &tl, nil
}

// Service runs the exploration tracker's actions.
type Service struct {
	env *app.Env
}

// New returns the exploration service.
func New(env *app.Env) *Service { return &Service{env: env} }
