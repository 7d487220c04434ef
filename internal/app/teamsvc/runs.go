package teamsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// Collaboration pattern runs (issue 16): a run is a team.Run persisted as
// JSON with a log of the events it handled. It advances only on bus
// messages, changes of the tasks it created, timers (durable jobs of the
// job runner) and user replies, each handled in the transaction that
// caused it; a restart loses nothing because the run, its tasks and its
// timer jobs are rows.

// Job kinds of the team engine.
const (
	TimerJobKind   = "team.timer"
	OutcomeJobKind = "team.outcome"
)

// StartRunInput starts a collaboration pattern run.
type StartRunInput struct {
	Project string          `json:"project,omitempty"`
	Team    string          `json:"team"`
	Pattern team.PatternID  `json:"pattern"`
	Input   json.RawMessage `json:"input,omitempty"`
	// Config overrides the seed's defaults (every pattern's numbers).
	Config *team.Config `json:"config,omitempty"`
	// Subject names the work (recorded with the run's outcome).
	Subject string `json:"subject,omitempty"`
	// compose: the composition the run is a step of (StartComposition).
	compose *team.Composed
}

// RunInfo is a run as the surfaces show it.
type RunInfo struct {
	Project  string   `json:"project"`
	Run      team.Run `json:"run"`
	Name     string   `json:"name"`
	Finished bool     `json:"finished"`
	// Diagram is the pattern's state diagram; Mermaid is it as Mermaid
	// text with the current state highlighted.
	Diagram *team.Diagram `json:"diagram,omitempty"`
	Mermaid string        `json:"mermaid,omitempty"`
	Events  []RunStep     `json:"events,omitempty"`
}

// RunStep is one persisted event of a run.
type RunStep = store.RunEvent

// runCtxKey carries the queue of run events of one transaction.
type runCtxKey struct{}

type queued struct {
	runID string
	ev    team.Event
}

type runQueue struct {
	events []queued
	// after are effects to enqueue as jobs (outcomes) in the same tx.
	now time.Time
}

func (s *Service) init16() {
	s.runs.onTask = s.runOnTask
	s.runs.onMessage = s.runOnMessage
}

func (s *Service) queueOf(ctx context.Context) *runQueue {
	q, _ := ctx.Value(runCtxKey{}).(*runQueue)
	return q
}

// dispatch queues ev for the run; outside a run's own processing it
// drains the queue at once (in the caller's transaction).
func (s *Service) dispatch(ctx context.Context, tx store.Tx, project string, runID string, ev team.Event) error {
	if q := s.queueOf(ctx); q != nil {
		q.events = append(q.events, queued{runID, ev})
		return nil
	}
	q := &runQueue{now: s.env.Now(), events: []queued{{runID, ev}}}
	return s.drain(context.WithValue(ctx, runCtxKey{}, q), tx, project, q)
}

