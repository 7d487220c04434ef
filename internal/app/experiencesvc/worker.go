package experiencesvc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// Background extraction of task experiences (the daemon's learning without
// anyone asking). After RecordOutcome commits, the task is queued; once no
// outcome of it arrived for experience.auto_extract_delay, the worker calls
// ExtractExperience, one task at a time. The outcome table is the durable
// record: on start the worker rescans recent outcomes whose task has turns
// but no experience, so a crash or a stop loses nothing, and every
// experience.auto_extract_rescan it looks at the outcomes recorded since
// its last look, which finds those other processes recorded. Extraction is
// cached per task, so a task queued twice costs one model call; a task
// given up is left alone by the periodic looks.

const (
	// queueMax bounds the tasks waiting for extraction; a task that does
	// not fit is found again by the rescan of the next start.
	queueMax = 1024
	// rescanWindow and rescanMax bound the rescan on start: outcomes
	// recorded in the last 7 days, at most rescanMax tasks in all
	// (newest first per project), reading at most rescanOutcomes outcomes
	// per project.
	rescanWindow   = 7 * 24 * time.Hour
	rescanMax      = 256
	rescanOutcomes = 1000
	// maxAttempts is the number of extraction attempts of a queued task
	// (the first and three retries) before it is given up until its next
	// outcome or the next start.
	maxAttempts = 4
	// minBackoff is the least wait before a retry: the n-th retry waits
	// max(delay, minBackoff)·2^(n-1), so 1s, 2s, 4s with a short delay.
	minBackoff = time.Second
	// rescanSlack widens each periodic rescan back in time, for outcomes
	// committed late or stamped by a clock a little behind.
	rescanSlack = 30 * time.Second
)

// ExperienceWorkerStats describes the background extraction worker.
type ExperienceWorkerStats struct {
	// Running is true while the worker runs.
	Running bool `json:"running"`
	// Reason says why the worker does not run (empty while it runs).
	Reason string `json:"reason,omitempty"`
	// Mode is the extraction mode and Delay the quiet time after a task's
	// last outcome.
	Mode  experience.Mode `json:"mode,omitempty"`
	Delay time.Duration   `json:"delay_ns,omitempty"`
	// RescanDone is true once the rescan of recent outcomes on start has
	// finished (successfully or not).
	RescanDone bool `json:"rescan_done"`
	// Pending counts the queued tasks (waiting or backing off).
	Pending int `json:"pending"`
	// Enqueued counts the tasks queued (a task queued again while waiting
	// counts once); Rescanned those queued by the rescan on start.
	Enqueued  int64 `json:"enqueued"`
	Rescanned int64 `json:"rescanned"`
	// Extracted counts the experiences extracted; Cached the tasks found
	// already extracted; Skipped those with nothing to learn from (no
	// captured turns); Retried the failed attempts that were retried;
	// Failed the tasks given up after maxAttempts attempts; Dropped the
	// tasks not queued because the queue was full.
	Extracted int64 `json:"extracted"`
	Cached    int64 `json:"cached"`
	Skipped   int64 `json:"skipped"`
	Retried   int64 `json:"retried"`
	Failed    int64 `json:"failed"`
	Dropped   int64 `json:"dropped"`
	// ModelCalls counts the chat model calls of the extractions.
	ModelCalls int64 `json:"model_calls"`
}

// extractKey names a queued task.
type extractKey struct{ project, task string }

// extractJob is a queued task: extracted at due, after attempts failed ones.
type extractJob struct {
	due      time.Time
	seq      uint64
	attempts int
}

// extractWorker is the background extraction worker of an engine.
type extractWorker struct {
	s      *Service
	delay  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}

	mu      sync.Mutex
	pending map[extractKey]*extractJob
	seq     uint64
	stopped bool
	// gaveUp holds the tasks whose extraction failed for good or cannot
	// run: the periodic rescans leave them alone (a new outcome recorded
	// through this engine, or the next start, tries again).
	gaveUp map[extractKey]bool

	rescanDone atomic.Bool

	enqueued, rescanned, extracted, cached, skipped atomic.Int64
	retried, failed, dropped, calls                 atomic.Int64
}

