package sqlstore

import (
	"context"
	"fmt"
)

// Read transactions run by hand (PostgreSQL recall, issue 18 item 5). A
// recall's reads were about fifteen round trips on PostgreSQL, each
// waiting for the server: BEGIN, the full-text statistics, the terms'
// document frequencies, the postings of every term read one by one, the
// bodies, the experience version, the candidates' rows, ROLLBACK. A read
// transaction run by hand on a connection (NewConnReadTx) sends BEGIN in
// front of its first statement or pipeline, and the reads that do not
// depend on one another go out together (SearchText: the statistics, the
// terms and the experience version in one pipeline, then every term's
// postings in one): the statements are the same, fewer waits.

// ReadTxBegin starts a read transaction run by hand: every statement sees
// the snapshot of the first (what database/sql's read-only REPEATABLE
// READ transaction gave).
const ReadTxBegin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

// NewConnReadTx starts a read-only REPEATABLE READ transaction by hand on
// c: nothing is sent until the first statement, which BEGIN precedes. It
// keeps what it read once that cannot change in its snapshot (the
// experience versions). The caller ends it with EndRead and may then
// release c.
func NewConnReadTx(c Querier, d Dialect) *Tx {
	t := NewConnTx(c, d)
	t.conn.beginSQL = ReadTxBegin
	t.conn.snapshot = true
	return t
}

// EndRead ends a read transaction run by hand (ROLLBACK: it wrote
// nothing), counted as a round trip when anything was sent.
func (t *Tx) EndRead(ctx context.Context) error {
	if t.conn.Querier == nil {
		return fmt.Errorf("EndRead: not a transaction run by hand")
	}
	if !t.conn.begun || t.conn.ended {
		return nil
	}
	t.trips++
	return t.Rollback(ctx)
}

// cachedVersion returns the experience version of project read before in
// this snapshot.
func (t *Tx) cachedVersion(project string) (int64, bool) {
	if !t.conn.snapshot {
		return 0, false
	}
	v, ok := t.conn.versions[project]
	return v, ok
}

// keepVersion remembers an experience version read in a snapshot.
func (t *Tx) keepVersion(project string, v int64) {
	if !t.conn.snapshot {
		return
	}
	if t.conn.versions == nil {
		t.conn.versions = map[string]int64{}
	}
	t.conn.versions[project] = v
}

// versionQuery reads a project's experience version (no row: 0).
const versionQuery = `SELECT version FROM experience_versions WHERE project = ?`
