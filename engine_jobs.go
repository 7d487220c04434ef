package kaizen

import "context"

// Engine actions of the background jobs (package internal/jobs): each
// delegates to the job service.

// RunJobs runs background jobs (experience extraction, scheduled reviews,
// timers) until ctx ends; the daemon calls it. Jobs are rows of the store,
// so every process's work is found, and a crash loses nothing.
// The loop also runs the periodic garbage collection ([retention]
// interval). It may run again once it has returned (not twice at once).
func (e *Engine) RunJobs(ctx context.Context) error {
	e.periodicOnce.Do(func() {
		if iv := e.cfg.Retention.Interval; iv > 0 {
			e.jobs.Every(e.gc.Periodic(iv))
		}
	})
	return e.jobs.Run(ctx)
}

// RunDueJobs runs every background job due now, once (`kaizen jobs run`,
// for a machine without a daemon).
func (e *Engine) RunDueJobs(ctx context.Context) (*JobResult, error) { return e.jobs.RunDue(ctx) }

// ListJobs lists background jobs, newest first.
func (e *Engine) ListJobs(ctx context.Context, q JobQuery) (*JobList, error) {
	return e.jobs.ListJobs(ctx, q)
}

// JobStats reports what this process's job runner did since the engine
// opened.
func (e *Engine) JobStats() JobStats { return e.jobs.Stats() }

// AutoExtractOff says why background experience extraction does not run,
// or "" when it does.
func (e *Engine) AutoExtractOff() string { return e.experience.AutoExtractOff() }