// autoExtractOff says why background extraction cannot run, or "" when
// it can.
func (s *Service) autoExtractOff() string {
	c := s.cfg
	switch {
	case !c.AutoExtract:
		return "experience.auto_extract is false"
	case !c.ExtractionEnabled:
		return "experience.extraction_enabled is false"
	case c.Mode == experience.ModeMinimal:
		return "experience.mode is minimal (no model calls)"
	case !s.HasChatModel():
		return "no chat model is configured ([[model.chat]] in kaizen.toml); agents can still extract " +
			"through extraction_request and extraction_submit"
	}
	return ""
}

// StartExperienceWorker starts the background extraction of task
// experiences: after an outcome of a task is recorded and no other outcome
// of it arrived for experience.auto_extract_delay, the task's experience
// is extracted with the chat model. It first queues the tasks of the last
// 7 days' outcomes that have captured turns but no experience. It runs
// until ctx ends or the engine is closed; Close waits for it.
//
// It does nothing (and returns nil) when no chat model is configured, when
// extraction or experience.auto_extract is disabled, or in minimal mode;
// ExperienceWorkerStats says why. Only the daemon starts it: one-shot
// commands would exit before the quiet delay. Starting it twice, or after
// Close, is a conflict.
func (s *Service) StartExperienceWorker(ctx context.Context) error {
	const op = "start experience worker"
	s.worker.mu.Lock()
	defer s.worker.mu.Unlock()
	switch {
	case s.worker.closed:
		return &app.Error{Op: op, Kind: app.KindConflict, Message: "the engine is closed"}
	case s.worker.current.Load() != nil:
		return &app.Error{Op: op, Kind: app.KindConflict, Message: "the experience worker is already running"}
	}
	if why := s.autoExtractOff(); why != "" {
		s.env.Logger.Debug("background experience extraction is off", "reason", why)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &extractWorker{s: s, delay: s.cfg.AutoExtractDelay, cancel: cancel, done: make(chan struct{}),
		wake: make(chan struct{}, 1), pending: map[extractKey]*extractJob{}, gaveUp: map[extractKey]bool{}}
	s.worker.current.Store(w)
	go w.run(ctx)
	return nil
}

// ExperienceWorkerStats reports the background extraction worker's state
// and counters (zero counters when it never ran).
func (s *Service) ExperienceWorkerStats() ExperienceWorkerStats {
	w := s.worker.current.Load()
	if w == nil {
		st := ExperienceWorkerStats{Reason: s.autoExtractOff()}
		if st.Reason == "" {
			st.Reason = "not started (only kaizen serve extracts in the background)"
		}
		return st
	}
	w.mu.Lock()
	st := ExperienceWorkerStats{Running: !w.stopped, Pending: len(w.pending)}
	w.mu.Unlock()
	if !st.Running {
		st.Reason = "stopped"
	}
	st.Mode, st.Delay, st.RescanDone = s.cfg.Mode, w.delay, w.rescanDone.Load()
	st.Enqueued, st.Rescanned, st.Extracted = w.enqueued.Load(), w.rescanned.Load(), w.extracted.Load()
	st.Cached, st.Skipped, st.Retried = w.cached.Load(), w.skipped.Load(), w.retried.Load()
	st.Failed, st.Dropped, st.ModelCalls = w.failed.Load(), w.dropped.Load(), w.calls.Load()
	return st
}

// OutcomeRecorded queues a task whose outcome was committed, when the
// worker runs. It never blocks on I/O and never fails.
func (s *Service) OutcomeRecorded(project, taskID string) {
	if w := s.worker.current.Load(); w != nil && taskID != "" {
		w.enqueue(extractKey{project, taskID}, false)
	}
}

// stopExperienceWorker stops the worker, if one runs, and waits for it: an
// extraction in flight has its context cancelled (its writes are one
// transaction, so nothing is half written).
func (s *Service) stopExperienceWorker() {
	s.worker.mu.Lock()
	s.worker.closed = true
	w := s.worker.current.Load()
	s.worker.mu.Unlock()
	if w == nil {
		return
	}
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.cancel()
	<-w.done
}

// enqueue queues a task, due after the quiet delay. A task already queued
// is pushed back to the new due time (debounce) and gets its attempts
// back. It reports whether the task was newly queued.
func (w *extractWorker) enqueue(k extractKey, rescan bool) bool {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return false
	}
	if rescan && w.gaveUp[k] {
		w.mu.Unlock()
		return false
	}
	delete(w.gaveUp, k)
	due := time.Now().Add(w.delay)
	j, ok := w.pending[k]
	switch {
	case ok:
		if rescan {
			w.mu.Unlock()
			return false
		}
		j.due, j.attempts = due, 0
	case len(w.pending) >= queueMax:
		w.mu.Unlock()
		w.dropped.Add(1)
		w.s.env.Logger.Warn("experience extraction queue is full: the task is left for the next start",
			"project", k.project, "bead_id", k.task, "queued", queueMax)
		return false
	default:
		w.seq++
		w.pending[k] = &extractJob{due: due, seq: w.seq}
		w.enqueued.Add(1)
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return !ok
}

// retry queues a failed task again after a backoff, unless a new outcome
// queued it meanwhile (that one wins, with fresh attempts).
func (w *extractWorker) retry(k extractKey, attempts int) {
	backoff := max(w.delay, minBackoff) << (attempts - 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.pending[k]; ok || w.stopped {
		return
	}
	w.seq++
	w.pending[k] = &extractJob{due: time.Now().Add(backoff), seq: w.seq, attempts: attempts}
}

// next takes the queued task due first if it is due by now; otherwise it
// returns how long to wait for the first one (negative: nothing queued).
func (w *extractWorker) next(now time.Time) (extractKey, *extractJob, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var (
		bestK extractKey
		best  *extractJob
	)
	for k, j := range w.pending {
		if best == nil || j.due.Before(best.due) || (j.due.Equal(best.due) && j.seq < best.seq) {
			bestK, best = k, j
		}
	}
	if best == nil {
		return extractKey{}, nil, -1
	}
	if wait := best.due.Sub(now); wait > 0 {
		return extractKey{}, nil, wait
	}
	delete(w.pending, bestK)
	return bestK, best, 0
}

func (w *extractWorker) run(ctx context.Context) {
	defer close(w.done)
	log := w.s.env.Logger
	log.Debug("background experience extraction started", "mode", w.s.cfg.Mode, "delay", w.delay)
	started := w.s.env.Now()
	if err := w.rescan(ctx, started.Add(-rescanWindow)); err != nil && ctx.Err() == nil {
		log.Warn("experience worker: rescan of recent outcomes failed; new outcomes are still extracted", "err", err)
	}
	w.rescanDone.Store(true)
	// Outcomes recorded by other processes never pass through this engine:
	// look for them periodically, from a little before the last look (an
	// outcome's time is its recording time, give or take clock skew and a
	// slow commit).
	every := w.s.cfg.AutoExtractRescan
	looked := started
	lookAgain := func() {
		now := w.s.env.Now()
		if err := w.rescan(ctx, looked.Add(-every-rescanSlack)); err != nil && ctx.Err() == nil {
			log.Warn("experience worker: periodic rescan failed", "err", err)
			return
		}
		looked = now
	}
	rescans := time.NewTicker(every)
	defer rescans.Stop()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for ctx.Err() == nil {
		select {
		case <-rescans.C:
			lookAgain()
		default:
		}
		k, j, wait := w.next(time.Now())
		if j != nil {
			w.extract(ctx, k, j)
			continue
		}
		var tick <-chan time.Time
		if wait >= 0 {
			timer.Reset(wait)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-tick:
		case <-rescans.C:
			lookAgain()
		}
		timer.Stop()
	}
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	log.Debug("background experience extraction stopped")
}

// extract extracts one queued task's experience, retrying failures with
// backoff.
func (w *extractWorker) extract(ctx context.Context, k extractKey, j *extractJob) {
	log := w.s.env.Logger.With("project", k.project, "bead_id", k.task)
	res, err := w.s.ExtractExperience(ctx, ExperienceInput{Project: k.project, TaskID: k.task})
	if ctx.Err() != nil {
		return // stopping: the next start finds the task again
	}
	if err == nil {
		w.calls.Add(int64(res.Calls))
		switch {
		case res.Cached:
			w.cached.Add(1)
			log.Debug("experience already extracted")
		case res.Experience == nil:
			// No experience, only rule signals (minimal mode or no chat
			// model, which the worker does not start with).
			w.skipped.Add(1)
			log.Debug("no experience extracted", "message", res.Message)
		default:
			w.extracted.Add(1)
			log.Info("experience extracted in the background", "mode", res.Mode, "llm_calls", res.Calls,
				"signals", len(res.Signals), "heuristics", len(res.Heuristics))
		}
		return
	}
	switch app.KindOf(err) {
	case app.KindNotFound: // no captured turns: nothing to learn from
		w.skipped.Add(1)
		log.Debug("no captured turns: nothing to extract")
		return
	case app.KindConflict: // extraction disabled or no model
		w.skipped.Add(1)
		w.giveUp(k)
		log.Debug("experience not extracted", "err", err)
		return
	}
	j.attempts++
	if j.attempts >= maxAttempts {
		w.failed.Add(1)
		w.giveUp(k)
		log.Warn("background experience extraction failed; giving up until the task's next outcome or the next start",
			"attempts", j.attempts, "err", err)
		return
	}
	w.retried.Add(1)
	log.Warn("background experience extraction failed; will retry", "attempt", j.attempts, "err", err)
	w.retry(k, j.attempts)
}

// giveUp keeps the periodic rescans from queueing a task again.
func (w *extractWorker) giveUp(k extractKey) {
	w.mu.Lock()
	w.gaveUp[k] = true
	w.mu.Unlock()
}

// rescan queues the tasks of the outcomes recorded since a time that have
// captured turns but no experience (and that the worker did not give up).
func (w *extractWorker) rescan(ctx context.Context, since time.Time) error {
	s := w.s
	const op = "rescan outcomes"
	projects, err := s.projects(ctx)
	if err != nil {
		return err
	}
	if floor := s.env.Now().Add(-rescanWindow); since.Before(floor) {
		since = floor
	}
	before := w.rescanned.Load()
	left := rescanMax
	for _, p := range projects {
		if left <= 0 || ctx.Err() != nil {
			break
		}
		var tasks []string
		err := s.env.View(ctx, op, func(tx store.Tx) error {
			tasks = tasks[:0]
			outs, err := tx.ListOutcomes(ctx, p, store.OutcomeFilter{Since: since, Limit: rescanOutcomes})
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			for _, o := range outs {
				if len(tasks) >= left {
					break
				}
				if o.TaskID == "" || seen[o.TaskID] {
					continue
				}
				seen[o.TaskID] = true
				if _, err := tx.GetExperience(ctx, p, o.TaskID); err == nil {
					continue
				} else if !errors.Is(err, store.ErrNotFound) {
					return err
				}
				turns, err := tx.ListTurns(ctx, p, store.TurnFilter{TaskID: o.TaskID, Limit: 1})
				if err != nil {
					return err
				}
				if len(turns) > 0 {
					tasks = append(tasks, o.TaskID)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, t := range tasks {
			if w.enqueue(extractKey{p, t}, true) {
				w.rescanned.Add(1)
				left--
			}
		}
	}
	if n := w.rescanned.Load() - before; n > 0 {
		s.env.Logger.Info("experience worker: queued tasks whose outcome has no extracted experience yet", "tasks", n)
	}
	return nil
}

// workerState is the service's handle on its background worker: current
// is nil unless StartExperienceWorker started it; mu serialises starting
// it and Close, and closed refuses a start after Close.
type workerState struct {
	mu      sync.Mutex
	current atomic.Pointer[extractWorker]
	closed  bool
}