func (s *Service) drain(ctx context.Context, tx store.Tx, project string, q *runQueue) error {
	for i := 0; len(q.events) > 0; i++ {
		if i > 10000 {
			return fmt.Errorf("pattern runs: more than 10000 events in one transaction")
		}
		e := q.events[0]
		q.events = q.events[1:]
		if err := s.stepRun(ctx, tx, project, e.runID, e.ev, q.now); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) runOnTask(ctx context.Context, tx store.Tx, project string, t team.Task, cause string) error {
	ch := &team.TaskChange{Status: t.Status, Result: t.Result, By: t.Lease.Holder}
	if t.Status == team.StatusFailed {
		ch.Error = cause
	}
	return s.dispatch(ctx, tx, project, t.RunID, team.Event{Kind: team.EventTask, TaskKey: t.RunKey, Task: ch})
}

func (s *Service) runOnMessage(ctx context.Context, tx store.Tx, project string, m team.Message) error {
	if strings.HasPrefix(m.From, "run:") {
		return nil // a run's own messages are for the members
	}
	runs, err := tx.ListTeamRuns(ctx, project, store.TeamRunFilter{Team: m.Team, ActiveOnly: true})
	if err != nil {
		return err
	}
	var key, owner string
	if m.Task != "" {
		if t, err := tx.GetTeamTask(ctx, project, m.Team, m.Task); err == nil {
			key, owner = t.RunKey, t.RunID
		}
	}
	for _, r := range runs {
		ev := team.Event{Kind: team.EventMessage, Message: &m}
		if owner == r.ID {
			ev.TaskKey = key
		}
		if err := s.dispatch(ctx, tx, project, r.ID, ev); err != nil {
			return err
		}
	}
	return nil
}

func decodeRun(r store.TeamRun) (team.Run, error) {
	var run team.Run
	if err := json.Unmarshal(r.Run, &run); err != nil {
		return run, fmt.Errorf("%w: run %s: %v", team.ErrBadRun, r.ID, err)
	}
	return run, nil
}

func runRecord(project string, run team.Run, subject string) store.TeamRun {
	raw, _ := json.Marshal(run)
	return store.TeamRun{Project: project, ID: run.ID, Team: run.Team, Pattern: string(run.Pattern), ParentID: run.ParentID,
		State: run.State, Finished: run.Finished(), Run: raw, CreatedAt: run.StartedAt, UpdatedAt: run.UpdatedAt}
}

// stepRun loads a run, applies one event, executes its commands and saves it.
func (s *Service) stepRun(ctx context.Context, tx store.Tx, project, runID string, ev team.Event, now time.Time) error {
	rec, err := tx.LockTeamRun(ctx, project, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if rec.Finished {
		return nil
	}
	run, err := decodeRun(rec)
	if err != nil {
		return err
	}
	nr, cmds, err := team.Step(run, ev, now)
	if errors.Is(err, team.ErrTimerNotDue) {
		return err
	}
	if err != nil {
		s.env.Logger.Warn("pattern run event refused", "run", runID, "err", err)
		return nil // a malformed event does not undo the work that caused it
	}
	if len(cmds) == 0 && string(mustJSON(nr)) == string(mustJSON(run)) {
		return nil // a duplicate or stale event changes nothing
	}
	return s.saveStep(ctx, tx, project, rec, nr, ev, cmds, now)
}

func (s *Service) saveStep(ctx context.Context, tx store.Tx, project string, rec store.TeamRun, run team.Run, ev any, cmds []team.Command, now time.Time) error {
	evRaw, _ := json.Marshal(ev)
	cmdRaw, _ := json.Marshal(cmds)
	if _, err := tx.AppendRunEvent(ctx, project, run.ID, store.RunEvent{At: now, Event: evRaw, Commands: cmdRaw, State: run.State}); err != nil {
		return err
	}
	// Save before executing: commands may start children or step the
	// parent, which read the run.
	nrec := runRecord(project, run, "")
	nrec.CreatedAt = rec.CreatedAt
	if err := tx.UpdateTeamRun(ctx, nrec); err != nil {
		return err
	}
	return s.exec(ctx, tx, project, run, cmds, now)
}

func taskID(runID, key string) string { return runID + "." + key }

func sender(runID string) string {
	name := "run:" + runID
	if len(name) > team.MaxNameLen {
		name = name[:team.MaxNameLen]
	}
	return name
}

// exec carries out a step's commands in tx.
func (s *Service) exec(ctx context.Context, tx store.Tx, project string, run team.Run, cmds []team.Command, now time.Time) error {
	var lessons []team.Learning
	for i, c := range cmds {
		switch c.Kind {
		case team.CmdCreateTask:
			sp := c.Task
			if sp == nil {
				continue
			}
			var deps []string
			for _, d := range sp.BlockedBy {
				deps = append(deps, taskID(run.ID, d))
			}
			t := team.Task{ID: taskID(run.ID, c.Key), Team: run.Team, Subject: scrub(sp.Subject), Description: scrub(sp.Description),
				Owner: sp.Owner, Role: sp.Role, Capabilities: sp.Capabilities, BlockedBy: deps, Status: team.StatusPending,
				Metadata: sp.Metadata, Gate: sp.Gate, RunID: run.ID, RunKey: c.Key, CreatedAt: now, UpdatedAt: now}
			if err := team.ValidateTask(t); err != nil {
				return teamErr("pattern run "+run.ID, err)
			}
			if _, err := tx.InsertTeamTask(ctx, project, t); err != nil {
				return err
			}
			if err := s.event(ctx, tx, project, run.Team, now, "task", t.ID, "", string(t.Status), "created by run "+run.ID+" ("+string(run.Pattern)+")", nil); err != nil {
				return err
			}
		case team.CmdCancelTask, team.CmdPauseTask, team.CmdResumeTask, team.CmdUpdateTask:
			id := c.TaskID
			if id == "" {
				id = taskID(run.ID, c.Key)
			}
			t, err := tx.GetTeamTask(ctx, project, run.Team, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			nt := t
			switch c.Kind {
			case team.CmdCancelTask:
				if t.Status.Terminal() {
					continue
				}
				if nt, err = team.Transition(t, team.StatusCancelled, now); err != nil {
					continue
				}
			case team.CmdPauseTask:
				nt.Paused = true
			case team.CmdResumeTask:
				nt.Paused = false
			case team.CmdUpdateTask:
				if sp := c.Task; sp != nil {
					if sp.Description != "" {
						nt.Description = scrub(sp.Description)
					}
					if sp.Subject != "" {
						nt.Subject = scrub(sp.Subject)
					}
				}
				if t.Status == team.StatusFailed || t.Status == team.StatusBlocked {
					if x, err := team.Transition(nt, team.StatusPending, now); err == nil {
						nt = x
					}
				}
			}
			nt.UpdatedAt = now
			reason := c.Reason
			if reason == "" {
				reason = string(c.Kind) + " by run " + run.ID
			}
			if err := s.putTask(ctx, tx, project, t, nt, reason); err != nil {
				return err
			}
		case team.CmdSendMessage:
			om := c.Message
			if om == nil {
				continue
			}
			m := team.Message{Team: run.Team, From: sender(run.ID), To: om.To, Type: om.Type, Summary: om.Summary, Data: om.Data, CreatedAt: now}
			_, d, err := s.loadTeam(ctx, tx, "pattern run", project, run.Team)
			if err != nil {
				return err
			}
			rcpt, err := team.Recipients(team.Team{Name: run.Team, Members: d.Members}, m.From, m.To)
			if err != nil {
				rcpt = nil // kept on the timeline; nobody of that address in the team
			}
			if _, err := tx.AppendTeamMessage(ctx, project, m, rcpt); err != nil {
				return err
			}
		case team.CmdSetTimer:
			if _, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: TimerJobKind, RunAt: c.At, MaxAttempts: 20,
				Args:      timerArgs{Project: project, Run: run.ID, Timer: c.Key, At: c.At},
				UniqueKey: fmt.Sprintf("team-timer/%s/%s/%s/%d", project, run.ID, c.Key, c.At.UnixMicro())}); err != nil {
				return err
			}
		case team.CmdCancelTimer:
			// A cancelled timer's job still fires and is recognised as stale.
		case team.CmdStartRun:
			if c.Child == nil {
				continue
			}
			if _, err := s.startRun(ctx, tx, project, StartRunInput{Team: run.Team, Pattern: c.Child.Pattern, Input: c.Child.Input},
				run.ID, c.Key, run.Pattern, now); err != nil {
				// A refused child (composition rules, a swarm already
				// active) is a child that failed: the parent's fallback
				// decides.
				var ae *app.Error
				if !errors.As(err, &ae) || ae.Kind == app.KindInternal {
					return err
				}
				q := s.queueOf(ctx)
				ev := team.Event{Kind: team.EventChild, Child: &team.ChildResult{Key: c.Key, Outcome: team.Outcome{Pattern: c.Child.Pattern,
					Status: team.OutcomeFailed, Summary: "refused: " + ae.Message, StartedAt: now, FinishedAt: now}}}
				if q != nil {
					q.events = append(q.events, queued{run.ID, ev})
				}
			}
		case team.CmdCancelRun:
			children, err := tx.ListTeamRuns(ctx, project, store.TeamRunFilter{ParentID: run.ID, ActiveOnly: true})
			if err != nil {
				return err
			}
			for _, ch := range children {
				cr, err := decodeRun(ch)
				if err != nil || cr.ParentKey != c.Key {
					continue
				}
				if err := s.cancelRun(ctx, tx, project, ch, c.Reason, now); err != nil {
					return err
				}
			}
		case team.CmdAskUser:
			if err := s.event(ctx, tx, project, run.Team, now, "run", run.ID, run.State, run.State, "question for the user: "+c.Key, c.Ask); err != nil {
				return err
			}
		case team.CmdRecordDecision:
			if err := s.event(ctx, tx, project, run.Team, now, "decision", run.ID, "", "", "team decision by run "+run.ID, c.Decision); err != nil {
				return err
			}
		case team.CmdRecordPattern:
			if c.Learning == nil {
				continue
			}
			if err := s.enqueueLearning(ctx, tx, project, run, c, i, now); err != nil {
				return err
			}
		case team.CmdRecordHeuristic:
			if c.Learning != nil {
				lessons = append(lessons, *c.Learning)
			}
		case team.CmdFinishRun:
			if err := s.finished(ctx, tx, project, run, now); err != nil {
				return err
			}
		}
	}
	return s.enqueueLessons(ctx, tx, project, run, lessons, now)
}

type timerArgs struct {
	Project string    `json:"project"`
	Run     string    `json:"run"`
	Timer   string    `json:"timer"`
	At      time.Time `json:"at"`
}

// OutcomeArgs is an outcome for the learning system, recorded by a job
// after the run's transaction committed.
type OutcomeArgs struct {
	Project    string   `json:"project"`
	ID         string   `json:"id"`
	Success    bool     `json:"success"`
	DurationMs int64    `json:"duration_ms"`
	Errors     int      `json:"errors"`
	Retries    int      `json:"retries"`
	Strategy   string   `json:"strategy"`
	Patterns   []string `json:"patterns"`
	Task       string   `json:"task"`
	Tags       []string `json:"tags"`
	Failure    string   `json:"failure,omitempty"`
}

// CollaborationPattern is how a pattern's use is named in the learning
// system: plan guidance shows it among the strategies that worked.
func CollaborationPattern(p team.PatternID) string {
	return "Collaboration pattern " + string(p) + " " + p.Name()
}

// finished records a finished run's outcome for the learning system and
// tells its parent.
func (s *Service) finished(ctx context.Context, tx store.Tx, project string, run team.Run, now time.Time) error {
	o := run.Outcome
	if o == nil {
		return nil
	}
	args := OutcomeArgs{Project: project, ID: "teamrun-" + run.ID, Success: o.Success, DurationMs: max(o.DurationMs, 0),
		Errors: o.Errors, Retries: o.Retries, Strategy: CollaborationPattern(run.Pattern), Patterns: []string{CollaborationPattern(run.Pattern)},
		Task: fmt.Sprintf("%s run of team %s: %s", run.Pattern, run.Team, o.Summary), Tags: []string{"team-run", string(run.Pattern), string(o.Status)}}
	if !o.Success {
		args.Failure = o.Summary
	}
	if _, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: OutcomeJobKind, Args: args, UniqueKey: "team-outcome/" + project + "/" + run.ID}); err != nil {
		return err
	}
	if err := s.event(ctx, tx, project, run.Team, now, "run", run.ID, "", run.State, fmt.Sprintf("%s finished %s: %s", run.Pattern, o.Status, o.Summary), o); err != nil {
		return err
	}
	if run.ParentID != "" {
		ev := team.Event{Kind: team.EventChild, Child: &team.ChildResult{Key: run.ParentKey, RunID: run.ID, Outcome: *o}}
		return s.dispatch(ctx, tx, project, run.ParentID, ev)
	}
	return s.nextStep(ctx, tx, project, run, now)
}

