// Package jobsvc is the service of kaizen's background jobs: it runs the
// durable job runner (package internal/jobs) with the kinds every
// subsystem registers, runs due jobs on request (kaizen jobs run), and
// lists jobs for people and tools.
package jobsvc

import (
	"context"
	"slices"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
)

// Service runs and lists background jobs.
type Service struct {
	env    *app.Env
	runner *jobs.Runner
}

// New returns the job service over a runner whose kinds are registered.
func New(env *app.Env, runner *jobs.Runner) *Service { return &Service{env: env, runner: runner} }

// Every schedules a periodic job of a registered kind; call it before Run.
func (s *Service) Every(p jobs.Periodic) { s.runner.Every(p) }

// Run runs jobs until ctx ends (the daemon calls it).
func (s *Service) Run(ctx context.Context) error { return s.runner.Run(ctx) }

// Wake makes the runner of this process look for due jobs at once.
func (s *Service) Wake() { s.runner.Wake() }

// RunResult is what one pass over the due jobs did.
type RunResult struct {
	Ran   int        `json:"ran"`
	Stats jobs.Stats `json:"stats"`
}

// RunDue enqueues the current period's periodic jobs and runs every job
// due now, once (for a machine without a daemon, or a test).
func (s *Service) RunDue(ctx context.Context) (*RunResult, error) {
	const op = "run jobs"
	if err := s.runner.EnqueuePeriodic(ctx); err != nil {
		return nil, app.Wrap(op, err)
	}
	res := &RunResult{}
	for {
		n, err := s.runner.RunDue(ctx)
		res.Ran += n
		if err != nil {
			return nil, app.Wrap(op, err)
		}
		if n == 0 {
			break
		}
	}
	res.Stats = s.runner.Stats()
	return res, nil
}

// JobQuery selects jobs to list.
type JobQuery struct {
	Kind   string `json:"kind,omitempty"`
	State  string `json:"state,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// JobList is a page of jobs, newest first.
type JobList = app.Page[store.Job]

// ListJobs lists background jobs, newest first.
func (s *Service) ListJobs(ctx context.Context, q JobQuery) (*JobList, error) {
	const op = "list jobs"
	limit, err := app.PageLimit(op, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.JobFilter{Kind: q.Kind, Limit: limit, Offset: q.Offset}
	if q.State != "" {
		st := store.JobState(q.State)
		if !slices.Contains([]store.JobState{store.JobAvailable, store.JobRunning, store.JobCompleted, store.JobFailed}, st) {
			return nil, app.Invalid(op, "state", "unknown state %q (want available, running, completed or failed)", q.State)
		}
		f.States = []store.JobState{st}
	}
	if q.Kind != "" {
		if err := app.ValidID(op, "kind", q.Kind); err != nil {
			return nil, err
		}
	}
	return app.ListPage(ctx, s.env, op, "", limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountJobs(ctx, f) },
		func(tx store.Tx) ([]store.Job, error) { return tx.ListJobs(ctx, f) })
}

// Stats reports what this process's runner did since it started.
func (s *Service) Stats() jobs.Stats { return s.runner.Stats() }
