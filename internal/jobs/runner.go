package jobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/kaizenhq/kaizen/internal/redact"
	"github.com/kaizenhq/kaizen/store"
)

// Period is how often a periodic job runs.
type Period string

// Periods. A period starts at 00:00 UTC (Daily) or on Monday 00:00 UTC
// (Weekly).
const (
	Daily  Period = "daily"
	Weekly Period = "weekly"
)

// intervalPrefix marks a Period made by Interval.
const intervalPrefix = "every "

// Interval is the period of a job run every d: periods start at the
// multiples of d since the zero time, in UTC (for a d that divides a day,
// at 00:00 UTC and every d after). d must be at least a second.
func Interval(d time.Duration) Period { return Period(intervalPrefix + d.String()) }

// interval returns the length of a Period made by Interval.
func (p Period) interval() (time.Duration, bool) {
	s, ok := strings.CutPrefix(string(p), intervalPrefix)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second {
		return 0, false
	}
	return d, true
}

// Valid reports whether p is Daily, Weekly or a valid Interval.
func (p Period) Valid() bool {
	_, ok := p.interval()
	return ok || p == Daily || p == Weekly
}

// Start returns the start of the period containing t.
func (p Period) Start(t time.Time) time.Time {
	if d, ok := p.interval(); ok {
		return t.UTC().Truncate(d)
	}
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if p == Weekly {
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		day = day.AddDate(0, 0, -back)
	}
	return day
}

// Next returns the start of the period after the one containing t.
func (p Period) Next(t time.Time) time.Time {
	if d, ok := p.interval(); ok {
		return p.Start(t).Add(d)
	}
	if p == Weekly {
		return p.Start(t).AddDate(0, 0, 7)
	}
	return p.Start(t).AddDate(0, 0, 1)
}

// Periodic is a job enqueued once per period, when the period starts.
type Periodic struct {
	Kind   string
	Period Period
	// Args are the job's arguments for the period starting at start (nil:
	// {"period_start": start}).
	Args func(start time.Time) any
}

// Options configure a Runner.
type Options struct {
	// Now is the runner's clock (time.Now when nil).
	Now func() time.Time
	// Logger receives the runner's logs (discarded when nil).
	Logger *slog.Logger
	// Lease is how long a claimed job is held before another runner may
	// take it (default 5 minutes); a running handler renews it.
	Lease time.Duration
	// Poll bounds the wait between looks at the store, for jobs other
	// processes enqueue (default 2 s).
	Poll time.Duration
	// Concurrency is the number of jobs run at once (default 2).
	Concurrency int
}

// Stats counts what a runner did since it started, by kind.
type Stats struct {
	Owner string               `json:"owner"`
	Kinds map[string]KindStats `json:"kinds"`
}

// KindStats counts a kind's attempts by result.
type KindStats struct {
	Completed int64 `json:"completed"`
	Retried   int64 `json:"retried"`
	Failed    int64 `json:"failed"`
}

// Runner claims and runs the jobs of its registered kinds.
type Runner struct {
	st       store.Store
	opts     Options
	owner    string
	kinds    map[string]Kind
	periodic []Periodic
	wake     chan struct{}
	running  atomic.Bool
	// WakeAt's state: while Run sleeps, asleep is set and until is when
	// it next looks at the store; while it is awake, early is the first
	// due time WakeAt was given (zero: none), which shortens its next sleep.
	sleepMu sync.Mutex
	asleep  bool
	until   time.Time
	early   time.Time

	mu    sync.Mutex
	stats map[string]*KindStats
}

// New returns a runner over st; register kinds before Run.
func New(st store.Store, opts Options) *Runner {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	host, _ := os.Hostname()
	return &Runner{st: st, opts: opts, kinds: map[string]Kind{}, wake: make(chan struct{}, 1),
		owner: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), strings.ToLower(ulid.Make().String()[20:])),
		stats: map[string]*KindStats{}}
}

// Register adds a kind of job the runner runs. Registering after Run
// started, or a kind twice, panics.
func (r *Runner) Register(k Kind) {
	if r.running.Load() {
		panic("jobs: Register after Run")
	}
	if k.Name == "" || k.Handler == nil {
		panic("jobs: a kind needs a name and a handler")
	}
	if _, dup := r.kinds[k.Name]; dup {
		panic("jobs: kind registered twice: " + k.Name)
	}
	r.kinds[k.Name] = k
	r.stats[k.Name] = &KindStats{}
}

