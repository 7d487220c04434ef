package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Prefetched reads of a group (issue 17, PostgreSQL's group commit).
// Recording an outcome reads three things about its task, one statement
// each: the task's previous outcome (ListOutcomes by task, limit 1), the
// tracked task under its row lock (LockTask) and the task's errors
// (ErrorsByTask). On the writer's connection each is a round trip, and a
// group of N outcomes made 3N of them one after the other. Prefetch reads
// them for every outcome a group is about to record (the requests'
// store.WriteHint) in three statements, after the lock that serialises
// the outcomes of those tasks (LockKey "outcome/<task>") and in the order
// the single reads keep: the tasks are locked (in id order) before their
// errors are read, so an errors read never precedes the wait for a task's
// lock.
//
// A prefetched answer is served only while it is still the answer SQL
// would give:
//   - any statement of the transaction whose text names the table
//     (outcomes, tasks, errors as a word) drops every prefetched answer of
//     that table before it runs;
//   - AppendOutcome (whose row may be deferred, outcome_defer.go) drops its
//     task's prefetched outcome, UpdateTask its task's prefetched row;
//   - Mark (a savepoint) drops everything: a rolled-back savepoint could
//     undo what an answer was kept in step with.
//
// Only the exact reads of the recording path are served (ListOutcomes
// with a task and limit 1 and no other filter, LockTask, ErrorsByTask with
// resolved errors); everything else goes to SQL as before.

type prefetchKey struct{ project, task string }

type prefetched struct {
	outcomes map[prefetchKey]*learning.Outcome     // nil: the task has none
	tasks    map[prefetchKey]*learning.Task        // nil: not tracked
	errors   map[prefetchKey][]learning.ErrorEntry // read with the resolved ones
	quiet    bool                                  // the current statement keeps the answers
}

var (
	namesOutcomes = regexp.MustCompile(`\boutcomes\b`)
	namesTasks    = regexp.MustCompile(`\btasks\b`)
	namesErrors   = regexp.MustCompile(`\berrors\b`)
)

// invalidate drops the answers of every table the statement q names.
func (p *prefetched) invalidate(q string) {
	if p == nil || p.quiet {
		return
	}
	if len(p.outcomes) > 0 && strings.Contains(q, "outcomes") && namesOutcomes.MatchString(q) {
		clear(p.outcomes)
	}
	if len(p.tasks) > 0 && strings.Contains(q, "tasks") && namesTasks.MatchString(q) {
		clear(p.tasks)
	}
	if len(p.errors) > 0 && strings.Contains(q, "errors") && namesErrors.MatchString(q) {
		clear(p.errors)
	}
}

// quietly runs the next statements without dropping answers (the
// prefetch's own reads, and writes that drop their own key); the returned
// func ends it.
func (p *prefetched) quietly() func() {
	if p == nil || p.quiet {
		return func() {}
	}
	p.quiet = true
	return func() { p.quiet = false }
}

// Prefetched reports how many tasks' reads the transaction prefetched and
// still holds (for tests).
func (t *Tx) Prefetched() (outcomes, tasks, errors int) {
	if t.pre == nil {
		return 0, 0, 0
	}
	return len(t.pre.outcomes), len(t.pre.tasks), len(t.pre.errors)
}

// Prefetch reads, for the tasks named by hints, what recording their
// outcomes reads (see above), taking first the locks those recordings
// take (LockKey "outcome/<task>"). It does nothing in a transaction with
// savepoints (Mark) or on SQLite, whose writer's reads are local. Hints
// for tasks already prefetched are skipped, so a writer may call it again
// for requests that joined its group late.
func (t *Tx) Prefetch(ctx context.Context, hints []store.WriteHint) error {
	if t.d.Name != Postgres.Name || t.deferred.off || len(hints) == 0 {
		return nil
	}
	if t.pre == nil {
		t.pre = &prefetched{outcomes: map[prefetchKey]*learning.Outcome{},
			tasks: map[prefetchKey]*learning.Task{}, errors: map[prefetchKey][]learning.ErrorEntry{}}
	}
	byProject := map[string][]string{}
	for _, h := range hints {
		k := prefetchKey{h.Project, h.TaskID}
		_, o := t.pre.outcomes[k]
		_, tk := t.pre.tasks[k]
		_, e := t.pre.errors[k]
		if o && tk && e {
			continue
		}
		byProject[h.Project] = append(byProject[h.Project], h.TaskID)
	}
	projects := make([]string, 0, len(byProject))
	for p, tasks := range byProject {
		slices.Sort(tasks)
		byProject[p] = slices.Compact(tasks)
		projects = append(projects, p)
	}
	slices.Sort(projects)
	for _, p := range projects { // the recordings' locks, in a fixed order
		for _, task := range byProject[p] {
			if err := t.LockKey(ctx, p, "outcome/"+task); err != nil {
				return err
			}
		}
	}
	defer t.pre.quietly()()
	for _, p := range projects {
		if err := t.prefetchProject(ctx, p, byProject[p]); err != nil {
			return err
		}
	}
	// The patterns, after the tasks (the order recording locks them in).
	contents := map[string][]string{}
	for _, h := range hints {
		contents[h.Project] = append(contents[h.Project], h.Patterns...)
	}
	for _, p := range slices.Sorted(maps.Keys(contents)) {
		if err := t.prefetchPatterns(ctx, p, contents[p]); err != nil {
			return err
		}
	}
	return nil
}

// prefetchPatterns locks the patterns with the given contents, in id
// order, remembers them and their content lookups in the aggregate cache
// as FindPatternsByContent and LockPattern would, then reads their
// maturity records (after the locks, which guard them) as GetMaturity
// would. Rows the cache already holds locked or staged are kept; a content
// that names no pattern is not remembered (another server may create it).
func (t *Tx) prefetchPatterns(ctx context.Context, project string, contents []string) error {
	if t.agg == nil || !t.rowLocks() || len(contents) == 0 {
		return nil
	}
	want := map[string]string{} // content hash → content key
	for _, c := range contents {
		if _, ok := t.agg.content[t.contentKey(project, c)]; !ok {
			want[contentHash(c)] = learning.ContentKey(c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	hashes := slices.Sorted(maps.Keys(want))
	found, err := many(ctx, t, "patterns", func(s scanner) (hashedPattern, error) {
		var ps patternScan
		var h hashedPattern
		if err := s.Scan(append(ps.dest(), &h.hash, &h.key)...); err != nil {
			return h, err
		}
		var err error
		h.p, err = ps.finish()
		return h, err
	}, `SELECT `+patternCols+`, content_hash, content_key FROM patterns
		WHERE project = ? AND content_hash = ANY(?) ORDER BY id`+t.d.ForUpdate, project, hashes)
	if err != nil {
		return fmt.Errorf("prefetch patterns: %w", err)
	}
	byContent := map[string][]learning.Pattern{}
	var fresh []string
	for _, h := range found {
		if want[h.hash] != h.key {
			continue // a hash collision: not the content looked up
		}
		byContent[h.hash] = append(byContent[h.hash], h.p)
		k := patternKey(project, h.p.ID)
		if e, ok := t.agg.rows[k]; ok && e.locked {
			continue // the cache's state is this transaction's
		}
		t.rememberLocked(k, clonePattern(h.p), true, true)
		t.forgetClean(maturityKey(project, h.p.ID))
		fresh = append(fresh, h.p.ID)
	}
	for hash, ps := range byContent {
		slices.SortFunc(ps, func(a, b learning.Pattern) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		ids := make([]string, len(ps))
		for i, p := range ps {
			ids[i] = p.ID
		}
		t.agg.content[project+"\x00"+hash] = ids
	}
	if len(fresh) == 0 {
		return nil
	}
	ms, err := many(ctx, t, "maturity", scanMaturity,
		`SELECT `+maturityCols+` FROM maturity WHERE project = ? AND pattern_id = ANY(?)`, project, fresh)
	if err != nil {
		return fmt.Errorf("prefetch maturity: %w", err)
	}
	for _, m := range ms {
		k := maturityKey(project, m.PatternID)
		if _, ok := t.agg.rows[k]; !ok {
			t.rememberLocked(k, m, true, true)
		}
	}
	return nil
}

type hashedPattern struct {
	p         learning.Pattern
	hash, key string
}

func (t *Tx) prefetchProject(ctx context.Context, project string, tasks []string) error {
	// Previous outcomes, of the tasks without a pending (deferred) row:
	// the pending rows cannot change their answer, so they stay pending.
	var free []string
	for _, task := range tasks {
		if !t.deferred.task[project+"\x00"+task] {
			free = append(free, task)
		}
	}
	if len(free) > 0 {
		t.deferred.skip = true
		found, err := many(ctx, t, "outcomes", scanOutcome, `SELECT DISTINCT ON (task_id) `+outcomeCols+`
			FROM outcomes WHERE project = ? AND task_id = ANY(?) ORDER BY task_id, recorded_at DESC, id DESC`, project, free)
		t.deferred.skip = false
		if err != nil {
			return fmt.Errorf("prefetch outcomes: %w", err)
		}
		for _, task := range free {
			t.pre.outcomes[prefetchKey{project, task}] = nil
		}
		for i := range found {
			t.pre.outcomes[prefetchKey{project, found[i].TaskID}] = &found[i]
		}
	}
	// The tracked tasks, locked in id order (the order LockTask's callers
	// keep between tasks), then their errors: after any wait for a lock.
	locked, err := many(ctx, t, "tasks", scanTask, `SELECT `+taskCols+` FROM tasks
		WHERE project = ? AND id = ANY(?) ORDER BY id`+t.d.ForUpdate, project, tasks)
	if err != nil {
		return fmt.Errorf("prefetch tasks: %w", err)
	}
	errs, err := many(ctx, t, "errors", scanError, `SELECT `+errorCols+` FROM errors
		WHERE project = ? AND task_id = ANY(?) ORDER BY task_id, ts, id`, project, tasks)
	if err != nil {
		return fmt.Errorf("prefetch errors: %w", err)
	}
	for _, task := range tasks {
		k := prefetchKey{project, task}
		t.pre.tasks[k] = nil
		t.pre.errors[k] = []learning.ErrorEntry{}
	}
	for i := range locked {
		t.pre.tasks[prefetchKey{project, locked[i].ID}] = &locked[i]
	}
	for _, e := range errs {
		k := prefetchKey{project, e.TaskID}
		t.pre.errors[k] = append(t.pre.errors[k], e)
	}
	return nil
}

// Each answer is served once and then forgotten, so nothing a caller does
// with it (the values share slices and pointers) can change a later read,
// which goes to SQL.

// prefetchedOutcome serves ListOutcomes for one task's latest outcome.
func (t *Tx) prefetchedOutcome(project string, f store.OutcomeFilter) ([]learning.Outcome, bool) {
	if t.pre == nil || f.TaskID == "" || f.Limit != 1 || f.Offset != 0 || !f.Since.IsZero() || !f.Until.IsZero() {
		return nil, false
	}
	k := prefetchKey{project, f.TaskID}
	o, ok := t.pre.outcomes[k]
	if !ok {
		return nil, false
	}
	delete(t.pre.outcomes, k)
	if o == nil {
		return []learning.Outcome{}, true
	}
	return []learning.Outcome{*o}, true
}

// prefetchedTask serves LockTask: the row locked by Prefetch.
func (t *Tx) prefetchedTask(project, id string) (learning.Task, bool, error) {
	if t.pre == nil {
		return learning.Task{}, false, nil
	}
	k := prefetchKey{project, id}
	tk, ok := t.pre.tasks[k]
	if !ok {
		return learning.Task{}, false, nil
	}
	delete(t.pre.tasks, k)
	if tk == nil {
		return learning.Task{}, true, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	return *tk, true, nil
}

// prefetchedErrors serves ErrorsByTask with the resolved errors.
func (t *Tx) prefetchedErrors(project, task string, includeResolved bool) ([]learning.ErrorEntry, bool) {
	if t.pre == nil || !includeResolved {
		return nil, false
	}
	k := prefetchKey{project, task}
	e, ok := t.pre.errors[k]
	if ok {
		delete(t.pre.errors, k)
	}
	return e, ok
}

// forgetOutcome drops a task's prefetched outcome (a new one was added).
func (t *Tx) forgetOutcome(project, task string) {
	if t.pre != nil {
		delete(t.pre.outcomes, prefetchKey{project, task})
	}
}

// forgetTask drops a task's prefetched row (it was written).
func (t *Tx) forgetTask(project, id string) {
	if t.pre != nil {
		delete(t.pre.tasks, prefetchKey{project, id})
	}
}

// dropPrefetched drops every prefetched answer (a savepoint was set).
func (t *Tx) dropPrefetched() {
	t.pre = nil
}

// Statements returns the number of statements the transaction sent so
// far (round trips of the writer, for its statistics and tests).
func (t *Tx) Statements() int { return t.statements }
