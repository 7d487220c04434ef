package experiencesvc

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
)

// Grouped extraction jobs (issue 17). Under the group commit one
// transaction records the outcomes of many tasks; the extraction jobs of
// the tasks recorded there for the first time are written as one job of
// KindExtractGroup listing them (jobs.Request.Group), instead of a row
// each. The group's job is due when the last of them is. It extracts each
// listed task whose outcome is still the one that listed it: a later
// outcome of the task (an explicit report replacing an inferred one)
// enqueued the task's own job (KindExtract, by its unique key), which
// extracts it once the task has been quiet for the delay. Extraction is
// cached per task, so a task extracted by another job costs no model call.
//
// A failure of one task's extraction is retried with the group's job,
// with the same attempts and backoff as KindExtract; the tasks already
// extracted are then cached. A permanent failure of one task fails only
// that task. When the attempts are spent the job fails, and as with
// KindExtract the task's next outcome enqueues its extraction again.

// KindExtractGroup is the job kind of a group of extractions.
const KindExtractGroup = "experience.extract-group"

// ExtractGroupJob is the job kind that extracts a group of tasks.
func (s *Service) ExtractGroupJob() jobs.Kind {
	return jobs.Kind{Name: KindExtractGroup, MaxAttempts: extractAttempts,
		MinBackoff: max(s.cfg.AutoExtractDelay, time.Second), Handler: s.extractGroupJob}
}

func (s *Service) extractGroupJob(ctx context.Context, j jobs.Job) error {
	var g jobs.GroupArgs
	if err := j.Decode(&g); err != nil {
		return err
	}
	if why := s.AutoExtractOff(); why != "" {
		// as extractTask would say for each task, without reading them
		s.env.Logger.Debug("background experience extraction is off", "job", j.ID, "tasks", len(g.Jobs), "reason", why)
		return nil
	}
	var args []extractArgs
	for i, raw := range g.Jobs {
		var a extractArgs
		if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
			s.env.Logger.Warn("grouped extraction: bad arguments", "job", j.ID, "index", i, "error", err)
			continue
		}
		args = append(args, a)
	}
	current, err := s.currentOutcomes(ctx, args)
	if err != nil {
		return err
	}
	var retry error
	for i, a := range args {
		if !current[i] {
			continue // replaced or forgotten: the task's own job, if any, extracts it
		}
		if err := s.extractTask(ctx, a); err != nil {
			if jobs.IsPermanent(err) {
				s.env.Logger.Warn("grouped extraction failed", "project", a.Project, "bead_id", a.TaskID, "error", err)
				continue
			}
			retry = errors.Join(retry, err)
		}
	}
	return retry
}

// currentOutcomes says, for each of args, whether its outcome is still
// its task's outcome, in one read of outcome rows (never staged, so
// without writing SQLite's staged aggregates first).
func (s *Service) currentOutcomes(ctx context.Context, args []extractArgs) ([]bool, error) {
	current := make([]bool, len(args))
	if len(args) == 0 {
		return current, nil
	}
	err := store.ViewRows(ctx, s.env.Store, func(tx store.Tx) error {
		for i, a := range args {
			outs, err := tx.ListOutcomes(ctx, a.Project, store.OutcomeFilter{TaskID: a.TaskID, Limit: 1})
			if err != nil {
				return err
			}
			current[i] = len(outs) == 1 && outs[0].ID == a.Outcome
		}
		return nil
	})
	return current, err
}