// Every makes the runner enqueue a job of a registered kind once per
// period.
func (r *Runner) Every(p Periodic) {
	if r.running.Load() {
		panic("jobs: Every after Run")
	}
	if !p.Period.Valid() {
		panic(fmt.Sprintf("jobs: invalid period %q", p.Period))
	}
	r.periodic = append(r.periodic, p)
}

// Owner is the runner's identity in job leases.
func (r *Runner) Owner() string { return r.owner }

// Wake makes a running runner look at the store at once (call it after
// committing a transaction that enqueued a job). It never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// WakeAt is Wake for work that becomes due at t (a job enqueued with
// RunAt t): it wakes Run only when Run sleeps past t. A Run sleeping until
// an earlier time looks at the store then and finds the work; a Run that
// is awake (and may have read the store before the work committed)
// sleeps at most until t. So a steady stream of outcomes, each enqueuing
// its extraction some seconds ahead, does not turn into one look at the
// store (a claim, and a read that writes SQLite's staged aggregates) per
// outcome.
func (r *Runner) WakeAt(t time.Time) {
	r.sleepMu.Lock()
	defer r.sleepMu.Unlock()
	if !r.asleep {
		if r.early.IsZero() || t.Before(r.early) {
			r.early = t
		}
		return
	}
	if t.Before(r.until) {
		r.Wake()
	}
}

// sleep returns how long Run sleeps: wait, or less if WakeAt was given
// an earlier due time while Run was awake. Run is asleep until awake.
func (r *Runner) sleep(wait time.Duration) time.Duration {
	r.sleepMu.Lock()
	defer r.sleepMu.Unlock()
	now := r.opts.Now()
	if !r.early.IsZero() {
		wait = min(wait, max(r.early.Sub(now), 0))
		r.early = time.Time{}
	}
	r.asleep, r.until = true, now.Add(wait)
	return wait
}

// awake marks Run awake (WakeAt then records due times for its next
// sleep instead of waking it).
func (r *Runner) awake() {
	r.sleepMu.Lock()
	r.asleep = false
	r.sleepMu.Unlock()
}

// Stats reports the runner's counters.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Stats{Owner: r.owner, Kinds: map[string]KindStats{}}
	for k, s := range r.stats {
		out.Kinds[k] = *s
	}
	return out
}

func (r *Runner) names() []string { return slices.Sorted(maps.Keys(r.kinds)) }

// Run runs jobs until ctx ends: it enqueues the current period's periodic
// jobs, runs every due job, then sleeps until the next job is due, a Wake,
// or the poll interval. Jobs in flight when ctx ends are handed back to the
// store (available again) and Run returns nil.
func (r *Runner) Run(ctx context.Context) error {
	r.running.Store(true)
	r.awake() // a Run that returned earlier may have left it asleep
	for {
		if err := r.EnqueuePeriodic(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logger.Warn("periodic jobs not enqueued", "err", err)
		}
		n, err := r.RunDue(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			r.opts.Logger.Warn("jobs not claimed", "err", err)
		}
		if n > 0 && err == nil {
			continue // more may be due
		}
		wait := r.opts.Poll
		if next, ok := r.nextDue(ctx); ok {
			wait = min(wait, max(next.Sub(r.opts.Now()), 0))
		}
		timer := time.NewTimer(r.sleep(wait))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-r.wake:
			timer.Stop()
		case <-timer.C:
		}
		r.awake()
	}
}

// nextDue is when the next job or period is due.
func (r *Runner) nextDue(ctx context.Context) (time.Time, bool) {
	var next time.Time
	var ok bool
	err := store.ViewRows(ctx, r.st, func(tx store.Tx) error { // jobs are never staged
		var err error
		next, ok, err = tx.NextJobAt(ctx, r.names())
		return err
	})
	if err != nil {
		return time.Time{}, false
	}
	now := r.opts.Now()
	for _, p := range r.periodic {
		if n := p.Period.Next(now); !ok || n.Before(next) {
			next, ok = n, true
		}
	}
	return next, ok
}

