package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// Background jobs. Times are microseconds since the epoch, 0 for unset.

const jobCols = `id, kind, args, unique_key, state, run_at, attempts, max_attempts, lease_owner, lease_until,
	last_error, created_at, finished_at`

func at0(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func from0(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMicro(n).UTC()
}

func scanJob(s scanner) (store.Job, error) {
	var j store.Job
	var args string
	var key *string
	var runAt, leaseUntil, created, finished int64
	err := s.Scan(&j.ID, &j.Kind, &args, &key, &j.State, &runAt, &j.Attempts, &j.MaxAttempts, &j.LeaseOwner,
		&leaseUntil, &j.LastError, &created, &finished)
	if key != nil {
		j.UniqueKey = *key
	}
	j.Args = json.RawMessage(args)
	j.RunAt, j.LeaseUntil, j.CreatedAt, j.FinishedAt = from0(runAt), from0(leaseUntil), from0(created), from0(finished)
	return j, err
}

// EnqueueJob implements store.JobStorage.
func (t *Tx) EnqueueJob(ctx context.Context, j store.Job, mode store.EnqueueMode) (bool, error) {
	if j.ID == "" || j.Kind == "" {
		return false, fmt.Errorf("enqueue job: id and kind are required: %w", store.ErrInvalid)
	}
	args := string(j.Args)
	if args == "" {
		args = "{}"
	}
	var key any
	if j.UniqueKey != "" {
		key = j.UniqueKey
	}
	if j.State == "" {
		j.State = store.JobAvailable
	}
	ok, err := t.insert(ctx, "job", `INSERT INTO jobs (`+jobCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', 0, '', ?, 0)
		ON CONFLICT DO NOTHING`, j.ID, j.Kind, args, key, string(j.State), at0(j.RunAt), j.Attempts, j.MaxAttempts,
		at0(j.CreatedAt))
	if err != nil || ok {
		return ok, err
	}
	return false, t.jobTaken(ctx, j, mode, args)
}

// jobTaken applies mode to the job holding j's unique key, after j's
// insert did nothing.
func (t *Tx) jobTaken(ctx context.Context, j store.Job, mode store.EnqueueMode, args string) error {
	if j.UniqueKey == "" || mode == store.EnqueueKeep {
		return nil
	}
	cur, err := one(ctx, t, "job "+j.UniqueKey, scanJob, `SELECT `+jobCols+` FROM jobs WHERE unique_key = ?`+t.d.ForUpdate,
		j.UniqueKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the id, not the key, was taken
	}
	if err != nil {
		return err
	}
	switch {
	case cur.State == store.JobAvailable:
		return t.change(ctx, "debounce job "+cur.ID, `UPDATE jobs SET run_at = ? WHERE id = ?`, at0(j.RunAt), cur.ID)
	case cur.State == store.JobFailed && mode == store.EnqueueRevive:
		return t.change(ctx, "revive job "+cur.ID, `UPDATE jobs SET state = 'available', run_at = ?, attempts = 0,
			args = ?, last_error = '', finished_at = 0 WHERE id = ?`, at0(j.RunAt), args, cur.ID)
	}
	return nil
}

// kindsWhere restricts a query to job kinds (all when empty).
func kindsWhere(kinds []string) (string, []any) {
	if len(kinds) == 0 {
		return "", nil
	}
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = k
	}
	return ` AND kind IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(kinds)), ", ") + `)`, args
}

