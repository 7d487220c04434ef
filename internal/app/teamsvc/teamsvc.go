// Package teamsvc is the team engine's service (seed 004): it persists
// teams, their task graphs with leases and fencing tokens, their message
// buses with per-recipient acknowledgement and redelivery, the coordinator
// state machine, and (runs.go) the collaboration pattern runs, calling the
// pure package team inside its transactions. The store is the source of
// truth; in-process wake-ups (and PostgreSQL's LISTEN/NOTIFY where wired)
// only shorten waits.
package teamsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// Defaults of a team's settings.
const (
	DefaultLeaseSeconds      = 60
	DefaultVisibilitySeconds = 30
	DefaultMaxAttempts       = 5
	// MaxWait bounds a long poll (inbox, claim).
	MaxWait = 5 * time.Minute
)

// Settings are a team's lease and delivery settings.
type Settings struct {
	// LeaseSeconds is the lease a claim grants and a heartbeat renews.
	LeaseSeconds int `json:"lease_seconds"`
	// VisibilitySeconds is how long a delivered, unacknowledged message
	// stays invisible before it is delivered again.
	VisibilitySeconds int `json:"visibility_seconds"`
	// MaxAttempts bounds the leases a task gets; an expiry after the last
	// fails the task (0: unlimited).
	MaxAttempts int `json:"max_attempts"`
}