// enqueueLearning records a reusable pattern (of a post-mortem, or a
// solution found at CP-5's L1) in the learning system as a pattern
// observation: an outcome of its own whose pattern is the content and
// whose success is the outcome of the work it was seen in.
//
// The outcome's id names the decision and the command's index among the
// decision's commands: a post-mortem that records several patterns (or
// heuristics) at once gives each its own outcome, and a replayed event
// produces the same ids.
func (s *Service) enqueueLearning(ctx context.Context, tx store.Tx, project string, run team.Run, c team.Command, index int, now time.Time) error {
	l := c.Learning
	content := clip(strings.TrimSpace(scrub(l.Content)), 1000)
	if content == "" {
		return nil
	}
	n := len(run.Decisions)
	args := OutcomeArgs{Project: project, ID: fmt.Sprintf("teamrun-%s-learn-%d-%d-%s", run.ID, n, index, strings.TrimPrefix(string(c.Kind), "record_")),
		Success: l.Success, Strategy: content, Patterns: []string{content}, Task: clip(scrub(l.Context), 1000),
		Tags: []string{"team-run", "post-mortem", string(run.Pattern)}}
	_, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: OutcomeJobKind, Args: args, UniqueKey: "team-outcome/" + project + "/" + args.ID + "/" + content})
	return err
}

