// Package jobs is kaizen's one durable background job runner. A job is a
// row of the store's jobs table (store.JobStorage), enqueued in the
// transaction of the work that asks for it (Enqueue), so it exists exactly
// when that work committed — recording an outcome and queueing its
// experience extraction are one commit. A Runner claims due jobs with a
// lease, runs their handler, and finishes them (completed, retried later
// with backoff, or failed after its attempts); a job whose runner died is
// claimed again when its lease expires. Periodic jobs (daily and weekly
// reviews) are enqueued under a unique key per period, so several daemons
// on one PostgreSQL database run each period once.
//
// Every time the runner compares comes from an injected clock; it sleeps
// with the runtime's timers, so tests drive it either with RunDue and a
// settable clock or inside a testing/synctest bubble. The runner writes
// through the store like any other action: on SQLite it goes through the
// single writer and its group commit (docs/architecture.md says why kaizen
// does not use River).
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kaizenhq/kaizen/store"
)

// Defaults of a Kind and of a Runner.
const (
	DefaultMaxAttempts = 4
	DefaultLease       = 5 * time.Minute
	DefaultPoll        = 2 * time.Second
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = time.Hour
	DefaultConcurrency = 2
)

// Job is a claimed job, as its handler sees it.
type Job struct {
	store.Job
}

// Decode decodes the job's arguments into v.
func (j Job) Decode(v any) error {
	if err := json.Unmarshal(j.Args, v); err != nil {
		return Permanent(fmt.Errorf("job %s (%s): arguments: %w", j.ID, j.Kind, err))
	}
	return nil
}

// Handler works one job. An error retries the job with backoff until its
// attempts are spent; a Permanent error fails it at once; nil completes it.
// ctx ends when the runner stops (the job is then retried by the next
// runner, like a crash).
type Handler func(ctx context.Context, j Job) error

// Kind is a type of job and how to run it.
type Kind struct {
	Name    string
	Handler Handler
	// MaxAttempts bounds the attempts of a job (default 4).
	MaxAttempts int
	// MinBackoff is the wait before the first retry; the n-th retry waits
	// MinBackoff·2^(n-1), at most MaxBackoff (defaults 1 s and 1 h).
	MinBackoff, MaxBackoff time.Duration
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one that retrying cannot fix: the job fails at
// once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Request describes a job to enqueue.
type Request struct {
	Kind string
	// Args are marshalled to JSON.
	Args any
	// RunAt is when the job becomes due (zero: now).
	RunAt time.Time
	// UniqueKey, when set, makes the job unique in the store (see Mode).
	UniqueKey string
	// Mode says what an enqueue does when the unique key is taken.
	Mode store.EnqueueMode
	// MaxAttempts is stored with the job (0: DefaultMaxAttempts); a kind
	// that sets its own MaxAttempts overrides it when the job runs.
	MaxAttempts int
	// Deferred lets the store write the job later in the transaction (at
	// its commit, under PostgreSQL's group commit), saving a round trip;
	// Enqueue then reports false whether or not the job is new.
	Deferred bool
	// Group, with Deferred, lets a store that writes deferred jobs at
	// commit write two or more jobs of the same Group deferred in one
	// transaction as one job of kind Group whose arguments are
	// {"jobs": [the jobs' arguments, in order]}, without unique key
	// (UniqueKey and Mode then do not apply; see GroupArgs). A job alone
	// in its transaction is written as itself. The handler of kind Group
	// must do what the grouped jobs would have done.
	Group string
}

// GroupArgs are the arguments of a job that stands for several deferred
// jobs of one Request.Group.
type GroupArgs struct {
	Jobs []json.RawMessage `json:"jobs"`
}

// groupAppender is a store transaction that can merge the deferred jobs
// of a group (sqlstore.Tx.AppendGroupedJob).
type groupAppender interface {
	AppendGroupedJob(ctx context.Context, j store.Job, mode store.EnqueueMode, group string) error
}

// jobAppender is a store transaction that can write a job later in the
// transaction (sqlstore.Tx.AppendJob).
type jobAppender interface {
	AppendJob(ctx context.Context, j store.Job, mode store.EnqueueMode) error
}

// Enqueue adds a job in tx, the transaction of the work that asks for it,
// and reports whether a new job was created (false when its unique key was
// taken; the existing job then got Mode). Call Runner.Wake after the commit
// to have a runner of this process look at once.
func Enqueue(ctx context.Context, tx store.Tx, now time.Time, r Request) (bool, error) {
	if r.Kind == "" {
		return false, errors.New("enqueue job: kind is required")
	}
	args, err := json.Marshal(r.Args)
	if err != nil {
		return false, fmt.Errorf("enqueue %s job: %w", r.Kind, err)
	}
	if r.Args == nil {
		args = []byte("{}")
	}
	runAt := r.RunAt
	if runAt.IsZero() {
		runAt = now
	}
	max := r.MaxAttempts
	if max <= 0 {
		max = DefaultMaxAttempts
	}
	j := store.Job{ID: "job-" + strings.ToLower(ulid.Make().String()), Kind: r.Kind, Args: args,
		UniqueKey: r.UniqueKey, State: store.JobAvailable, RunAt: runAt.UTC().Truncate(time.Microsecond),
		MaxAttempts: max, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if a, ok := tx.(groupAppender); ok && r.Deferred && r.Group != "" {
		return false, a.AppendGroupedJob(ctx, j, r.Mode, r.Group)
	}
	if a, ok := tx.(jobAppender); ok && r.Deferred {
		return false, a.AppendJob(ctx, j, r.Mode)
	}
	return tx.EnqueueJob(ctx, j, r.Mode)
}

// maxAttempts is the attempts a job of the kind gets: the kind's bound
// when it sets one, else the job's.
func (k Kind) maxAttempts(j store.Job) int {
	if k.MaxAttempts > 0 {
		return k.MaxAttempts
	}
	return max(j.MaxAttempts, 1)
}

// backoff is the wait before retry number n (1-based).
func (k Kind) backoff(n int) time.Duration {
	lo, hi := k.MinBackoff, k.MaxBackoff
	if lo <= 0 {
		lo = DefaultMinBackoff
	}
	if hi <= 0 {
		hi = DefaultMaxBackoff
	}
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}