func (s Settings) withDefaults() Settings {
	if s.LeaseSeconds == 0 {
		s.LeaseSeconds = DefaultLeaseSeconds
	}
	if s.VisibilitySeconds == 0 {
		s.VisibilitySeconds = DefaultVisibilitySeconds
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	return s
}

// Spent is what a team has spent against its token and cost limits.
type Spent struct {
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// doc is the stored definition of a team (store.TeamRecord.Doc).
type doc struct {
	Members     []team.Member     `json:"members"`
	Limits      team.Limits       `json:"limits"`
	Settings    Settings          `json:"settings"`
	Spent       Spent             `json:"spent"`
	Coordinator *team.Coordinator `json:"coordinator,omitempty"`
}

// TeamInput creates a team.
type TeamInput struct {
	Project  string        `json:"project,omitempty"`
	Name     string        `json:"name"`
	Members  []team.Member `json:"members"`
	Limits   team.Limits   `json:"limits,omitzero"`
	Settings Settings      `json:"settings,omitzero"`
}

// TeamInfo is a team as the surfaces show it.
type TeamInfo struct {
	Project     string                  `json:"project"`
	Name        string                  `json:"name"`
	Members     []team.Member           `json:"members"`
	Limits      team.Limits             `json:"limits"`
	Settings    Settings                `json:"settings"`
	Spent       Spent                   `json:"spent"`
	Coordinator *team.Coordinator       `json:"coordinator,omitempty"`
	Dissolved   bool                    `json:"dissolved"`
	LastSeq     int64                   `json:"last_seq"`
	Tasks       map[team.TaskStatus]int `json:"tasks"`
	CreatedAt   time.Time               `json:"created_at"`
	UpdatedAt   time.Time               `json:"updated_at"`
}

// Service is the team engine.
type Service struct {
	env *app.Env
	reg *team.Registry

	mu    sync.Mutex
	wakes map[string]chan struct{}
	// remote carries wake-ups between processes on a shared store
	// (notify.go); nil on a store only this process writes.
	remote *remote
	// beforeSleep, in tests, is called when a waiter is about to sleep.
	beforeSleep func()

	// Sweeper, when set, is told after a commit that created something to
	// wait for (a lease, a timer): the engine's job runner.
	Wake func()
	// Hooks of issue 16 (pattern runs) — see runs.go.
	runs runHooks
}

// New returns the team service.
func New(env *app.Env) *Service {
	s := &Service{env: env, reg: team.NewRegistry(), wakes: map[string]chan struct{}{}}
	if n, ok := env.Store.(store.TeamNotifier); ok {
		s.remote = &remote{n: n, ready: make(chan struct{})}
	}
	s.init16()
	return s
}

// Registry is the message type registry (user-defined types may be
// registered on it before use).
func (s *Service) Registry() *team.Registry { return s.reg }

// --- wake-ups: in-process signal per team, the table stays the truth

func wakeKey(project, name string) string { return project + "\x00" + name }

// waiter returns a channel closed at the next change of the team.
func (s *Service) waiter(project, name string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := wakeKey(project, name)
	ch, ok := s.wakes[k]
	if !ok {
		ch = make(chan struct{})
		s.wakes[k] = ch
	}
	return ch
}

// notify wakes every waiter of the team (after a commit), here and in
// the other processes sharing the store.
func (s *Service) notify(project, name string) {
	s.wake(project, name)
	s.publish(project, name)
}

// wake wakes this process's waiters of the team.
func (s *Service) wake(project, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := wakeKey(project, name)
	if ch, ok := s.wakes[k]; ok {
		close(ch)
		delete(s.wakes, k)
	}
}

// wakeAll wakes every waiter of this process (they read again).
func (s *Service) wakeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ch := range s.wakes {
		close(ch)
		delete(s.wakes, k)
	}
}

// Notify wakes this process's waiters of a team, as a change announced by
// another process does (the engine's own listener calls wake directly).
func (s *Service) Notify(project, name string) { s.wake(project, name) }

// --- untrusted text

// scrub redacts secrets from untrusted text (agent messages, task text)
// before it is stored, with the engine boundary's one redaction pass.
func scrub(text string) string { return app.Scrub(text) }

// scrubJSON redacts every string value of a JSON document (app.ScrubJSON).
func scrubJSON(raw json.RawMessage) json.RawMessage { return app.ScrubJSON(raw) }

// --- errors

// teamErr turns the pure package's errors into the engine's typed errors.
func teamErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *app.Error
	if errors.As(err, &e) {
		return err
	}
	var ve *team.ValidationError
	if errors.As(err, &ve) {
		return &app.Error{Op: op, Kind: app.KindInvalid, Field: ve.Field, Message: ve.Reason, Err: err}
	}
	switch {
	case errors.Is(err, team.ErrInvalid), errors.Is(err, team.ErrCycle), errors.Is(err, team.ErrPayload),
		errors.Is(err, team.ErrUnknownPattern), errors.Is(err, team.ErrBadEvent), errors.Is(err, team.ErrUnknownType):
		return &app.Error{Op: op, Kind: app.KindInvalid, Message: err.Error(), Err: err}
	case errors.Is(err, team.ErrUnknownTask):
		return &app.Error{Op: op, Kind: app.KindNotFound, Message: err.Error(), Err: err}
	case errors.Is(err, team.ErrStaleEpoch), errors.Is(err, team.ErrLeaseExpired), errors.Is(err, team.ErrNotHolder):
		return &app.Error{Op: op, Kind: app.KindConflict, Message: err.Error(), Err: err,
			Hint: "your lease is gone: drop this work and claim again"}
	case errors.Is(err, team.ErrLimit):
		return &app.Error{Op: op, Kind: app.KindConflict, Message: err.Error(), Err: err}
	case errors.Is(err, team.ErrTransition), errors.Is(err, team.ErrNotEligible), errors.Is(err, team.ErrNotReady),
		errors.Is(err, team.ErrDelivery), errors.Is(err, team.ErrRunFinished), errors.Is(err, team.ErrSwarmActive),
		errors.Is(err, team.ErrComposition), errors.Is(err, team.ErrCoordinator), errors.Is(err, team.ErrTimerNotDue),
		errors.Is(err, store.ErrStale):
		return &app.Error{Op: op, Kind: app.KindConflict, Message: err.Error(), Err: err}
	}
	return app.Wrap(op, err)
}

// --- teams

func (s *Service) loadTeam(ctx context.Context, tx store.Tx, op, project, name string) (store.TeamRecord, doc, error) {
	rec, err := tx.GetTeam(ctx, project, name)
	if errors.Is(err, store.ErrNotFound) {
		return rec, doc{}, &app.Error{Op: op, Kind: app.KindNotFound, Field: "team", Message: fmt.Sprintf("no team %q in project %s", name, project),
			Hint: "create it with kaizen team create", Err: err}
	}
	if err != nil {
		return rec, doc{}, err
	}
	var d doc
	if err := json.Unmarshal(rec.Doc, &d); err != nil {
		return rec, d, fmt.Errorf("decode team %s: %w", name, err)
	}
	d.Settings = d.Settings.withDefaults()
	return rec, d, nil
}

func (s *Service) activeTeam(ctx context.Context, tx store.Tx, op, project, name string) (store.TeamRecord, doc, error) {
	rec, d, err := s.loadTeam(ctx, tx, op, project, name)
	if err == nil && rec.Dissolved {
		err = &app.Error{Op: op, Kind: app.KindConflict, Field: "team", Message: fmt.Sprintf("team %q is dissolved", name)}
	}
	return rec, d, err
}

