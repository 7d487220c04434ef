package teamsvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// TaskInput is a task to add to a team's graph.
type TaskInput struct {
	ID           string          `json:"id,omitempty"` // generated when empty
	Subject      string          `json:"subject"`
	Description  string          `json:"description,omitempty"`
	Owner        string          `json:"owner,omitempty"`
	Role         team.Role       `json:"role,omitempty"`
	Capabilities []string        `json:"capabilities,omitempty"`
	BlockedBy    []string        `json:"blocked_by,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	Gate         string          `json:"gate,omitempty"`
}

// AddTasksInput adds tasks to a team's graph in one transaction.
type AddTasksInput struct {
	Project string      `json:"project,omitempty"`
	Team    string      `json:"team"`
	Tasks   []TaskInput `json:"tasks"`
}

// AddTasks adds tasks to a team's graph. Dependencies may name tasks of
// the graph or of the same input; unknown dependencies and cycles are
// refused and nothing is written. A task whose dependency already failed
// starts blocked.
func (s *Service) AddTasks(ctx context.Context, in AddTasksInput) ([]team.Task, error) {
	const op = "add tasks"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if len(in.Tasks) == 0 || len(in.Tasks) > 1000 {
		return nil, app.Invalid(op, "tasks", "give 1 to 1000 tasks, got %d", len(in.Tasks))
	}
	now := s.env.Now()
	var out []team.Task
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		out = nil
		if _, _, err := s.activeTeam(ctx, tx, op, project, in.Team); err != nil {
			return err
		}
		existing, err := tx.ListTeamTasks(ctx, project, in.Team, store.TeamTaskFilter{})
		if err != nil {
			return err
		}
		all := slices.Clone(existing)
		for i, ti := range in.Tasks {
			id := ti.ID
			if id == "" {
				id = app.NewID("tt-")
			}
			t := team.Task{ID: id, Team: in.Team, Subject: scrub(ti.Subject), Description: scrub(ti.Description), Owner: ti.Owner,
				Role: ti.Role, Capabilities: ti.Capabilities, BlockedBy: ti.BlockedBy, Status: team.StatusPending,
				Metadata: scrubJSON(ti.Metadata), Gate: ti.Gate, CreatedAt: now, UpdatedAt: now}
			if err := team.ValidateTask(t); err != nil {
				return teamErr(fmt.Sprintf("%s: task %d", op, i), err)
			}
			if slices.ContainsFunc(all, func(x team.Task) bool { return x.ID == id }) {
				return &app.Error{Op: op, Kind: app.KindConflict, Field: fmt.Sprintf("tasks[%d].id", i), Message: fmt.Sprintf("task %q exists", id)}
			}
			all = append(all, t)
			out = append(out, t)
		}
		if err := team.ValidateGraph(all); err != nil {
			return teamErr(op, err)
		}
		for _, t := range out {
			if _, err := tx.InsertTeamTask(ctx, project, t); err != nil {
				return err
			}
			if err := s.event(ctx, tx, project, in.Team, now, "task", t.ID, "", string(t.Status), "added", nil); err != nil {
				return err
			}
		}
		if err := s.propagate(ctx, tx, project, in.Team, now); err != nil {
			return err
		}
		for i := range out {
			if out[i], err = tx.GetTeamTask(ctx, project, in.Team, out[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.notify(project, in.Team)
	return out, nil
}

// putTask writes a changed task under its fence (the status and epoch it
// was read with), records a status change as an event, and hands it to
// the pattern run that created the task.
func (s *Service) putTask(ctx context.Context, tx store.Tx, project string, old, nt team.Task, cause string) error {
	if err := tx.UpdateTeamTask(ctx, project, nt, old.Status, old.Lease.Epoch); err != nil {
		return err
	}
	if old.Status == nt.Status && old.Lease.Holder == nt.Lease.Holder && old.Paused == nt.Paused {
		return nil
	}
	data := map[string]any{"epoch": nt.Lease.Epoch, "attempts": nt.Attempts}
	if nt.Lease.Holder != "" {
		data["holder"] = nt.Lease.Holder
	}
	if err := s.event(ctx, tx, project, nt.Team, nt.UpdatedAt, "task", nt.ID, string(old.Status), string(nt.Status), cause, data); err != nil {
		return err
	}
	if nt.RunID != "" && old.Status != nt.Status && s.runs.onTask != nil {
		return s.runs.onTask(ctx, tx, project, nt, cause)
	}
	return nil
}

// propagate applies the dependency policy of team.Propagate to the graph.
func (s *Service) propagate(ctx context.Context, tx store.Tx, project, name string, now time.Time) error {
	for range 3 { // a fixed point is reached in one pass; bounded anyway
		tasks, err := tx.ListTeamTasks(ctx, project, name, store.TeamTaskFilter{})
		if err != nil {
			return err
		}
		changes := team.Propagate(tasks)
		if len(changes) == 0 {
			return nil
		}
		byID := map[string]team.Task{}
		for _, t := range tasks {
			byID[t.ID] = t
		}
		for _, c := range changes {
			t := byID[c.Task]
			nt, err := team.Transition(t, c.To, now)
			if err != nil {
				return err
			}
			if c.To == team.StatusBlocked {
				nt.BlockedCause = c.Cause
			}
			if err := s.putTask(ctx, tx, project, t, nt, c.Cause); err != nil {
				return err
			}
		}
	}
	return nil
}

// TaskQuery lists a team's tasks.
type TaskQuery struct {
	Project  string            `json:"project,omitempty"`
	Team     string            `json:"team"`
	Statuses []team.TaskStatus `json:"statuses,omitempty"`
	RunID    string            `json:"run_id,omitempty"`
	Limit    int               `json:"limit,omitempty"`
	Offset   int               `json:"offset,omitempty"`
}

// ListTasks lists a team's tasks in insertion order.
func (s *Service) ListTasks(ctx context.Context, q TaskQuery) ([]team.Task, error) {
	const op = "list team tasks"
	project, err := s.env.ResolveProject(op, q.Project)
	if err != nil {
		return nil, err
	}
	for _, st := range q.Statuses {
		if !st.Valid() {
			return nil, app.Invalid(op, "status", "%q is not a task status", st)
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = team.MaxGraphTasks
	}
	var out []team.Task
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		if _, _, err := s.loadTeam(ctx, tx, op, project, q.Team); err != nil {
			return err
		}
		var err error
		out, err = tx.ListTeamTasks(ctx, project, q.Team, store.TeamTaskFilter{Statuses: q.Statuses, RunID: q.RunID, Limit: limit, Offset: q.Offset})
		return err
	})
	return out, err
}

// GetTask returns one task.
func (s *Service) GetTask(ctx context.Context, project, name, id string) (*team.Task, error) {
	const op = "show team task"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	var out team.Task
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		out, err = tx.GetTeamTask(ctx, project, name, id)
		return err
	})
	return &out, err
}

// ClaimInput asks for the next ready task a member may take.
type ClaimInput struct {
	Project string `json:"project,omitempty"`
	Team    string `json:"team"`
	Member  string `json:"member"`
	// Task, when set, claims that task only.
	Task string `json:"task,omitempty"`
	// LeaseSeconds overrides the team's lease (1 … 86400).
	LeaseSeconds int `json:"lease_seconds,omitempty"`
	// WaitSeconds long-polls for a task to become ready (at most 300).
	WaitSeconds int `json:"wait_seconds,omitempty"`
}

// ClaimResult is a granted lease, or none when no task is ready.
type ClaimResult struct {
	Task *team.Task `json:"task,omitempty"`
	// Epoch is the fencing token every heartbeat and report must carry.
	Epoch     int64     `json:"epoch,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

func (s *Service) ttl(op string, d doc, seconds int) (time.Duration, error) {
	if seconds < 0 || seconds > 86400 {
		return 0, app.Invalid(op, "lease_seconds", "1 … 86400, got %d", seconds)
	}
	if seconds == 0 {
		seconds = d.Settings.LeaseSeconds
	}
	return time.Duration(seconds) * time.Second, nil
}

func waitOf(op string, seconds int) (time.Duration, error) {
	if seconds < 0 || time.Duration(seconds)*time.Second > MaxWait {
		return 0, app.Invalid(op, "wait_seconds", "0 … %d, got %d", int(MaxWait/time.Second), seconds)
	}
	return time.Duration(seconds) * time.Second, nil
}

func member(op string, d doc, teamName, name string) (team.Member, error) {
	for _, m := range d.Members {
		if m.Name == name {
			return m, nil
		}
	}
	return team.Member{}, &app.Error{Op: op, Kind: app.KindNotFound, Field: "member", Message: fmt.Sprintf("%q is not a member of team %s", name, teamName)}
}

// Claim atomically leases the next ready task the member may take by
// owner, role and capabilities (oldest first): expired leases of the team
// are returned to the ready set first. On PostgreSQL concurrent claimers
// skip each other's rows (FOR UPDATE SKIP LOCKED); every task is granted
// to one claimer. With WaitSeconds the call waits for a task.
func (s *Service) Claim(ctx context.Context, in ClaimInput) (*ClaimResult, error) {
	const op = "claim task"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	wait, err := waitOf(op, in.WaitSeconds)
	if err != nil {
		return nil, err
	}
	var res *ClaimResult
	err = s.longPoll(ctx, project, in.Team, wait, func() (bool, time.Time, error) {
		var next time.Time
		res, next, err = s.claimOnce(ctx, op, project, in)
		return err != nil || res.Task != nil, next, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// longPoll runs once until it is done or wait has passed, sleeping between
// tries until a wake-up of the team, the next instant once names (a lease
// that expires, a message that becomes visible) or the deadline.
func (s *Service) longPoll(ctx context.Context, project, teamName string, wait time.Duration,
	once func() (done bool, next time.Time, err error)) error {
	if wait > 0 {
		s.listen(ctx)
	}
	deadline := s.env.Now().Add(wait)
	for {
		w := s.waiter(project, teamName)
		done, next, err := once()
		if err != nil || done || wait == 0 {
			return err
		}
		now := s.env.Now()
		if !now.Before(deadline) {
			return nil
		}
		until := deadline
		if !next.IsZero() && next.Before(until) {
			until = next
		}
		if err := s.sleep(ctx, w, s.maxSleep(until.Sub(now))); err != nil {
			return err
		}
	}
}

// sleep waits for a wake-up, d or the end of ctx.
func (s *Service) sleep(ctx context.Context, w <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	if s.beforeSleep != nil {
		s.beforeSleep()
	}
	select {
	case <-w:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (s *Service) claimOnce(ctx context.Context, op, project string, in ClaimInput) (*ClaimResult, time.Time, error) {
	var res ClaimResult
	var next time.Time
	var err error
	for range 5 { // a concurrent writer changed a candidate: read again
		now := s.env.Now()
		res, next = ClaimResult{}, time.Time{}
		err = s.env.Update(ctx, op, func(tx store.Tx) error {
			res = ClaimResult{}
			rec, d, err := s.activeTeam(ctx, tx, op, project, in.Team)
			if err != nil {
				return err
			}
			m, err := member(op, d, in.Team, in.Member)
			if err != nil {
				return err
			}
			ttl, err := s.ttl(op, d, in.LeaseSeconds)
			if err != nil {
				return err
			}
			if err := s.expireTeam(ctx, tx, project, in.Team, d, now); err != nil {
				return err
			}
			if m.Worker.Kind == team.WorkerCommand {
				if err := s.checkLimits(ctx, tx, project, rec.Name, d, now); err != nil {
					return err
				}
			}
			var cands []team.Task
			if in.Task != "" {
				t, err := tx.GetTeamTask(ctx, project, in.Team, in.Task)
				if err != nil {
					return err
				}
				deps := map[string]team.TaskStatus{}
				for _, dep := range t.BlockedBy {
					if dt, err := tx.GetTeamTask(ctx, project, in.Team, dep); err == nil {
						deps[dep] = dt.Status
					}
				}
				nt, err := team.Claim(t, deps, m, now, ttl)
				if err != nil {
					return teamErr(op, err)
				}
				res = ClaimResult{Task: &nt, Epoch: nt.Lease.Epoch, ExpiresAt: nt.Lease.ExpiresAt}
				return s.putTask(ctx, tx, project, t, nt, "claimed by "+m.Name)
			}
			cands, err = tx.ClaimableTeamTasks(ctx, project, in.Team, m.Name, m.Role, 32)
			if err != nil {
				return err
			}
			for _, t := range cands {
				if team.CheckEligible(t, m) != nil {
					continue
				}
				nt, err := team.Grant(t, m.Name, now, ttl)
				if err != nil {
					return teamErr(op, err)
				}
				res = ClaimResult{Task: &nt, Epoch: nt.Lease.Epoch, ExpiresAt: nt.Lease.ExpiresAt}
				return s.putTask(ctx, tx, project, t, nt, "claimed by "+m.Name)
			}
			if at, ok, err := tx.NextTeamLeaseExpiry(ctx, project, in.Team); err != nil {
				return err
			} else if ok {
				next = at
			}
			return nil
		})
		if !errors.Is(err, store.ErrStale) {
			break
		}
	}
	if err == nil && res.Task != nil {
		// a claim takes work away and readies nothing: the other
		// processes' waiters need not hear of it
		s.wake(project, in.Team)
	}
	return &res, next, teamErr(op, err)
}

// checkLimits refuses a command worker's claim beyond the team's limits:
// concurrent command workers (tasks leased by command members), runs in
// the last hour (claims by command members), tokens and cost spent.
func (s *Service) checkLimits(ctx context.Context, tx store.Tx, project, name string, d doc, now time.Time) error {
	l := d.Limits
	if l == (team.Limits{}) {
		return nil
	}
	cmd := map[string]bool{}
	for _, m := range d.Members {
		if m.Worker.Kind == team.WorkerCommand {
			cmd[m.Name] = true
		}
	}
	var u team.Usage
	u.Tokens, u.Cost = d.Spent.Tokens, d.Spent.Cost
	running, err := tx.ListTeamTasks(ctx, project, name, store.TeamTaskFilter{Statuses: []team.TaskStatus{team.StatusInProgress}})
	if err != nil {
		return err
	}
	for _, t := range running {
		if cmd[t.Lease.Holder] {
			u.CommandWorkers++
		}
	}
	if l.RunsPerHour > 0 {
		var after int64
		for {
			evs, err := tx.ListTeamEvents(ctx, project, name, "", after, 1000)
			if err != nil {
				return err
			}
			for _, e := range evs {
				after = e.ID
				if e.Kind == "task" && e.To == string(team.StatusInProgress) && now.Sub(e.At) < time.Hour {
					var data struct {
						Holder string `json:"holder"`
					}
					_ = json.Unmarshal(e.Data, &data)
					if cmd[data.Holder] {
						u.RunsLastHour++
					}
				}
			}
			if len(evs) < 1000 {
				break
			}
		}
	}
	// A run's tokens and cost are known after it: any run is refused once
	// the budget is spent.
	req := team.Request{CommandWorkers: 1, Runs: 1}
	if l.Tokens > 0 {
		req.Tokens = 1
	}
	if l.Cost > 0 {
		req.Cost = 1e-9
	}
	return team.CheckLimits(l, u, req)
}

// expireTeam returns the team's expired leases to the ready set (or fails
// a task that used its attempts).
func (s *Service) expireTeam(ctx context.Context, tx store.Tx, project, name string, d doc, now time.Time) error {
	expired, err := tx.ExpiredTeamTasks(ctx, project, name, now, 100)
	if err != nil {
		return err
	}
	for _, t := range expired {
		nt, ok := team.Expire(t, now, d.Settings.MaxAttempts)
		if !ok {
			continue
		}
		cause := fmt.Sprintf("lease of %s (epoch %d) expired at %s", t.Lease.Holder, t.Lease.Epoch, t.Lease.ExpiresAt.Format(time.RFC3339))
		if err := s.putTask(ctx, tx, project, t, nt, cause); err != nil {
			return err
		}
	}
	if len(expired) > 0 {
		return s.propagate(ctx, tx, project, name, now)
	}
	return nil
}

// Sweep returns every expired lease of the project's teams to the ready
// set and reports how many; the job runner calls it periodically, claims
// call it for their team.
func (s *Service) Sweep(ctx context.Context, project string) (int, error) {
	const op = "sweep leases"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return 0, err
	}
	now := s.env.Now()
	n := 0
	touched := map[string]bool{}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		n = 0
		clear(touched)
		expired, err := tx.ExpiredTeamTasks(ctx, project, "", now, 1000)
		if err != nil {
			return err
		}
		for _, t := range expired {
			if touched[t.Team] {
				continue
			}
			touched[t.Team] = true
			_, d, err := s.loadTeam(ctx, tx, op, project, t.Team)
			if err != nil {
				return err
			}
			if err := s.expireTeam(ctx, tx, project, t.Team, d, now); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	for name := range touched {
		s.notify(project, name)
	}
	return len(touched), teamErr(op, err)
}

// HeartbeatInput renews a lease and reports progress.
type HeartbeatInput struct {
	Project      string         `json:"project,omitempty"`
	Team         string         `json:"team"`
	Task         string         `json:"task"`
	Member       string         `json:"member"`
	Epoch        int64          `json:"epoch"`
	Progress     *team.Progress `json:"progress,omitempty"`
	LeaseSeconds int            `json:"lease_seconds,omitempty"`
}

// Heartbeat renews the member's lease; the answer says whether the task
// was cancelled or paused. A stale epoch, an expired lease or another
// holder is a conflict: the worker must drop its work.
func (s *Service) Heartbeat(ctx context.Context, in HeartbeatInput) (*team.HeartbeatAnswer, error) {
	const op = "heartbeat"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if in.Progress != nil {
		p := *in.Progress
		p.Note, p.Phase = scrub(p.Note), scrub(p.Phase)
		in.Progress = &p
	}
	now := s.env.Now()
	var ans team.HeartbeatAnswer
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		_, d, err := s.loadTeam(ctx, tx, op, project, in.Team)
		if err != nil {
			return err
		}
		ttl, err := s.ttl(op, d, in.LeaseSeconds)
		if err != nil {
			return err
		}
		t, err := tx.GetTeamTask(ctx, project, in.Team, in.Task)
		if err != nil {
			return err
		}
		nt, a, err := team.Heartbeat(t, in.Member, in.Epoch, in.Progress, now, ttl)
		if err != nil {
			return teamErr(op, err)
		}
		ans = a
		if a.Cancelled {
			return nil
		}
		return tx.UpdateTeamTask(ctx, project, nt, t.Status, t.Lease.Epoch)
	})
	return &ans, teamErr(op, err)
}

// GateResult is the outcome of a task's gate command, run by the worker.
type GateResult struct {
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output,omitempty"`
}

// Usage is what a worker spent on a task (when its agent CLI reports it).
type Usage struct {
	Tokens int64   `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
}

// ReportInput completes or fails a leased task.
type ReportInput struct {
	Project string          `json:"project,omitempty"`
	Team    string          `json:"team"`
	Task    string          `json:"task"`
	Member  string          `json:"member"`
	Epoch   int64           `json:"epoch"`
	Status  team.TaskStatus `json:"status"` // completed or failed
	Result  json.RawMessage `json:"result,omitempty"`
	Error   string          `json:"error,omitempty"`
	// Gate is required to complete a task with a gate: a non-zero exit
	// turns the report into a failure.
	Gate  *GateResult `json:"gate,omitempty"`
	Usage *Usage      `json:"usage,omitempty"`
}

// Report completes or fails the member's leased task after the fence
// check; a gated task completes only with a passing gate result. The
// dependants of a failed task are blocked; those of a completed one
// become ready.
func (s *Service) Report(ctx context.Context, in ReportInput) (*team.Task, error) {
	const op = "report task"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if in.Status != team.StatusCompleted && in.Status != team.StatusFailed {
		return nil, app.Invalid(op, "status", "a report is completed or failed, not %q", in.Status)
	}
	if err := app.ValidText(op, "error", in.Error, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	if in.Usage != nil && (in.Usage.Tokens < 0 || in.Usage.Cost < 0 || in.Usage.Cost != in.Usage.Cost) {
		return nil, app.Invalid(op, "usage", "tokens and cost are non-negative")
	}
	if len(in.Result) > 0 && !json.Valid(in.Result) {
		return nil, app.Invalid(op, "result", "not valid JSON")
	}
	result := scrubJSON(in.Result)
	now := s.env.Now()
	var out team.Task
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		rec, d, err := s.loadTeam(ctx, tx, op, project, in.Team)
		if err != nil {
			return err
		}
		t, err := tx.GetTeamTask(ctx, project, in.Team, in.Task)
		if err != nil {
			return err
		}
		status, cause := in.Status, in.Status
		reason := "reported " + string(cause) + " by " + in.Member
		if status == team.StatusCompleted && t.Gate != "" {
			switch {
			case in.Gate == nil:
				return &app.Error{Op: op, Kind: app.KindInvalid, Field: "gate", Message: "task " + t.ID + " has a gate: report its result",
					Hint: "run the gate command `" + t.Gate + "` and send gate.exit_code"}
			case in.Gate.ExitCode != 0:
				status = team.StatusFailed
				reason = fmt.Sprintf("gate failed (exit %d), reported by %s", in.Gate.ExitCode, in.Member)
			default:
				reason = "gate passed, reported by " + in.Member
			}
		}
		if status == team.StatusFailed {
			msg := in.Error
			if in.Gate != nil && in.Gate.ExitCode != 0 {
				msg = fmt.Sprintf("gate exit %d: %s", in.Gate.ExitCode, in.Gate.Output)
			}
			if msg != "" || len(result) == 0 {
				wrapped := map[string]any{"error": scrub(clip(msg, 4000))}
				if len(result) > 0 {
					wrapped["result"] = result
				}
				result, _ = json.Marshal(wrapped)
			}
		}
		nt, err := team.Report(t, in.Member, in.Epoch, status, result, now)
		if err != nil {
			return teamErr(op, err)
		}
		if in.Usage != nil {
			d.Spent.Tokens += in.Usage.Tokens
			d.Spent.Cost += in.Usage.Cost
			if err := saveDoc(ctx, tx, rec, d, now); err != nil {
				return err
			}
		}
		if err := s.putTask(ctx, tx, project, t, nt, reason); err != nil {
			return err
		}
		out = nt
		return s.propagate(ctx, tx, project, in.Team, now)
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.notify(project, in.Team)
	return &out, nil
}

// ReleaseInput gives a lease back without a result.
type ReleaseInput struct {
	Project string `json:"project,omitempty"`
	Team    string `json:"team"`
	Task    string `json:"task"`
	Member  string `json:"member"`
	Epoch   int64  `json:"epoch"`
}

// Release returns a leased task to the ready set (the worker stops early).
func (s *Service) Release(ctx context.Context, in ReleaseInput) (*team.Task, error) {
	const op = "release task"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	var out team.Task
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		t, err := tx.GetTeamTask(ctx, project, in.Team, in.Task)
		if err != nil {
			return err
		}
		nt, err := team.Release(t, in.Member, in.Epoch, now)
		if err != nil {
			return teamErr(op, err)
		}
		out = nt
		return s.putTask(ctx, tx, project, t, nt, "released by "+in.Member)
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.notify(project, in.Team)
	return &out, nil
}

// UpdateTaskInput changes a task from outside its lease: cancel, retry
// (failed → pending), block or unblock, pause or resume, or edit its text.
type UpdateTaskInput struct {
	Project     string          `json:"project,omitempty"`
	Team        string          `json:"team"`
	Task        string          `json:"task"`
	Status      team.TaskStatus `json:"status,omitempty"`
	Paused      *bool           `json:"paused,omitempty"`
	Subject     *string         `json:"subject,omitempty"`
	Description *string         `json:"description,omitempty"`
	Owner       *string         `json:"owner,omitempty"`
	Cause       string          `json:"cause,omitempty"`
}

// UpdateTask applies a coordinator's change to a task (the transition
// table decides what is allowed); dependants follow (team.Propagate).
func (s *Service) UpdateTask(ctx context.Context, in UpdateTaskInput) (*team.Task, error) {
	const op = "update task"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if in.Status != "" && !in.Status.Valid() {
		return nil, app.Invalid(op, "status", "%q is not a task status", in.Status)
	}
	if err := app.ValidText(op, "cause", in.Cause, 2000, false); err != nil {
		return nil, err
	}
	now := s.env.Now()
	var out team.Task
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		if _, _, err := s.activeTeam(ctx, tx, op, project, in.Team); err != nil {
			return err
		}
		t, err := tx.GetTeamTask(ctx, project, in.Team, in.Task)
		if err != nil {
			return err
		}
		nt := t
		cause := scrub(in.Cause)
		if cause == "" {
			cause = "updated"
		}
		if in.Status != "" && in.Status != t.Status {
			if nt, err = team.Transition(t, in.Status, now); err != nil {
				return teamErr(op, err)
			}
			if in.Status == team.StatusBlocked {
				nt.BlockedCause = cause
			}
		}
		if in.Paused != nil {
			nt.Paused = *in.Paused
		}
		if in.Subject != nil {
			nt.Subject = scrub(*in.Subject)
		}
		if in.Description != nil {
			nt.Description = scrub(*in.Description)
		}
		if in.Owner != nil {
			nt.Owner = *in.Owner
		}
		nt.UpdatedAt = now
		if err := team.ValidateTask(nt); err != nil {
			return teamErr(op, err)
		}
		if err := s.putTask(ctx, tx, project, t, nt, cause); err != nil {
			return err
		}
		out = nt
		return s.propagate(ctx, tx, project, in.Team, now)
	})
	if err != nil {
		return nil, teamErr(op, err)
	}
	s.notify(project, in.Team)
	return &out, nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
