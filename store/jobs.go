package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrLeaseLost: a job's lease is held by another owner (it expired and the
// job was claimed again), so the caller may not finish it.
var ErrLeaseLost = errors.New("job lease lost")

// JobState is where a background job is in its life.
type JobState string

// Job states.
const (
	JobAvailable JobState = "available" // waiting for its run_at
	JobRunning   JobState = "running"   // leased by a runner
	JobCompleted JobState = "completed"
	JobFailed    JobState = "failed" // gave up after its attempts
)

// Job is a durable background job (package internal/jobs runs them). Jobs
// are store-wide, not scoped to a project (their arguments say what they
// work on).
type Job struct {
	ID   string          `json:"id"`
	Kind string          `json:"kind"`
	Args json.RawMessage `json:"args"`
	// UniqueKey, when set, is unique among all jobs of the store, finished
	// ones included: a periodic job keyed by its period runs once per
	// period, whatever the number of daemons.
	UniqueKey   string    `json:"unique_key,omitempty"`
	State       JobState  `json:"state"`
	RunAt       time.Time `json:"run_at"`
	Attempts    int       `json:"attempts"`
	MaxAttempts int       `json:"max_attempts"`
	// LeaseOwner and LeaseUntil hold a running job: after LeaseUntil the job
	// may be claimed again (its runner is presumed dead).
	LeaseOwner string    `json:"lease_owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	LastError  string    `json:"last_error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// EnqueueMode says what EnqueueJob does when a job with the same unique
// key exists.
type EnqueueMode int

// Enqueue modes.
const (
	// EnqueueKeep keeps the existing job unchanged.
	EnqueueKeep EnqueueMode = iota
	// EnqueueDebounce moves a still-available job's run_at to the new one
	// (a task's extraction waits for the task to be quiet).
	EnqueueDebounce
	// EnqueueRevive is EnqueueDebounce, and also makes a failed job
	// available again with its attempts reset.
	EnqueueRevive
)

// JobFilter narrows job listings. Zero values mean no filter.
type JobFilter struct {
	Kind   string
	States []JobState
	Limit  int
	Offset int
}

// JobStorage persists background jobs. A job is enqueued in the
// transaction of the work that asks for it, so it exists exactly when that
// work committed.
type JobStorage interface {
	// EnqueueJob inserts a job; with a unique key already taken it applies
	// mode to the existing job and reports false.
	EnqueueJob(ctx context.Context, j Job, mode EnqueueMode) (bool, error)
	// ClaimJobs leases up to limit due jobs of the given kinds (all when
	// empty), oldest run_at first: available jobs whose run_at is at or
	// before now, and running jobs whose lease expired before now. Each
	// claimed job is running, owned by owner until now+lease, with one more
	// attempt. Concurrent claimers never receive the same job.
	ClaimJobs(ctx context.Context, kinds []string, owner string, now time.Time, lease time.Duration, limit int) ([]Job, error)
	// FinishJob ends an attempt of a job owner holds: state JobCompleted or
	// JobFailed finishes it (at now, with lastErr); JobAvailable makes it
	// available again at retryAt. ErrLeaseLost when owner does not hold it.
	FinishJob(ctx context.Context, id, owner string, state JobState, retryAt time.Time, lastErr string, now time.Time) error
	// ExtendJobLease moves the lease of a running job owner holds to until.
	ExtendJobLease(ctx context.Context, id, owner string, until time.Time) error
	// NextJobAt is the earliest instant a job of the given kinds (all when
	// empty) becomes claimable: the run_at of an available job or the lease
	// end of a running one; false when there is none.
	NextJobAt(ctx context.Context, kinds []string) (time.Time, bool, error)
	GetJob(ctx context.Context, id string) (Job, error)
	GetJobByKey(ctx context.Context, uniqueKey string) (Job, error)
	// ListJobs returns jobs newest first (created_at, then id, descending).
	ListJobs(ctx context.Context, f JobFilter) ([]Job, error)
	CountJobs(ctx context.Context, f JobFilter) (int64, error)
	// DeleteJobs removes finished (completed or failed) jobs finished
	// before a time and returns how many.
	DeleteJobs(ctx context.Context, finishedBefore time.Time) (int64, error)
}
