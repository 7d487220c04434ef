package sqlstore

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// Aggregates applied behind the acknowledged commit (Dialect.AggregatesBehind,
// SQLite's writer with [store] aggregates = "idle" or "behind"; see store/behind.go
// and store/sqlite/behind.go).
//
// A recording request that can be replayed exactly calls DeferAggregates:
// the outcome is journaled (an aggregate_journal row written at Flush with
// the outcome rows). A group whose every successful request deferred, and
// in which no aggregate row reached SQL before Flush (a query that reads
// the aggregate tables writes the staged rows first: flushFirst,
// flushAppends), ends with FlushBehind writing only its own rows (outcomes,
// jobs, journal); its staged aggregate rows, criterion rows, maturity
// feedback and pattern-version marks stay in the cache, which the writer
// carries, dirty, into the next group (CarryAll/AdoptAll). Any other group
// ends with the full Flush, which writes everything staged since the last
// full flush, and empties the journal in the same commit: the journal
// always names exactly the outcomes whose aggregates are not in SQL.

// behindState is a transaction's deferred outcomes and whether an
// aggregate row was written before Flush.
type behindState struct {
	entries []store.AggregateEntry
	written bool // an aggregate row reached SQL before Flush
	full    bool // ForceFull: this transaction ends with the full flush
	named   int  // statements so far that named an aggregate table
	neutral int  // requests that left the aggregates alone (RequestDone)

	// The staged cache the transaction started from (AdoptAll), for
	// Restore: whether there is one and its pattern-version marks.
	staged  bool
	touched map[string]map[string]bool
	resets  map[string]bool
}

func (b *behindState) adopted(c *CarriedCache) {
	b.staged = true
	b.touched, b.resets = nil, nil
	if c.touched == nil {
		return // touch makes both maps
	}
	b.touched, b.resets = map[string]map[string]bool{}, map[string]bool{}
	for p, ids := range c.touched {
		b.touched[p] = maps.Clone(ids)
	}
	maps.Copy(b.resets, c.resets)
}

// Restore returns, after the transaction rolled back, the staged cache it
// started from (nil if it did not start from one): the undo log reverts
// every row the transaction's requests, reads and flushes changed, so the
// writer keeps its staged aggregates instead of replaying the journal.
func (t *Tx) Restore() *CarriedCache {
	b := &t.behind
	if !b.staged || t.agg == nil {
		return nil
	}
	t.Undo(0)
	rows := make(map[rowKey]*cached, len(t.agg.rows))
	for k, e := range t.agg.rows {
		cp := *e
		rows[k] = &cp
	}
	return &CarriedCache{rows: rows, content: map[string][]string{}, touched: b.touched, resets: b.resets, staged: true}
}

var _ store.AggregateDeferrer = (*Tx)(nil)

// DeferAggregates implements store.AggregateDeferrer.
func (t *Tx) DeferAggregates(project, outcomeID string, at time.Time) {
	if !t.d.AggregatesBehind || t.agg == nil || t.deferred.off {
		return
	}
	t.behind.entries = append(t.behind.entries, store.AggregateEntry{Project: project, OutcomeID: outcomeID, At: at})
}

// noteAggregateWrite records that staged aggregate rows are about to be
// written before Flush.
func (t *Tx) noteAggregateWrite() { t.behind.written = true }

// ForceFull makes the transaction end with the full flush (a replay of the
// journal ran in it).
func (t *Tx) ForceFull() { t.behind.full = true }

// RequestMark is what a transaction's requests had done to the
// aggregates when a request started (RequestDone).
type RequestMark struct{ entries, undo, named int }

// RequestMark marks the start of a request of the group.
func (t *Tx) RequestMark() RequestMark {
	m := RequestMark{entries: len(t.behind.entries), named: t.behind.named}
	if t.agg != nil {
		m.undo = len(t.agg.undo)
	}
	return m
}

