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
// lock. With them go the hinted patterns (locked by content, in id order),
// their maturity records and the project's criteria, into the aggregate
// cache; with a pipeliner all of it is one round trip (pipeline.go).
//
// A prefetched answer is served only while it is still the answer SQL
// would give:
//   - any statement of the transaction whose text names the table
//     (outcomes, tasks, errors as a word) drops every prefetched answer of
//     that table before it runs;
//   - AppendOutcome (whose row may be deferred, outcome_defer.go) drops its
//     task's prefetched outcome, UpdateTask its task's prefetched row;
//   - Mark (a savepoint) drops everything: a rolled-back savepoint could
//     undo what an answer was kept in step with;
//   - each answer is served once, then read from SQL again.
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
// take (LockKey "outcome/<task>"), then the patterns the hints name with
// their maturity records. With a pipeliner (pipeline.go) every statement
// goes in one round trip; the server runs them in order, so the reads
// still follow the locks. It does nothing in a transaction with
// savepoints (Mark) or on SQLite, whose writer's reads are local. Hints
// for tasks already prefetched are skipped, so a writer may call it again
// for requests that joined its group late.
func (t *Tx) Prefetch(ctx context.Context, hints []store.WriteHint) error {
	if (t.d.Name != Postgres.Name && !t.d.PrefetchTasks) || t.deferred.off || len(hints) == 0 {
		return nil
	}
	if t.pre == nil {
		t.pre = &prefetched{outcomes: map[prefetchKey]*learning.Outcome{},
			tasks: map[prefetchKey]*learning.Task{}, errors: map[prefetchKey][]learning.ErrorEntry{}}
	}
	byProject := map[string][]string{}
	contents := map[string][]string{}
	for _, h := range hints {
		contents[h.Project] = append(contents[h.Project], h.Patterns...)
		k := prefetchKey{h.Project, h.TaskID}
		_, o := t.pre.outcomes[k]
		_, tk := t.pre.tasks[k]
		_, e := t.pre.errors[k]
		if o && tk && e {
			continue
		}
		byProject[h.Project] = append(byProject[h.Project], h.TaskID)
	}
	projects := slices.Sorted(maps.Keys(byProject))
	var stmts []Pipelined
	for _, p := range projects { // the recordings' locks, in a fixed order
		slices.Sort(byProject[p])
		byProject[p] = slices.Compact(byProject[p])
		for _, task := range byProject[p] {
			if st, ok := t.keyLock(p, "outcome/"+task); ok {
				stmts = append(stmts, st)
			}
		}
	}
	var finish []func()
	for _, p := range projects {
		stmts, finish = t.prefetchProject(p, byProject[p], stmts, finish)
	}
	// The patterns, after the tasks (the order recording locks them in).
	for _, p := range slices.Sorted(maps.Keys(contents)) {
		stmts, finish = t.prefetchPatterns(p, contents[p], stmts, finish)
		stmts, finish = t.prefetchCriteria(p, stmts, finish)
	}
	if len(stmts) == 0 {
		return nil
	}
	defer t.pre.quietly()()
	t.deferred.skip = true // the outcome reads skip the tasks with pending rows
	err := t.pipeline(ctx, "prefetch", stmts)
	t.deferred.skip = false
	if err != nil {
		return err
	}
	for _, f := range finish {
		f()
	}
	return nil
}