// startRun starts a run in tx (a child when parentID is set).
func (s *Service) startRun(ctx context.Context, tx store.Tx, project string, in StartRunInput, parentID, parentKey string, parentPattern team.PatternID, now time.Time) (team.Run, error) {
	const op = "start pattern run"
	if !in.Pattern.Valid() {
		return team.Run{}, app.Invalid(op, "pattern", "%q is not CP-1 … CP-10", in.Pattern)
	}
	if _, _, err := s.activeTeam(ctx, tx, op, project, in.Team); err != nil {
		return team.Run{}, err
	}
	active, err := tx.ListTeamRuns(ctx, project, store.TeamRunFilter{Team: in.Team, ActiveOnly: true})
	if err != nil {
		return team.Run{}, err
	}
	var act []team.ActiveRun
	for _, r := range active {
		act = append(act, team.ActiveRun{ID: r.ID, Pattern: team.PatternID(r.Pattern), Team: r.Team})
	}
	var tasks []team.Task
	if in.Pattern == team.CP10 {
		all, err := tx.ListTeamTasks(ctx, project, in.Team, store.TeamTaskFilter{})
		if err != nil {
			return team.Run{}, err
		}
		for _, t := range all {
			// The post-mortem's parent's own tasks do not keep it waiting.
			if parentID == "" || t.RunID != parentID {
				tasks = append(tasks, t)
			}
		}
	}
	if err := team.CheckStart(in.Pattern, parentPattern, in.Team, act, tasks); err != nil {
		return team.Run{}, teamErr(op, err)
	}
	cfg := team.DefaultConfig()
	if in.Config != nil {
		cfg = *in.Config
	}
	input := in.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	if in.Pattern == team.CP7 {
		if input, err = s.swarmInput(ctx, tx, project, in.Team, input); err != nil {
			return team.Run{}, err
		}
	}
	if in.Pattern == team.CP10 {
		if input, err = s.postMortemInput(ctx, tx, project, in.Team, in.Subject, input, tasks); err != nil {
			return team.Run{}, err
		}
	}
	spec := team.RunSpec{ID: app.NewID("run-"), Pattern: in.Pattern, Team: in.Team, ParentID: parentID, ParentKey: parentKey, Config: cfg, Input: input, Compose: in.compose}
	run, cmds, err := team.Start(spec, now)
	if err != nil {
		return team.Run{}, teamErr(op, err)
	}
	rec := runRecord(project, run, in.Subject)
	ok, err := tx.InsertTeamRun(ctx, rec)
	if err != nil {
		return run, err
	}
	if !ok {
		return run, teamErr(op, fmt.Errorf("%w: team %s (another daemon started one)", team.ErrSwarmActive, in.Team))
	}
	if err := s.event(ctx, tx, project, in.Team, now, "run", run.ID, "", run.State, "started "+string(in.Pattern)+" "+in.Pattern.Name(), nil); err != nil {
		return run, err
	}
	if _, err := tx.AppendRunEvent(ctx, project, run.ID, store.RunEvent{At: now, Event: mustJSON(map[string]any{"kind": "start", "input": json.RawMessage(input)}),
		Commands: mustJSON(cmds), State: run.State}); err != nil {
		return run, err
	}
	if err := s.exec(ctx, tx, project, run, cmds, now); err != nil {
		return run, err
	}
	return run, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func (s *Service) cancelRun(ctx context.Context, tx store.Tx, project string, rec store.TeamRun, reason string, now time.Time) error {
	run, err := decodeRun(rec)
	if err != nil {
		return err
	}
	nr, cmds, err := team.Cancel(run, reason, now)
	if err != nil {
		return teamErr("cancel run", err)
	}
	return s.saveStep(ctx, tx, project, rec, nr, map[string]string{"kind": "cancel", "reason": reason}, cmds, now)
}

func (s *Service) inRunTx(ctx context.Context, op string, fn func(ctx context.Context, tx store.Tx, q *runQueue) error) error {
	return s.env.Update(ctx, op, func(tx store.Tx) error {
		q := &runQueue{now: s.env.Now()}
		rctx := context.WithValue(ctx, runCtxKey{}, q)
		return fn(rctx, tx, q) // fn drains the queue in its project
	})
}

// StartRun starts a collaboration pattern run on a team after the
// composition rules (CP-7 not re-entrant, CP-10 after the team's tasks
// ended); its first tasks, messages and timers are created with it.
func (s *Service) StartRun(ctx context.Context, in StartRunInput) (*RunInfo, error) {
	const op = "start pattern run"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "subject", in.Subject, 1000, false); err != nil {
		return nil, err
	}
	if len(in.Input) > 0 && !json.Valid(in.Input) {
		return nil, app.Invalid(op, "input", "not valid JSON")
	}
	in.Input = scrubJSON(in.Input)
	var id string
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		q := &runQueue{now: s.env.Now()}
		rctx := context.WithValue(ctx, runCtxKey{}, q)
		run, err := s.startRun(rctx, tx, project, in, "", "", "", q.now)
		if err != nil {
			return err
		}
		id = run.ID
		return s.drain(rctx, tx, project, q)
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.afterRuns(project, in.Team)
	return s.GetRun(ctx, project, id)
}

