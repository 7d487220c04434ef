package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// Types of the team engine (seed 004), defined by its service.
type (
	TeamInput              = teamsvc.TeamInput
	TeamInfo               = teamsvc.TeamInfo
	TeamSettings           = teamsvc.Settings
	TeamTaskInput          = teamsvc.TaskInput
	AddTeamTasksInput      = teamsvc.AddTasksInput
	TeamTaskQuery          = teamsvc.TaskQuery
	ClaimInput             = teamsvc.ClaimInput
	ClaimResult            = teamsvc.ClaimResult
	HeartbeatInput         = teamsvc.HeartbeatInput
	ReportInput            = teamsvc.ReportInput
	ReleaseInput           = teamsvc.ReleaseInput
	UpdateTeamTaskInput    = teamsvc.UpdateTaskInput
	GateResult             = teamsvc.GateResult
	TeamUsage              = teamsvc.Usage
	SendInput              = teamsvc.SendInput
	InboxInput             = teamsvc.InboxInput
	InboxResult            = teamsvc.InboxResult
	AckInput               = teamsvc.AckInput
	TailInput              = teamsvc.TailInput
	CoordinatorInput       = teamsvc.CoordinatorInput
	CoordinatorStartConfig = teamsvc.CoordinatorStartConfig
	WorkerOptions          = teamsvc.WorkerOptions
	WorkerStats            = teamsvc.WorkerStats
	WorkFunc               = teamsvc.WorkFunc
	WorkResult             = teamsvc.WorkResult
	TeamEvent              = store.TeamEvent
	InboxItem              = store.InboxItem
)

// CreateTeam creates a team with its members and roles.
func (e *Engine) CreateTeam(ctx context.Context, in TeamInput) (*TeamInfo, error) {
	return e.team.CreateTeam(ctx, in)
}

// GetTeam returns a team with its task counts.
func (e *Engine) GetTeam(ctx context.Context, project, name string) (*TeamInfo, error) {
	return e.team.GetTeam(ctx, project, name)
}

// ListTeams lists a project's teams (dissolved ones too when all).
func (e *Engine) ListTeams(ctx context.Context, project string, all bool) ([]TeamInfo, error) {
	return e.team.ListTeams(ctx, project, all)
}

// DissolveTeam dissolves a team and cancels its open tasks.
func (e *Engine) DissolveTeam(ctx context.Context, project, name string) (*TeamInfo, error) {
	return e.team.DissolveTeam(ctx, project, name)
}

// AddTeamTasks adds tasks to a team's graph (cycles refused).
func (e *Engine) AddTeamTasks(ctx context.Context, in AddTeamTasksInput) ([]team.Task, error) {
	return e.team.AddTasks(ctx, in)
}

// ListTeamTasks lists a team's tasks in insertion order.
func (e *Engine) ListTeamTasks(ctx context.Context, q TeamTaskQuery) ([]team.Task, error) {
	return e.team.ListTasks(ctx, q)
}

// GetTeamTask returns one task of a team.
func (e *Engine) GetTeamTask(ctx context.Context, project, teamName, id string) (*team.Task, error) {
	return e.team.GetTask(ctx, project, teamName, id)
}

// UpdateTeamTask cancels, retries, blocks, pauses or edits a task.
func (e *Engine) UpdateTeamTask(ctx context.Context, in UpdateTeamTaskInput) (*team.Task, error) {
	return e.team.UpdateTask(ctx, in)
}

// ClaimTask atomically leases the next ready task a member may take.
func (e *Engine) ClaimTask(ctx context.Context, in ClaimInput) (*ClaimResult, error) {
	return e.team.Claim(ctx, in)
}

// HeartbeatTask renews a lease and reports progress.
func (e *Engine) HeartbeatTask(ctx context.Context, in HeartbeatInput) (*team.HeartbeatAnswer, error) {
	return e.team.Heartbeat(ctx, in)
}

// ReportTask completes or fails a leased task (fenced by its epoch).
func (e *Engine) ReportTask(ctx context.Context, in ReportInput) (*team.Task, error) {
	return e.team.Report(ctx, in)
}

// ReleaseTask gives a lease back without a result.
func (e *Engine) ReleaseTask(ctx context.Context, in ReleaseInput) (*team.Task, error) {
	return e.team.Release(ctx, in)
}