// periodKey is the unique key of a periodic job's period.
func periodKey(kind string, start time.Time) string {
	return kind + "@" + start.UTC().Format(time.RFC3339)
}

// EnqueuePeriodic enqueues the current period's job of every periodic
// schedule (a no-op for the periods already enqueued, by this or another
// runner).
func (r *Runner) EnqueuePeriodic(ctx context.Context) error {
	if len(r.periodic) == 0 {
		return nil
	}
	now := r.opts.Now()
	return r.st.Update(ctx, func(tx store.Tx) error {
		for _, p := range r.periodic {
			start := p.Period.Start(now)
			var args any = map[string]any{"period_start": start, "period": p.Period}
			if p.Args != nil {
				args = p.Args(start)
			}
			if _, err := Enqueue(ctx, tx, now, Request{Kind: p.Kind, Args: args, RunAt: start,
				UniqueKey: periodKey(p.Kind, start)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// RunDue claims every job of the runner's kinds that is due now and runs
// them (Concurrency at a time), returning how many it ran. Tests call it
// directly with a settable clock.
func (r *Runner) RunDue(ctx context.Context) (int, error) {
	if len(r.kinds) == 0 {
		return 0, nil
	}
	var claimed []store.Job
	err := r.st.Update(ctx, func(tx store.Tx) error {
		var err error
		claimed, err = tx.ClaimJobs(ctx, r.names(), r.owner, r.opts.Now(), r.opts.Lease, r.opts.Concurrency*4)
		return err
	})
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, r.opts.Concurrency)
	var wg sync.WaitGroup
	for _, j := range claimed {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r.run(ctx, j)
		})
	}
	wg.Wait()
	return len(claimed), nil
}

// run works one claimed job and records its result.
func (r *Runner) run(ctx context.Context, sj store.Job) {
	k := r.kinds[sj.Kind]
	stop := r.keepLease(ctx, sj)
	err := r.call(ctx, k, Job{sj})
	stop()
	log := r.opts.Logger.With("job", sj.ID, "kind", sj.Kind, "attempt", sj.Attempts)
	now := r.opts.Now()
	state, retryAt, msg := store.JobCompleted, time.Time{}, ""
	switch {
	case err == nil:
	case ctx.Err() != nil: // stopped: hand the job back untouched by this attempt's result
		state, retryAt, msg = store.JobAvailable, now, "runner stopped: "+err.Error()
	case IsPermanent(err) || sj.Attempts >= k.maxAttempts(sj):
		state, msg = store.JobFailed, err.Error()
		log.Warn("job failed", "err", err)
	default:
		state, retryAt, msg = store.JobAvailable, now.Add(k.backoff(sj.Attempts)), err.Error()
		log.Info("job will be retried", "at", retryAt, "err", err)
	}
	// An error can quote what the job read (a model's reply, a record):
	// it is stored, so it is scrubbed like every untrusted text.
	msg, _ = redact.Redact(msg)
	// Finish even when ctx ended: the result must not be lost.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	ferr := r.st.Update(fctx, func(tx store.Tx) error {
		return tx.FinishJob(fctx, sj.ID, r.owner, state, retryAt, msg, now)
	})
	if ferr != nil {
		log.Warn("job result not recorded (another runner holds it now)", "err", ferr)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats[sj.Kind]
	switch {
	case state == store.JobCompleted:
		s.Completed++
	case state == store.JobFailed:
		s.Failed++
	case ctx.Err() == nil:
		s.Retried++
	}
}

// call runs a handler, turning a panic into an error.
func (r *Runner) call(ctx context.Context, k Kind, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return k.Handler(ctx, j)
}

// keepLease renews a running job's lease every third of the lease until
// the returned function is called.
func (r *Runner) keepLease(ctx context.Context, j store.Job) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		every := r.opts.Lease / 3
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				until := r.opts.Now().Add(r.opts.Lease)
				if err := r.st.Update(ctx, func(tx store.Tx) error {
					return tx.ExtendJobLease(ctx, j.ID, r.owner, until)
				}); err != nil && ctx.Err() == nil {
					r.opts.Logger.Warn("job lease not renewed", "job", j.ID, "err", err)
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