// RequestDone ends a request that succeeded: when it neither deferred an
// outcome's aggregates nor changed the aggregate cache nor ran a
// statement naming an aggregate table (a job claim, a task's rows), it is
// neutral, and does not keep its group from ending behind (FlushBehind):
// the staged aggregates and the journal mean the same after it.
func (t *Tx) RequestDone(m RequestMark) {
	if t.RequestMark() == m {
		t.behind.neutral++
	}
}

// namesAggregates says whether a statement names a table whose rows the
// aggregate cache stages (criteria, patterns, pattern versions, maturity
// and maturity feedback).
func namesAggregates(q string) bool {
	return strings.Contains(q, "criteri") || strings.Contains(q, "pattern") || strings.Contains(q, "maturity")
}

// PendingAggregates bounds the rows staged in the cache: the size a
// behind group would leave for the next one (every cached row, clean ones
// included; counted in O(1)).
func (t *Tx) PendingAggregates() int {
	if t.agg == nil {
		return 0
	}
	return len(t.agg.rows)
}

// FlushBehind ends a group of the behind mode: when every one of its
// successful requests deferred its aggregates or was neutral
// (RequestDone), there is something staged (an outcome of the group, or
// the cache adopted from the previous group), allowed is true and the
// staged rows number at most maxPending, it writes the group's own rows
// (outcomes, jobs, tasks) and its journal entries only (behind true);
// otherwise the full Flush, and the journal is emptied (behind false).
func (t *Tx) FlushBehind(ctx context.Context, requests int, allowed bool, maxPending int) (behind bool, err error) {
	b := &t.behind
	if allowed && !b.full && !b.written && requests > 0 && len(b.entries)+b.neutral == requests &&
		(len(b.entries) > 0 || b.staged) && t.PendingAggregates() <= maxPending {
		if err := t.flushDeferred(ctx); err != nil {
			return false, err
		}
		if err := t.writeJournal(ctx, b.entries); err != nil {
			return false, err
		}
		return true, nil
	}
	if err := t.Flush(ctx); err != nil {
		return false, err
	}
	if _, err := t.exec(ctx, `DELETE FROM aggregate_journal`); err != nil {
		return false, fmt.Errorf("empty aggregate journal: %w", err)
	}
	return false, nil
}

// writeJournal inserts the journal entries, in order (seq follows it).
func (t *Tx) writeJournal(ctx context.Context, entries []store.AggregateEntry) error {
	return inStatements(entries, func(run []store.AggregateEntry) error {
		args := make([]any, 0, 3*len(run))
		for _, e := range run {
			args = append(args, e.Project, e.OutcomeID, e.At.UnixNano()) // exact: a replay evaluates at the same instant
		}
		q := `INSERT INTO aggregate_journal (project, outcome_id, at) VALUES ` + placeholders(len(run), 3)
		if _, err := t.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("journal outcomes: %w", err)
		}
		return nil
	})
}

// Journal reads the aggregate journal in order.
func (t *Tx) Journal(ctx context.Context) ([]store.AggregateEntry, error) {
	return many(ctx, t, "aggregate journal", func(s scanner) (store.AggregateEntry, error) {
		var e store.AggregateEntry
		var at int64
		err := s.Scan(&e.Project, &e.OutcomeID, &at)
		e.At = time.Unix(0, at).UTC()
		return e, err
	}, `SELECT project, outcome_id, at FROM aggregate_journal ORDER BY seq`)
}

// CarryAll returns the whole aggregate cache — staged rows, appended rows,
// criterion rows and deltas, content lookups — with the pattern-version
// marks, for the next group of a behind writer after a behind flush. The
// maps are handed over, not copied (the transaction is over): the next
// transaction's undo log is what Restore reverts them with.
func (t *Tx) CarryAll() *CarriedCache {
	c := t.agg
	if c == nil {
		return nil
	}
	return &CarriedCache{rows: c.rows, content: c.content, touched: t.touched, resets: t.resets, staged: true}
}