func saveDoc(ctx context.Context, tx store.Tx, rec store.TeamRecord, d doc, now time.Time) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	rec.Doc, rec.UpdatedAt = raw, now
	return tx.UpdateTeam(ctx, rec)
}

func info(rec store.TeamRecord, d doc, counts map[team.TaskStatus]int) *TeamInfo {
	if counts == nil {
		counts = map[team.TaskStatus]int{}
	}
	return &TeamInfo{Project: rec.Project, Name: rec.Name, Members: d.Members, Limits: d.Limits, Settings: d.Settings,
		Spent: d.Spent, Coordinator: d.Coordinator, Dissolved: rec.Dissolved, LastSeq: rec.LastSeq, Tasks: counts,
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
}

func (s *Service) event(ctx context.Context, tx store.Tx, project, name string, now time.Time, kind, subject, from, to, cause string, data any) error {
	var raw json.RawMessage
	if data != nil {
		raw, _ = json.Marshal(data)
	}
	_, err := tx.InsertTeamEvent(ctx, store.TeamEvent{Project: project, Team: name, At: now, Kind: kind, Subject: subject,
		From: from, To: to, Cause: cause, Data: raw})
	return err
}

// CreateTeam creates a team with its members.
func (s *Service) CreateTeam(ctx context.Context, in TeamInput) (*TeamInfo, error) {
	const op = "create team"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	t := team.Team{Name: in.Name, Members: in.Members}
	if err := team.ValidateTeam(t); err != nil {
		return nil, teamErr(op, err)
	}
	if in.Settings.LeaseSeconds < 0 || in.Settings.VisibilitySeconds < 0 || in.Settings.MaxAttempts < 0 ||
		in.Settings.LeaseSeconds > 86400 || in.Settings.VisibilitySeconds > 86400 {
		return nil, app.Invalid(op, "settings", "lease and visibility are 0 (default) to 86400 seconds, max_attempts ≥ 0")
	}
	if err := team.CheckLimits(in.Limits, team.Usage{}, team.Request{}); err != nil || in.Limits.ConcurrentCommandWorkers < 0 ||
		in.Limits.RunsPerHour < 0 || in.Limits.Tokens < 0 || in.Limits.Cost < 0 {
		return nil, app.Invalid(op, "limits", "limits are non-negative (0: unlimited)")
	}
	d := doc{Members: in.Members, Limits: in.Limits, Settings: in.Settings.withDefaults()}
	if d.Members == nil {
		d.Members = []team.Member{}
	}
	raw, _ := json.Marshal(d)
	now := s.env.Now()
	rec := store.TeamRecord{Project: project, Name: in.Name, Doc: raw, CreatedAt: now, UpdatedAt: now}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		ok, err := tx.InsertTeam(ctx, rec)
		if err != nil {
			return err
		}
		if !ok {
			return &app.Error{Op: op, Kind: app.KindConflict, Field: "name", Message: fmt.Sprintf("team %q exists in project %s", in.Name, project),
				Hint: "pick another name (dissolved teams keep theirs)"}
		}
		return s.event(ctx, tx, project, in.Name, now, "team", in.Name, "", "active", "created", nil)
	})
	if err != nil {
		return nil, err
	}
	return info(rec, d, nil), nil
}

// GetTeam returns a team with its task counts.
func (s *Service) GetTeam(ctx context.Context, project, name string) (*TeamInfo, error) {
	const op = "show team"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var out *TeamInfo
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		rec, d, err := s.loadTeam(ctx, tx, op, project, name)
		if err != nil {
			return err
		}
		tasks, err := tx.ListTeamTasks(ctx, project, name, store.TeamTaskFilter{})
		if err != nil {
			return err
		}
		counts := map[team.TaskStatus]int{}
		for _, t := range tasks {
			counts[t.Status]++
		}
		out = info(rec, d, counts)
		return nil
	})
	return out, err
}

// ListTeams lists a project's teams (dissolved ones when all).
func (s *Service) ListTeams(ctx context.Context, project string, all bool) ([]TeamInfo, error) {
	const op = "list teams"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	out := []TeamInfo{}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		recs, err := tx.ListTeams(ctx, project, all)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			var d doc
			if err := json.Unmarshal(rec.Doc, &d); err != nil {
				return fmt.Errorf("decode team %s: %w", rec.Name, err)
			}
			out = append(out, *info(rec, d, nil))
		}
		return nil
	})
	return out, err
}