func (s *Service) afterRuns(project, name string) {
	s.notify(project, name)
	if s.Wake != nil {
		s.Wake()
	}
}

// GetRun returns a run with its state diagram and event log.
func (s *Service) GetRun(ctx context.Context, project, id string) (*RunInfo, error) {
	const op = "show pattern run"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var out RunInfo
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		rec, err := tx.GetTeamRun(ctx, project, id)
		if err != nil {
			return err
		}
		run, err := decodeRun(rec)
		if err != nil {
			return err
		}
		evs, err := tx.ListRunEvents(ctx, project, id)
		if err != nil {
			return err
		}
		out = RunInfo{Project: project, Run: run, Name: run.Pattern.Name(), Finished: rec.Finished, Events: evs}
		if d, ok := team.DiagramFor(run.Pattern); ok {
			out.Diagram, out.Mermaid = &d, Mermaid(d, run.State)
		}
		return nil
	})
	return &out, err
}

// RunQuery lists runs.
type RunQuery struct {
	Project    string `json:"project,omitempty"`
	Team       string `json:"team,omitempty"`
	Pattern    string `json:"pattern,omitempty"`
	ActiveOnly bool   `json:"active_only,omitempty"`
	Limit      int    `json:"limit,omitempty"`
}

// RunSummary is one line of a run listing.
type RunSummary struct {
	ID        string              `json:"id"`
	Team      string              `json:"team"`
	Pattern   team.PatternID      `json:"pattern"`
	ParentID  string              `json:"parent_id,omitempty"`
	State     string              `json:"state"`
	Iteration int                 `json:"iteration"`
	Max       int                 `json:"max_iterations"`
	Finished  bool                `json:"finished"`
	Outcome   *team.OutcomeStatus `json:"outcome,omitempty"`
	StartedAt time.Time           `json:"started_at"`
	UpdatedAt time.Time           `json:"updated_at"`
}

