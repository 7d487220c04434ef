package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// The rank scanner: a read connection of the store's own, opened on
// SQLite's C interface (modernc.org/sqlite/lib) without database/sql,
// that reads a project's pattern ranks for a full load of plan guidance
// (sqlstore.RankScanner; issue 17: the first guidance request of a process
// without a usable pattern snapshot). The two scans in key order
// (patterns, maturity) through database/sql and the driver cost about
// 250 ms of CPU at 100,000 patterns, two thirds of that request: the
// driver locks the connection's mutex for every column (SQLite's
// serialized mode, about a third of the time), copies every text column
// into a new Go string, boxes every value in an interface, and
// database/sql converts each again. Here the connection is opened without
// its mutex (SQLITE_OPEN_NOMUTEX: one goroutine uses it at a time, under
// rankScanner.mu; SQLite's global mutexes stay), and the rows are read
// from SQLite's own buffers in place, valid until the next step, as the
// store.PatternRank contract allows: the same scans take about 70 ms.
//
// Its transaction is not the caller's: the rows are used only when it
// sees the caller's pattern version (see sqlstore.RankScanner), else the
// caller reads them on its own connection as before. One transaction uses
// the connection at a time and none waits for it.

// rankScanner is the rank scanner's state.
type rankScanner struct {
	path   string
	busyMs int

	mu     sync.Mutex // held while the connection is in use
	tls    *libc.TLS
	db     uintptr // sqlite3*, 0 before the first use
	stmts  [3]uintptr
	broken bool // opening failed, or the store is closed: never used again

	// before runs after a transaction took the connection and before its
	// own transaction starts (tests: a write between the two).
	before func()
	// lent and used count the scans asked for and those whose rows were used.
	lent, used atomic.Int64
}

const (
	rankVersionStmt = iota
	rankPatternsStmt
	rankMaturityStmt
)

var rankQueries = [3]string{
	`SELECT version FROM pattern_versions WHERE project = ?`,
	sqlstore.PatternRanksByIDQuery,
	sqlstore.MaturityByIDQuery,
}

func newRankScanner(path string, opts Options) *rankScanner {
	return &rankScanner{path: path, busyMs: opts.BusyTimeoutMs}
}

// errRanksDeclined: the scan did not start (see ScanPatternRanksByID).
var errRanksDeclined = errors.New("rank scan declined")

// ScanPatternRanksByID implements sqlstore.RankScanner.
func (s *Store) ScanPatternRanksByID(ctx context.Context, project string, version int64, fn func(*store.PatternRank) error) (bool, error) {
	rs := s.ranks
	if !rs.mu.TryLock() {
		return false, nil
	}
	defer rs.mu.Unlock()
	if rs.broken {
		return false, nil
	}
	if rs.db == 0 {
		if err := rs.open(); err != nil {
			rs.closeLocked()
			rs.broken = true
			return false, nil
		}
	}
	if rs.before != nil {
		rs.before()
	}
	rs.lent.Add(1)
	called := false
	err := rs.scan(ctx, project, version, func(r *store.PatternRank) error {
		called = true
		return fn(r)
	})
	if !called && err != nil { // nothing read yet: the caller reads on its connection
		return false, nil
	}
	rs.used.Add(1)
	return true, err
}

// close closes the connection; it is not used again.
func (rs *rankScanner) close() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.closeLocked()
	rs.broken = true
}

func (rs *rankScanner) closeLocked() {
	if rs.tls == nil {
		return
	}
	for i, st := range rs.stmts {
		if st != 0 {
			sqlite3.Xsqlite3_finalize(rs.tls, st)
			rs.stmts[i] = 0
		}
	}
	if rs.db != 0 {
		sqlite3.Xsqlite3_close_v2(rs.tls, rs.db)
		rs.db = 0
	}
	rs.tls.Close()
	rs.tls = nil
}

// cString is s in C memory, freed by the caller (libc.Xfree).
func (rs *rankScanner) cString(s string) (uintptr, error) {
	return libc.CString(s)
}

func (rs *rankScanner) errmsg(what string, rc int32) error {
	msg := ""
	if rs.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(rs.tls, rs.db))
	}
	return fmt.Errorf("sqlite rank scan: %s: %s (%d)", what, msg, rc)
}