// prefetchProject queues the reads of a project's tasks: previous
// outcomes, the tracked tasks locked in id order (the order LockTask's
// callers keep between tasks), then their errors, after any wait for a
// lock. finish stores the answers once the statements ran.
func (t *Tx) prefetchProject(project string, tasks []string, stmts []Pipelined, finish []func()) ([]Pipelined, []func()) {
	// Previous outcomes, of the tasks without a pending (deferred) row:
	// the pending rows cannot change their answer, so they stay pending.
	var free []string
	for _, task := range tasks {
		if !t.deferred.task[project+"\x00"+task] {
			free = append(free, task)
		}
	}
	var found []learning.Outcome
	if len(free) > 0 && t.d.Name == Postgres.Name {
		stmts = append(stmts, Pipelined{SQL: PrevOutcomesByTask, // prefetch_plans.go
			Args: []any{free, project}, Row: func(s scanner) error {
				o, err := scanOutcome(s)
				found = append(found, o)
				return err
			}})
	} else if len(free) > 0 {
		// SQLite: every outcome of the tasks, each task's in the order
		// ListOutcomes reads them (a task has one, or none), the first of
		// each kept; the index read backwards needs no sorter
		in, args := projectIn(project, free)
		stmts = append(stmts, Pipelined{SQL: `SELECT ` + outcomeCols + ` FROM outcomes INDEXED BY outcomes_task
			WHERE project = ? AND task_id IN ` + in + ` ORDER BY task_id DESC, recorded_at DESC, id DESC`,
			Args: args, Row: func(s scanner) error {
				o, err := scanOutcome(s)
				if err == nil && len(found) > 0 && found[len(found)-1].TaskID == o.TaskID {
					return nil
				}
				found = append(found, o)
				return err
			}})
	}
	var locked []learning.Task
	var errs []learning.ErrorEntry
	taskIn, taskArgs := `= ANY(?)`, []any{project, tasks}
	if t.d.Name != Postgres.Name {
		taskIn, taskArgs = projectIn(project, tasks)
		taskIn = "IN " + taskIn
	}
	stmts = append(stmts, Pipelined{SQL: `SELECT ` + taskCols + ` FROM tasks
		WHERE project = ? AND id ` + taskIn + ` ORDER BY id` + t.d.ForUpdate, Args: taskArgs,
		Row: func(s scanner) error {
			tk, err := scanTask(s)
			locked = append(locked, tk)
			return err
		}}, Pipelined{SQL: `SELECT ` + errorCols + ` FROM errors
		WHERE project = ? AND task_id ` + taskIn + ` ORDER BY task_id, ts, id`, Args: taskArgs,
		Row: func(s scanner) error {
			e, err := scanError(s)
			errs = append(errs, e)
			return err
		}})
	return stmts, append(finish, func() {
		for _, task := range free {
			t.pre.outcomes[prefetchKey{project, task}] = nil
		}
		for i := range found {
			t.pre.outcomes[prefetchKey{project, found[i].TaskID}] = &found[i]
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
	})
}

// projectIn is "(?, ?, …)" for the values, and the arguments project and
// the values.
func projectIn(project string, values []string) (string, []any) {
	args := make([]any, 0, len(values)+1)
	args = append(args, project)
	for _, v := range values {
		args = append(args, v)
	}
	return "(?" + strings.Repeat(", ?", len(values)-1) + ")", args
}

// prefetchPatterns queues the locking read of the patterns with the given
// contents, in id order, and the read of their maturity records (after
// the locks, which guard them). finish remembers them and the content
// lookups in the aggregate cache as FindPatternsByContent, LockPattern and
// GetMaturity would. Rows the cache already holds locked or staged are
// kept; a content that names no pattern is not remembered (another server
// may create it).
func (t *Tx) prefetchPatterns(project string, contents []string, stmts []Pipelined, finish []func()) ([]Pipelined, []func()) {
	if t.agg == nil || !t.rowLocks() || len(contents) == 0 {
		return stmts, finish
	}
	want := map[string]string{} // content hash → content key
	for _, c := range contents {
		k := t.keysOf(c)
		if _, ok := t.agg.content[project+"\x00"+k.hash]; !ok {
			want[k.hash] = k.key
		}
	}
	if len(want) == 0 {
		return stmts, finish
	}
	hashes := slices.Sorted(maps.Keys(want))
	var found []hashedPattern
	var ms []learning.Maturity
	stmts = append(stmts, Pipelined{SQL: `SELECT ` + patternCols + `, content_hash, content_key FROM patterns
		WHERE project = ? AND content_hash = ANY(?) ORDER BY id` + t.d.ForUpdate, Args: []any{project, hashes},
		Row: func(s scanner) error {
			var ps patternScan
			var h hashedPattern
			if err := s.Scan(append(ps.dest(), &h.hash, &h.key)...); err != nil {
				return err
			}
			var err error
			h.p, err = ps.finish()
			found = append(found, h)
			return err
		}}, Pipelined{SQL: `SELECT ` + prefixed("m", maturityCols) + ` FROM maturity m
		JOIN patterns p ON p.project = m.project AND p.id = m.pattern_id
		WHERE m.project = ? AND p.content_hash = ANY(?)`, Args: []any{project, hashes},
		Row: func(s scanner) error {
			m, err := scanMaturity(s)
			ms = append(ms, m)
			return err
		}})
	return stmts, append(finish, func() {
		byContent := map[string][]learning.Pattern{}
		fresh := map[string]bool{}
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
			fresh[h.p.ID] = true
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
		for _, m := range ms {
			k := maturityKey(project, m.PatternID)
			if _, ok := t.agg.rows[k]; !ok && fresh[m.PatternID] {
				t.rememberLocked(k, m, true, true)
			}
		}
	})
}

type hashedPattern struct {
	p         learning.Pattern
	hash, key string
}

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

// prefetchCriteria queues the read of a project's criteria (folded with
// their shards), which recording an outcome makes at its first criterion
// event for the weights it reports (addPendingEvent), unless the cache
// holds one of them already.
func (t *Tx) prefetchCriteria(project string, stmts []Pipelined, finish []func()) ([]Pipelined, []func()) {
	if t.agg == nil || !t.d.ShardedCriteria {
		return stmts, finish
	}
	for k := range t.agg.rows {
		if k.project == project && (k.table == "criteria" || k.table == "criterion_delta") {
			return stmts, finish
		}
	}
	var list []learning.Criterion
	shards := map[string][]shardRow{}
	stmts = append(stmts, Pipelined{SQL: `SELECT ` + criterionCols + ` FROM criteria WHERE project = ? ORDER BY name`,
		Args: []any{project}, Row: func(s scanner) error {
			c, err := scanCriterion(s)
			list = append(list, c)
			return err
		}}, Pipelined{SQL: `SELECT name, shard, ` + shardCols + ` FROM criterion_shards
		WHERE project = ? AND helpful_count + harmful_count + neutral_count > 0 ORDER BY name, shard`,
		Args: []any{project}, Row: func(s scanner) error {
			var name string
			r, err := scanShard(prefixScanner{s, []any{&name}})
			shards[name] = append(shards[name], r)
			return err
		}})
	return stmts, append(finish, func() {
		for _, c := range list {
			k := criterionKey(c.Project, c.Name)
			if _, _, ok := t.lookup(k); !ok {
				t.remember(k, fold(c, shards[c.Name]), true)
			}
		}
	})
}
