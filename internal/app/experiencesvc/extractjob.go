package experiencesvc

import (
	"context"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
)

// Background extraction of task experiences (the daemon's learning without
// anyone asking) runs on the durable job runner (package internal/jobs).
// Recording an outcome enqueues the task's extraction in the same
// transaction (EnqueueExtraction), due experience.auto_extract_delay later;
// another outcome of the task within the delay pushes it back (debounce).
// The daemon's runner calls ExtractExperience when it is due: failures are
// retried with backoff, then the job fails until the task's next outcome
// revives it. Extraction is cached per task, so later outcomes cost no
// model call. Jobs are rows of the store: outcomes recorded by any process
// (a CLI command, an MCP server over stdio, another daemon) are extracted,
// and a crash or a stop loses nothing.

// KindExtract is the job kind of a task's experience extraction.
const KindExtract = "experience.extract"

// extractArgs are the arguments of an extraction job.
type extractArgs struct {
	Project string `json:"project"`
	TaskID  string `json:"bead_id"`
	// Outcome is the id of the outcome that enqueued the job; a grouped
	// extraction (KindExtractGroup) skips the task when it is no longer
	// the task's outcome.
	Outcome string `json:"outcome,omitempty"`
}

// extractAttempts bounds the attempts of an extraction (the first and
// three retries).
const extractAttempts = 4

// AutoExtractOff says why background extraction cannot run in this
// process, or "" when it can.
func (s *Service) AutoExtractOff() string {
	if why := s.autoExtractDisabled(); why != "" {
		return why
	}
	if !s.HasChatModel() {
		return "no chat model is configured ([[model.chat]] in kaizen.toml); agents can still extract " +
			"through extraction_request and extraction_submit"
	}
	return ""
}

// autoExtractDisabled says why the configuration turns background
// extraction off, or "". A process without a chat model still queues the
// jobs: the daemon that runs them may have one (a job it cannot run
// completes without a call).
func (s *Service) autoExtractDisabled() string {
	c := s.cfg
	switch {
	case !c.AutoExtract:
		return "experience.auto_extract is false"
	case !c.ExtractionEnabled:
		return "experience.extraction_enabled is false"
	case c.Mode == experience.ModeMinimal:
		return "experience.mode is minimal (no model calls)"
	}
	return ""
}

// EnqueueExtraction queues, in the transaction that records a task's
// outcome, the extraction of the task's experience once the task has been
// quiet for experience.auto_extract_delay. It does nothing when the
// configuration turns background extraction off. first says that the
// outcome replaced none of the task's: the job may then be grouped with
// the other first outcomes of the transaction (KindExtractGroup), since
// there is no job of the task to debounce or revive. A replacing outcome
// (an explicit report after an inferred one) debounces or revives the
// task's job by its unique key, as before.
func (s *Service) EnqueueExtraction(ctx context.Context, tx store.Tx, project, taskID, outcomeID string, first bool, now time.Time) error {
	due, ok := s.ExtractionDue(now)
	if taskID == "" || !ok {
		return nil
	}
	r := jobs.Request{Kind: KindExtract, Args: extractArgs{Project: project, TaskID: taskID, Outcome: outcomeID},
		RunAt: due, UniqueKey: KindExtract + "/" + project + "/" + taskID,
		Mode: store.EnqueueRevive, MaxAttempts: extractAttempts, Deferred: true}
	if first && outcomeID != "" {
		r.Group = KindExtractGroup
	}
	_, err := jobs.Enqueue(ctx, tx, now, r)
	return err
}

// ExtractionDue is when the extraction job EnqueueExtraction enqueues at
// now becomes due; false when it enqueues none (the job runner need not
// wake for it).
func (s *Service) ExtractionDue(now time.Time) (time.Time, bool) {
	if s.autoExtractDisabled() != "" {
		return time.Time{}, false
	}
	return now.Add(s.cfg.AutoExtractDelay), true
}

// ExtractJob is the job kind that extracts a task's experience.
func (s *Service) ExtractJob() jobs.Kind {
	return jobs.Kind{Name: KindExtract, MaxAttempts: extractAttempts,
		MinBackoff: max(s.cfg.AutoExtractDelay, time.Second), Handler: s.extractJob}
}

func (s *Service) extractJob(ctx context.Context, j jobs.Job) error {
	var a extractArgs
	if err := j.Decode(&a); err != nil {
		return err
	}
	return s.extractTask(ctx, a)
}

// extractTask runs the extraction of one task's job.
func (s *Service) extractTask(ctx context.Context, a extractArgs) error {
	log := s.env.Logger.With("project", a.Project, "bead_id", a.TaskID)
	if why := s.AutoExtractOff(); why != "" {
		log.Debug("background experience extraction is off", "reason", why)
		return nil
	}
	res, err := s.ExtractExperience(ctx, ExperienceInput{Project: a.Project, TaskID: a.TaskID})
	switch {
	case err == nil && res.Cached:
		log.Debug("experience already extracted")
	case err == nil && res.Experience == nil:
		log.Debug("no experience extracted", "message", res.Message)
	case err == nil:
		log.Info("experience extracted in the background", "mode", res.Mode, "llm_calls", res.Calls,
			"signals", len(res.Signals), "heuristics", len(res.Heuristics))
	case app.KindOf(err) == app.KindNotFound: // no captured turns: nothing to learn from
		log.Debug("no captured turns: nothing to extract")
		return nil
	case app.KindOf(err) == app.KindConflict || app.KindOf(err) == app.KindInvalid:
		return jobs.Permanent(err)
	}
	return err
}