// open opens the connection read-only in effect (query_only, as the
// reader pool) and prepares its statements.
func (rs *rankScanner) open() error {
	rs.tls = libc.NewTLS()
	name, err := rs.cString(rs.path)
	if err != nil {
		return err
	}
	defer libc.Xfree(rs.tls, name)
	pdb := libc.Xmalloc(rs.tls, 8)
	if pdb == 0 {
		return errors.New("sqlite rank scan: out of memory")
	}
	defer libc.Xfree(rs.tls, pdb)
	*(*uintptr)(cptr(pdb)) = 0
	rc := sqlite3.Xsqlite3_open_v2(rs.tls, name, pdb, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	rs.db = *(*uintptr)(cptr(pdb))
	if rc != sqlite3.SQLITE_OK {
		return rs.errmsg("open", rc)
	}
	sqlite3.Xsqlite3_busy_timeout(rs.tls, rs.db, int32(rs.busyMs))
	if err := rs.exec("PRAGMA query_only = 1"); err != nil {
		return err
	}
	pst := libc.Xmalloc(rs.tls, 8)
	if pst == 0 {
		return errors.New("sqlite rank scan: out of memory")
	}
	defer libc.Xfree(rs.tls, pst)
	for i, q := range rankQueries {
		zq, err := rs.cString(q)
		if err != nil {
			return err
		}
		*(*uintptr)(cptr(pst)) = 0
		rc := sqlite3.Xsqlite3_prepare_v2(rs.tls, rs.db, zq, -1, pst, 0)
		libc.Xfree(rs.tls, zq)
		if rc != sqlite3.SQLITE_OK {
			return rs.errmsg("prepare", rc)
		}
		rs.stmts[i] = *(*uintptr)(cptr(pst))
	}
	return nil
}

func (rs *rankScanner) exec(q string) error {
	zq, err := rs.cString(q)
	if err != nil {
		return err
	}
	defer libc.Xfree(rs.tls, zq)
	if rc := sqlite3.Xsqlite3_exec(rs.tls, rs.db, zq, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return rs.errmsg(q, rc)
	}
	return nil
}

// bind binds the project to every statement.
func (rs *rankScanner) bind(project string) error {
	p, err := rs.cString(project)
	if err != nil {
		return err
	}
	defer libc.Xfree(rs.tls, p)
	for _, st := range rs.stmts {
		if rc := sqlite3.Xsqlite3_bind_text(rs.tls, st, 1, p, int32(len(project)), sqlite3.SQLITE_TRANSIENT); rc != sqlite3.SQLITE_OK {
			return rs.errmsg("bind", rc)
		}
	}
	return nil
}

// step advances st: true at a row, false at the end.
func (rs *rankScanner) step(st uintptr) (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(rs.tls, st); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, rs.errmsg("step", rc)
	}
}

// text is column i of st's row in SQLite's buffer (nil for NULL), valid
// until st steps again.
func (rs *rankScanner) text(st uintptr, i int32) []byte {
	p := sqlite3.Xsqlite3_column_text(rs.tls, st, i)
	if p == 0 {
		return nil
	}
	n := sqlite3.Xsqlite3_column_bytes(rs.tls, st, i)
	return unsafe.Slice((*byte)(cptr(p)), n)
}

func (rs *rankScanner) null(st uintptr, i int32) bool {
	return sqlite3.Xsqlite3_column_type(rs.tls, st, i) == sqlite3.SQLITE_NULL
}

func (rs *rankScanner) int64(st uintptr, i int32) int64 {
	return sqlite3.Xsqlite3_column_int64(rs.tls, st, i)
}

func (rs *rankScanner) float64(st uintptr, i int32) float64 {
	return sqlite3.Xsqlite3_column_double(rs.tls, st, i)
}

// ref is a decayed sum's reference time column (unix µs, NULL: unset).
func (rs *rankScanner) ref(st uintptr, i int32) time.Time {
	if rs.null(st, i) {
		return time.Time{}
	}
	return time.UnixMicro(rs.int64(st, i)).UTC()
}

// scan reads the project's pattern ranks in a transaction of its own,
// when that transaction sees version; errRanksDeclined when it does not.
func (rs *rankScanner) scan(ctx context.Context, project string, version int64, fn func(*store.PatternRank) error) (err error) {
	if err := rs.bind(project); err != nil {
		return err
	}
	if err := rs.exec("BEGIN"); err != nil {
		return err
	}
	defer func() {
		for _, st := range rs.stmts {
			sqlite3.Xsqlite3_reset(rs.tls, st)
			sqlite3.Xsqlite3_clear_bindings(rs.tls, st)
		}
		if rerr := rs.exec("ROLLBACK"); rerr != nil && err == nil {
			err = rerr
		}
	}()
	vst, pst, mst := rs.stmts[rankVersionStmt], rs.stmts[rankPatternsStmt], rs.stmts[rankMaturityStmt]
	var v int64
	if ok, err := rs.step(vst); err != nil {
		return err
	} else if ok {
		v = rs.int64(vst, 0)
	}
	if v != version {
		return errRanksDeclined
	}
	n := 0
	return sqlstore.MergeRanksByID(func(r *store.PatternRank) (bool, error) {
		if n++; n&4095 == 1 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		ok, err := rs.step(pst)
		if err != nil || !ok {
			if err != nil {
				err = fmt.Errorf("list pattern ranks by id: %w", err)
			}
			return false, err
		}
		r.ID, r.Content, r.Kind, r.Tags = rs.text(pst, 0), rs.text(pst, 1), rs.text(pst, 2), rs.text(pst, 3)
		r.Inverted = rs.int64(pst, 4) != 0
		r.SuccessCount, r.FailureCount = rs.int64(pst, 5), rs.int64(pst, 6)
		r.Created = store.NoCreated
		if !rs.null(pst, 7) {
			r.Created = rs.int64(pst, 7)
		}
		return true, nil
	}, func(m *sqlstore.RankMaturity) (bool, error) {
		ok, err := rs.step(mst)
		if err != nil || !ok {
			if err != nil {
				err = fmt.Errorf("list maturity by id: %w", err)
			}
			return false, err
		}
		m.ID = rs.text(mst, 0)
		if m.ID == nil {
			m.ID = []byte{}
		}
		m.Manual = rs.text(mst, 5)
		m.Helpful = learning.DecayedSum{Value: rs.float64(mst, 1), Ref: rs.ref(mst, 2)}
		m.Harmful = learning.DecayedSum{Value: rs.float64(mst, 3), Ref: rs.ref(mst, 4)}
		return true, nil
	}, fn)
}

// cptr is p, an address in SQLite's memory (its own allocator's, never
// moved or collected by Go), as a pointer.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