// ClaimJobs implements store.JobStorage. PostgreSQL skips the rows another
// transaction is claiming (FOR UPDATE SKIP LOCKED); SQLite's single writer
// makes the update atomic.
func (t *Tx) ClaimJobs(ctx context.Context, kinds []string, owner string, now time.Time, lease time.Duration, limit int) ([]store.Job, error) {
	if limit <= 0 {
		return []store.Job{}, nil
	}
	kw, kargs := kindsWhere(kinds)
	n := at0(now)
	args := []any{owner, at0(now.Add(lease))}
	var pick string
	if t.d.Name == "postgres" {
		pick = `SELECT id FROM jobs WHERE (state = 'available' OR state = 'running')` + kw + `
		AND ((state = 'available' AND run_at <= ?) OR (state = 'running' AND lease_until < ?))
		ORDER BY run_at, id LIMIT ? FOR UPDATE SKIP LOCKED`
		args = append(append(args, kargs...), n, n, limit)
	} else {
		// The first due jobs in the order of the (state, run_at) index,
		// which ends with the key id, so the read stops after limit rows;
		// the one statement with OR read every due job and sorted them,
		// and once a backlog of due jobs built up under load each claim
		// cost as much as the backlog.
		first := func(state string) string {
			return `SELECT id, run_at FROM (SELECT id, run_at FROM jobs WHERE ` + state + kw + ` ORDER BY run_at, id LIMIT ?)`
		}
		pick = `SELECT id FROM (` + first(`state = 'available' AND run_at <= ?`) + ` UNION ALL ` +
			first(`state = 'running' AND lease_until < ?`) + `) AS firsts ORDER BY run_at, id LIMIT ?`
		for range 2 {
			args = append(append(append(args, n), kargs...), limit)
		}
		args = append(args, limit)
	}
	jobs, err := many(ctx, t, "claimed jobs", scanJob, `UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?,
		attempts = attempts + 1 WHERE id IN (`+pick+`) RETURNING `+jobCols, args...)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(jobs, func(a, b store.Job) int {
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return jobs, nil
}

// leased runs an update of a job owner holds; ErrLeaseLost when another
// owner holds it, ErrNotFound when there is no such job.
func (t *Tx) leased(ctx context.Context, what, id, owner, q string, args ...any) error {
	res, err := t.exec(ctx, q+` WHERE id = ? AND lease_owner = ? AND state = 'running'`, append(args, id, owner)...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	if _, err := t.GetJob(ctx, id); err != nil {
		return err
	}
	return fmt.Errorf("%s %s: %w", what, id, store.ErrLeaseLost)
}

// FinishJob implements store.JobStorage.
func (t *Tx) FinishJob(ctx context.Context, id, owner string, state store.JobState, retryAt time.Time, lastErr string, now time.Time) error {
	switch state {
	case store.JobCompleted, store.JobFailed:
		return t.leased(ctx, "finish job", id, owner, `UPDATE jobs SET state = ?, lease_owner = '', lease_until = 0,
			last_error = ?, finished_at = ?`, string(state), lastErr, at0(now))
	case store.JobAvailable:
		return t.leased(ctx, "retry job", id, owner, `UPDATE jobs SET state = 'available', run_at = ?, lease_owner = '',
			lease_until = 0, last_error = ?`, at0(retryAt), lastErr)
	}
	return fmt.Errorf("finish job %s: state %q: %w", id, state, store.ErrInvalid)
}

// ExtendJobLease implements store.JobStorage.
func (t *Tx) ExtendJobLease(ctx context.Context, id, owner string, until time.Time) error {
	return t.leased(ctx, "extend job lease", id, owner, `UPDATE jobs SET lease_until = ?`, at0(until))
}

// NextJobAt implements store.JobStorage.
func (t *Tx) NextJobAt(ctx context.Context, kinds []string) (time.Time, bool, error) {
	// The first row of each state in the order of the (state, run_at)
	// index, instead of the minimum of one expression over every
	// available job: with an outcome's extraction enqueued some seconds
	// ahead, tens of thousands of jobs wait, and the scan of them all was
	// most of a loaded daemon's CPU (the runner reads this whenever it
	// goes to sleep).
	kw, kargs := kindsWhere(kinds)
	next, err := one(ctx, t, "next job", func(s scanner) (*int64, error) {
		var n *int64
		return n, s.Scan(&n)
	}, `SELECT MIN(t) FROM (
		SELECT (SELECT run_at FROM jobs WHERE state = 'available'`+kw+` ORDER BY run_at LIMIT 1) AS t
		UNION ALL
		SELECT (SELECT lease_until FROM jobs WHERE state = 'running'`+kw+` ORDER BY lease_until LIMIT 1)) AS firsts`,
		append(append([]any{}, kargs...), kargs...)...)
	if err != nil || next == nil {
		return time.Time{}, false, err
	}
	return from0(*next), true, nil
}

// GetJob implements store.JobStorage.
func (t *Tx) GetJob(ctx context.Context, id string) (store.Job, error) {
	return one(ctx, t, "job "+id, scanJob, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, id)
}

// GetJobByKey implements store.JobStorage.
func (t *Tx) GetJobByKey(ctx context.Context, key string) (store.Job, error) {
	return one(ctx, t, "job "+key, scanJob, `SELECT `+jobCols+` FROM jobs WHERE unique_key = ?`, key)
}

func jobWhere(f store.JobFilter) (string, []any) {
	q, args := ` FROM jobs WHERE 1 = 1`, []any{}
	if f.Kind != "" {
		q += ` AND kind = ?`
		args = append(args, f.Kind)
	}
	if len(f.States) > 0 {
		q += ` AND state IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(f.States)), ", ") + `)`
		for _, s := range f.States {
			args = append(args, string(s))
		}
	}
	return q, args
}

// ListJobs implements store.JobStorage.
func (t *Tx) ListJobs(ctx context.Context, f store.JobFilter) ([]store.Job, error) {
	where, args := jobWhere(f)
	q, args := page(`SELECT `+jobCols+where+` ORDER BY created_at DESC, id DESC`, args, f.Limit, f.Offset)
	return many(ctx, t, "jobs", scanJob, q, args...)
}

// CountJobs implements store.JobStorage.
func (t *Tx) CountJobs(ctx context.Context, f store.JobFilter) (int64, error) {
	where, args := jobWhere(f)
	return t.count(ctx, "jobs", `SELECT COUNT(*)`+where, args...)
}

// DeleteJobs implements store.JobStorage.
func (t *Tx) DeleteJobs(ctx context.Context, finishedBefore time.Time) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM jobs WHERE state IN ('completed', 'failed') AND finished_at < ?`, at0(finishedBefore))
	if err != nil {
		return 0, fmt.Errorf("delete jobs: %w", err)
	}
	return res.RowsAffected()
}
