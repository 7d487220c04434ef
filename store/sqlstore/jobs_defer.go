package sqlstore

import (
	"context"
	"strings"

	"github.com/kaizenhq/kaizen/store"
)

// Deferred job rows (Dialect.DeferOutcomes, see outcome_defer.go): the
// job an outcome enqueues (experience extraction of its task) is written
// with the group's other new jobs at Flush, as one multi-row INSERT …
// ON CONFLICT DO NOTHING RETURNING id; a job whose insert did nothing then
// gets its mode applied to the job holding its unique key (jobTaken), as
// EnqueueJob does at once. A statement that names the jobs table writes
// the pending jobs first.

type deferredJob struct {
	job   store.Job
	mode  store.EnqueueMode
	args  string
	group string // Request.Group: merged with the others of its group (jobs_group.go)
}

// AppendJob enqueues a job without reporting whether it was new. With
// Dialect.DeferOutcomes the row is written at Flush.
func (t *Tx) AppendJob(ctx context.Context, j store.Job, mode store.EnqueueMode) error {
	return t.appendJob(ctx, j, mode, "")
}

func (t *Tx) appendJob(ctx context.Context, j store.Job, mode store.EnqueueMode, group string) error {
	if !t.d.DeferOutcomes || t.deferred.off || j.ID == "" || j.Kind == "" {
		_, err := t.EnqueueJob(ctx, j, mode)
		return err
	}
	for _, p := range t.deferred.jobs {
		if p.job.ID == j.ID || (j.UniqueKey != "" && p.job.UniqueKey == j.UniqueKey) {
			// the second of a key in one group: in order, after the first
			if err := t.flushJobs(ctx); err != nil {
				return err
			}
			_, err := t.EnqueueJob(ctx, j, mode)
			return err
		}
	}
	if j.State == "" {
		j.State = store.JobAvailable
	}
	args := string(j.Args)
	if args == "" {
		args = "{}"
	}
	t.deferred.jobs = append(t.deferred.jobs, deferredJob{job: j, mode: mode, args: args, group: group})
	return nil
}

// flushJobs writes the pending jobs, many per statement.
func (t *Tx) flushJobs(ctx context.Context) error {
	stmts, finish := t.jobInserts()
	if len(stmts) == 0 {
		return nil
	}
	if err := t.pipeline(ctx, "insert jobs", stmts); err != nil {
		return err
	}
	return finish(ctx)
}

// jobInserts takes the pending jobs: the statements inserting them (in
// one pipeline with a pipeliner), and the func that, once they ran,
// applies the mode of the jobs whose insert did nothing.
func (t *Tx) jobInserts() ([]Pipelined, func(context.Context) error) {
	pending := t.deferred.jobs
	t.deferred.jobs = nil // the statements below must not recurse
	pending = mergeGroups(pending)
	const cols, perStatement = 9, 256
	var stmts []Pipelined
	inserted := map[string]bool{}
	for rest := pending; len(rest) > 0; {
		n := min(len(rest), perStatement)
		row := "(?, ?, ?, ?, ?, ?, ?, ?, '', 0, '', ?, 0)"
		q := `INSERT INTO jobs (` + jobCols + `) VALUES ` + row + strings.Repeat(", "+row, n-1) +
			` ON CONFLICT DO NOTHING RETURNING id`
		args := make([]any, 0, n*cols)
		for _, p := range rest[:n] {
			j := p.job
			var key any
			if j.UniqueKey != "" {
				key = j.UniqueKey
			}
			args = append(args, j.ID, j.Kind, p.args, key, string(j.State), at0(j.RunAt), j.Attempts, j.MaxAttempts, at0(j.CreatedAt))
		}
		stmts = append(stmts, Pipelined{SQL: q, Args: args, Row: func(s scanner) error {
			var id string
			err := s.Scan(&id)
			inserted[id] = true
			return err
		}})
		rest = rest[n:]
	}
	return stmts, func(ctx context.Context) error {
		for _, p := range pending {
			if !inserted[p.job.ID] {
				if err := t.jobTaken(ctx, p.job, p.mode, p.args); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