// ListRuns lists a project's pattern runs, oldest first.
func (s *Service) ListRuns(ctx context.Context, q RunQuery) ([]RunSummary, error) {
	const op = "list pattern runs"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	limit, err := app.PageLimit(op, q.Limit, 0)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, v string }{{"team", q.Team}, {"pattern", q.Pattern}} {
		if err := app.ValidText(op, f.name, f.v, app.MaxIDLen, false); err != nil {
			return nil, err
		}
	}
	out := []RunSummary{}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		recs, err := tx.ListTeamRuns(ctx, project, store.TeamRunFilter{Team: q.Team, Pattern: q.Pattern, ActiveOnly: q.ActiveOnly, Limit: limit})
		if err != nil {
			return err
		}
		for _, r := range recs {
			run, err := decodeRun(r)
			if err != nil {
				return err
			}
			rs := RunSummary{ID: r.ID, Team: r.Team, Pattern: run.Pattern, ParentID: r.ParentID, State: run.State, Iteration: run.Iteration,
				Max: run.MaxIterations, Finished: r.Finished, StartedAt: run.StartedAt, UpdatedAt: run.UpdatedAt}
			if run.Outcome != nil {
				st := run.Outcome.Status
				rs.Outcome = &st
			}
			out = append(out, rs)
		}
		return nil
	})
	return out, err
}