// SweepLeases returns the project's expired leases to the ready set.
func (e *Engine) SweepLeases(ctx context.Context, project string) (int, error) {
	return e.team.Sweep(ctx, project)
}

// SendMessage sends a typed message on a team's bus.
func (e *Engine) SendMessage(ctx context.Context, in SendInput) (*team.Message, error) {
	return e.team.Send(ctx, in)
}

// Inbox delivers a member's visible, unacknowledged messages.
func (e *Engine) Inbox(ctx context.Context, in InboxInput) (*InboxResult, error) {
	return e.team.Inbox(ctx, in)
}

// AckMessages marks a member's messages read, acknowledged or acted on.
func (e *Engine) AckMessages(ctx context.Context, in AckInput) ([]team.Delivery, error) {
	return e.team.Ack(ctx, in)
}

// TailMessages returns a team's messages after a seq.
func (e *Engine) TailMessages(ctx context.Context, in TailInput) ([]team.Message, error) {
	return e.team.Tail(ctx, in)
}

// MessageDeliveries shows every recipient's copy of a message.
func (e *Engine) MessageDeliveries(ctx context.Context, project, teamName string, seq int64) ([]team.Delivery, error) {
	return e.team.Deliveries(ctx, project, teamName, seq)
}

// Coordinate moves a team's coordinator state machine.
func (e *Engine) Coordinate(ctx context.Context, in CoordinatorInput) (*team.Coordinator, error) {
	return e.team.Coordinate(ctx, in)
}

// TeamEvents returns a team's recorded transitions.
func (e *Engine) TeamEvents(ctx context.Context, project, teamName, subject string, after int64, limit int) ([]TeamEvent, error) {
	return e.team.Events(ctx, project, teamName, subject, after, limit)
}

// RunWorker runs a worker loop (command or Go function) until ctx ends.
func (e *Engine) RunWorker(ctx context.Context, o WorkerOptions) (WorkerStats, error) {
	return e.team.RunWorker(ctx, o)
}

// Types of the collaboration pattern runs.
type (
	StartRunInput   = teamsvc.StartRunInput
	RunInfo         = teamsvc.RunInfo
	RunQuery        = teamsvc.RunQuery
	RunSummary      = teamsvc.RunSummary
	RunReplyInput   = teamsvc.ReplyInput
	SelectInput     = teamsvc.SelectInput
	RunOutcomeInput = teamsvc.OutcomeArgs
)

// StartRun starts a collaboration pattern run (CP-1 … CP-10) on a team.
func (e *Engine) StartRun(ctx context.Context, in StartRunInput) (*RunInfo, error) {
	return e.team.StartRun(ctx, in)
}

// GetRun returns a pattern run with its state diagram and event log.
func (e *Engine) GetRun(ctx context.Context, project, id string) (*RunInfo, error) {
	return e.team.GetRun(ctx, project, id)
}

// ListRuns lists pattern runs.
func (e *Engine) ListRuns(ctx context.Context, q RunQuery) ([]RunSummary, error) {
	return e.team.ListRuns(ctx, q)
}

// CancelRun ends a pattern run from outside.
func (e *Engine) CancelRun(ctx context.Context, project, id, reason string) (*RunInfo, error) {
	return e.team.CancelRun(ctx, project, id, reason)
}

// ReplyRun answers a question a pattern run asked the user.
func (e *Engine) ReplyRun(ctx context.Context, in RunReplyInput) (*RunInfo, error) {
	return e.team.Reply(ctx, in)
}

// SelectPatterns applies the seed's pattern selection rules and ranks the
// patterns by the project's past run outcomes.
func (e *Engine) SelectPatterns(ctx context.Context, in SelectInput) (*team.Selection, error) {
	return e.team.SelectPatterns(ctx, in)
}

// recordRunOutcome records a finished pattern run (or a post-mortem's
// learning) as an outcome of the learning system.
func (e *Engine) recordRunOutcome(ctx context.Context, a RunOutcomeInput) error {
	d, errs, retries, ok := a.DurationMs, a.Errors, a.Retries, a.Success
	_, err := e.learning.RecordOutcome(ctx, OutcomeInput{Project: a.Project, TaskID: a.ID, DurationMs: &d, ErrorCount: &errs,
		RetryCount: &retries, Success: &ok, Strategy: a.Strategy, Patterns: a.Patterns, Task: a.Task, Tags: a.Tags,
		FailureDetails: a.Failure})
	return err
}
