package sqlstore

// Carrying the aggregate cache from one transaction to the next (issue 17,
// SQLite's writer). Every group commit of a project's outcomes looks up
// the same patterns by content and reads the same pattern and maturity
// rows: with a cache that lives for one transaction, each group reads them
// from SQL again (a content lookup and a pattern-with-maturity join per
// pattern per group). After a successful COMMIT the cache's clean rows are
// exactly what the database holds, so the next transaction of the same
// connection may start from them, provided no other connection committed
// in between: the caller checks that (SQLite's PRAGMA data_version on one
// pinned connection) and drops the carried cache otherwise.
//
// Only rows of the patterns and maturity tables (present or known
// missing) and the content lookups are carried: every write to those
// tables goes through this package's cache-aware methods (InsertPattern,
// UpdatePattern, DeletePattern, PutMaturity, DeleteMaturity), which keep
// the cache and the content lookups exact inside a transaction. Criterion
// rows are carried too where criteria are not sharded (SQLite): there
// every write of the criteria table goes through LockCriterion (which
// creates a missing row and reads it back) and PutCriterion (staged in
// the cache), so a committed transaction's cached criterion is the row
// (issue 17: this saves the criterion reads every group made, four per
// group in the record bench). Sharded criteria (PostgreSQL) are re-read
// per transaction (their events are folded as deltas into shards).
// A transaction that did not flush (dirty rows left) or rolled back is
// never carried: the caller carries only after COMMIT succeeded.

// CarriedCache is a committed transaction's aggregate cache, to start the
// next transaction of the same connection with (see Tx.Carry, Tx.Adopt).
type CarriedCache struct {
	rows    map[rowKey]*cached
	content map[string][]string
	// CarryAll (behind.go): staged rows and the pattern-version marks
	// not yet written.
	touched map[string]map[string]bool
	resets  map[string]bool
	staged  bool
}

// Staged reports whether the carried cache holds rows not yet written
// (CarryAll after a behind flush).
func (c *CarriedCache) Staged() bool { return c != nil && c.staged }

// Len is the number of carried rows.
func (c *CarriedCache) Len() int {
	if c == nil {
		return 0
	}
	return len(c.rows)
}

// Carry returns the transaction's cached pattern and maturity rows and
// content lookups, for the next transaction on the same connection, or nil
// when there is nothing to carry, a row is still dirty (Flush was not
// called), or the cache holds more than maxRows rows. Call it only after
// the transaction committed.
func (t *Tx) Carry(maxRows int) *CarriedCache {
	c := t.agg
	if c == nil || len(c.rows) > maxRows {
		return nil
	}
	rows := make(map[rowKey]*cached, len(c.rows))
	for k, e := range c.rows {
		if e.dirty {
			return nil
		}
		switch k.table {
		case "patterns", "maturity":
			cp := *e
			rows[k] = &cp
		case "criteria":
			if !t.d.ShardedCriteria { // a sharded criterion's row is not the whole aggregate
				cp := *e
				rows[k] = &cp
			}
		}
	}
	if len(rows) == 0 && len(c.content) == 0 {
		return nil
	}
	return &CarriedCache{rows: rows, content: c.content}
}

// Adopt starts the transaction's aggregate cache from a carried one, before
// any statement of the transaction ran. The caller guarantees that the
// database did not change since the carrying transaction committed. The
// adopted rows are the transaction's starting state: Undo never removes
// them.
func (t *Tx) Adopt(c *CarriedCache) {
	if t.agg == nil || c == nil || len(t.agg.rows) > 0 || len(t.agg.undo) > 0 {
		return
	}
	t.agg.rows = c.rows
	if c.content != nil {
		t.agg.content = c.content
	}
	if c.staged {
		t.touched, t.resets = c.touched, c.resets
		t.behind.adopted(c) // behind.go: Restore
	}
}