// CancelRun ends a run from outside: its open tasks, timers and children
// are cancelled and its outcome is failed.
func (s *Service) CancelRun(ctx context.Context, project, id, reason string) (*RunInfo, error) {
	const op = "cancel pattern run"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		reason = "cancelled by the user"
	}
	var teamName string
	err = s.inRunTx(ctx, op, func(ctx context.Context, tx store.Tx, q *runQueue) error {
		rec, err := tx.LockTeamRun(ctx, project, id)
		if err != nil {
			return err
		}
		if rec.Finished {
			return &app.Error{Op: op, Kind: app.KindConflict, Message: "run " + id + " has finished"}
		}
		teamName = rec.Team
		return s.cancelRun(ctx, tx, project, rec, scrub(reason), q.now)
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.afterRuns(project, teamName)
	return s.GetRun(ctx, project, id)
}

// ReplyInput answers a question a run asked the user.
type ReplyInput struct {
	Project string          `json:"project,omitempty"`
	Run     string          `json:"run"`
	Key     string          `json:"key"`
	Choice  string          `json:"choice,omitempty"`
	Text    string          `json:"text,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Reply delivers the user's answer to a run's question.
func (s *Service) Reply(ctx context.Context, in ReplyInput) (*RunInfo, error) {
	const op = "reply to pattern run"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "text", in.Text, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	var teamName string
	err = s.inRunTx(ctx, op, func(ctx context.Context, tx store.Tx, q *runQueue) error {
		rec, err := tx.GetTeamRun(ctx, project, in.Run)
		if err != nil {
			return err
		}
		run, err := decodeRun(rec)
		if err != nil {
			return err
		}
		if _, ok := run.Asks[in.Key]; !ok {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "key", Message: fmt.Sprintf("run %s has no open question %q", in.Run, in.Key)}
		}
		teamName = rec.Team
		q.events = append(q.events, queued{in.Run, team.Event{Kind: team.EventUser, Reply: &team.UserReply{Key: in.Key, Choice: in.Choice,
			Text: scrub(in.Text), Data: scrubJSON(in.Data)}}})
		return s.drain(ctx, tx, project, q)
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.afterRuns(project, teamName)
	return s.GetRun(ctx, project, in.Run)
}

// TimerJob is the job kind that fires pattern run timers.
func (s *Service) TimerJob() jobs.Kind {
	return jobs.Kind{Name: TimerJobKind, MaxAttempts: 20, Handler: func(ctx context.Context, j jobs.Job) error {
		var a timerArgs
		if err := j.Decode(&a); err != nil {
			return err
		}
		var teamName string
		err := s.inRunTx(ctx, "pattern run timer", func(ctx context.Context, tx store.Tx, q *runQueue) error {
			rec, err := tx.GetTeamRun(ctx, a.Project, a.Run)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			teamName = rec.Team
			q.events = append(q.events, queued{a.Run, team.Event{Kind: team.EventTimer, Timer: a.Timer, TimerAt: a.At}})
			return s.drain(ctx, tx, a.Project, q)
		})
		if err == nil && teamName != "" {
			s.afterRuns(a.Project, teamName)
		}
		return err
	}}
}

// OutcomeJob records finished runs' outcomes (and post-mortem learnings)
// in the learning system through record.
func OutcomeJob(record func(ctx context.Context, a OutcomeArgs) error) jobs.Kind {
	return recordJob(OutcomeJobKind, record)
}

// recordJob is a job kind that decodes its arguments and hands them to
// record; invalid input and conflicts are permanent failures (a retry
// cannot fix them), anything else is retried.
func recordJob[A any](name string, record func(ctx context.Context, a A) error) jobs.Kind {
	return jobs.Kind{Name: name, Handler: func(ctx context.Context, j jobs.Job) error {
		var a A
		if err := j.Decode(&a); err != nil {
			return err
		}
		err := record(ctx, a)
		if app.KindOf(err) == app.KindInvalid || app.KindOf(err) == app.KindConflict {
			return jobs.Permanent(err)
		}
		return err
	}}
}

// CollaborationStats counts the outcomes of a project's finished runs per
// pattern (the learned recommendation's input).
func (s *Service) CollaborationStats(ctx context.Context, project string) ([]team.PatternStats, error) {
	const op = "collaboration stats"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	by := map[team.PatternID]*team.PatternStats{}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		recs, err := tx.ListTeamRuns(ctx, project, store.TeamRunFilter{})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if !r.Finished {
				continue
			}
			run, err := decodeRun(r)
			if err != nil || run.Outcome == nil {
				continue
			}
			st := by[run.Pattern]
			if st == nil {
				st = &team.PatternStats{Pattern: run.Pattern}
				by[run.Pattern] = st
			}
			st.Runs++
			switch run.Outcome.Status {
			case team.OutcomeSuccess:
				st.Successes++
			case team.OutcomeDegraded:
				st.Degraded++
			}
		}
		return nil
	})
	var out []team.PatternStats
	for _, p := range team.Patterns {
		if st := by[p]; st != nil {
			out = append(out, *st)
		} else {
			out = append(out, team.PatternStats{Pattern: p})
		}
	}
	return out, err
}

// SelectInput describes a task for pattern selection.
type SelectInput struct {
	Project    string `json:"project,omitempty"`
	TaskType   string `json:"task_type"`
	Complexity string `json:"complexity"`
	RiskLevel  string `json:"risk_level"`
	TeamSize   int    `json:"team_size"`
	HasExpert  bool   `json:"has_expert"`
}

// SelectPatterns applies the seed's selection rules and ranks every
// pattern by the outcomes of the project's past runs.
func (s *Service) SelectPatterns(ctx context.Context, in SelectInput) (*team.Selection, error) {
	const op = "select collaboration patterns"
	for _, f := range []struct{ name, v string }{{"task_type", in.TaskType}, {"complexity", in.Complexity}, {"risk_level", in.RiskLevel}} {
		if err := app.ValidText(op, f.name, f.v, app.MaxIDLen, false); err != nil {
			return nil, err
		}
	}
	stats, err := s.CollaborationStats(ctx, in.Project)
	if err != nil {
		return nil, err
	}
	sel := team.Select(in.TaskType, in.Complexity, in.RiskLevel, in.TeamSize, in.HasExpert, stats, nil)
	return &sel, nil
}

// Mermaid renders a pattern's state diagram as Mermaid stateDiagram-v2
// text, with current (when set) highlighted.
func Mermaid(d team.Diagram, current string) string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	id := func(s string) string {
		if s == "" {
			return "[*]"
		}
		return strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(s)
	}
	for _, e := range d.Edges {
		fmt.Fprintf(&b, "    %s --> %s", id(e.From), id(e.To))
		if e.Label != "" {
			fmt.Fprintf(&b, ": %s", strings.ReplaceAll(e.Label, ":", " "))
		}
		b.WriteString("\n")
	}
	for _, st := range d.States {
		if st.Terminal {
			fmt.Fprintf(&b, "    %s --> [*]\n", id(st.Name))
		}
	}
	if current != "" {
		fmt.Fprintf(&b, "    classDef current fill:#f96,stroke:#333\n    class %s current\n", id(current))
	}
	return b.String()
}