// DissolveTeam dissolves a team: its open tasks are cancelled, its bus and
// history are kept for reading.
func (s *Service) DissolveTeam(ctx context.Context, project, name string) (*TeamInfo, error) {
	const op = "dissolve team"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	var out *TeamInfo
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		rec, d, err := s.activeTeam(ctx, tx, op, project, name)
		if err != nil {
			return err
		}
		tasks, err := tx.ListTeamTasks(ctx, project, name, store.TeamTaskFilter{})
		if err != nil {
			return err
		}
		counts := map[team.TaskStatus]int{}
		for _, t := range tasks {
			if !t.Status.Terminal() {
				nt, err := team.Transition(t, team.StatusCancelled, now)
				if err != nil {
					return err
				}
				if err := s.putTask(ctx, tx, project, t, nt, "team dissolved"); err != nil {
					return err
				}
				t = nt
			}
			counts[t.Status]++
		}
		rec.Dissolved = true
		if err := saveDoc(ctx, tx, rec, d, now); err != nil {
			return err
		}
		rec.UpdatedAt = now
		out = info(rec, d, counts)
		return s.event(ctx, tx, project, name, now, "team", name, "active", "dissolved", "dissolved", nil)
	})
	if err == nil {
		s.notify(project, name)
	}
	return out, err
}

// --- coordinator

// CoordinatorInput moves a team's coordinator state machine.
type CoordinatorInput struct {
	Project string                  `json:"project,omitempty"`
	Team    string                  `json:"team"`
	Event   team.CoordinatorEvent   `json:"event"`
	Start   *CoordinatorStartConfig `json:"start,omitempty"`
}

// CoordinatorStartConfig starts the coordinator for a new requirement
// with the seed's pattern selection.
type CoordinatorStartConfig struct {
	TaskType   string `json:"task_type"`
	Complexity string `json:"complexity"`
	RiskLevel  string `json:"risk_level"`
	HasExpert  bool   `json:"has_expert"`
}

// Coordinate applies one event to the team's coordinator (PLAN → EXECUTE →
// VALIDATE → DONE with the blocked branch), starting it at PLAN on a
// new_requirement event; every transition is recorded with its cause.
func (s *Service) Coordinate(ctx context.Context, in CoordinatorInput) (*team.Coordinator, error) {
	const op = "coordinate"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "event.cause", in.Event.Cause, 2000, false); err != nil {
		return nil, err
	}
	in.Event.Cause = scrub(in.Event.Cause)
	now := s.env.Now()
	var out team.Coordinator
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		rec, d, err := s.activeTeam(ctx, tx, op, project, in.Team)
		if err != nil {
			return err
		}
		var tr team.CoordinatorTransition
		if in.Event.Kind == team.CoordNewRequirement && (d.Coordinator == nil || d.Coordinator.State == team.CoordDone) {
			st := in.Start
			if st == nil {
				st = &CoordinatorStartConfig{}
			}
			c := team.NewCoordinator(team.SelectPatterns(st.TaskType, st.Complexity, st.RiskLevel, len(d.Members), st.HasExpert), in.Event.Cause, now)
			d.Coordinator = &c
			tr = c.Transitions[len(c.Transitions)-1]
		} else {
			if d.Coordinator == nil {
				return app.Invalid(op, "event.kind", "the coordinator has not started: send new_requirement first")
			}
			c, t, err := team.CoordinatorStep(*d.Coordinator, in.Event, now)
			if err != nil {
				return teamErr(op, err)
			}
			d.Coordinator, tr = &c, t
		}
		out = *d.Coordinator
		if err := saveDoc(ctx, tx, rec, d, now); err != nil {
			return err
		}
		return s.event(ctx, tx, project, in.Team, now, "coordinator", "coordinator", tr.From, tr.To, string(tr.Event)+": "+tr.Cause, tr)
	})
	return &out, err
}

// Events returns a team's recorded transitions.
func (s *Service) Events(ctx context.Context, project, name, subject string, after int64, limit int) ([]store.TeamEvent, error) {
	const op = "team events"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if limit, err = app.PageLimit(op, limit, 0); err != nil {
		return nil, err
	}
	var out []store.TeamEvent
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		out, err = tx.ListTeamEvents(ctx, project, name, subject, after, limit)
		return err
	})
	return out, err
}
