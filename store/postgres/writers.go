package postgres

import (
	"os"
	"strconv"
	"sync"
)

// Two groups in flight (issue 17, item 2). One writer ran a group from
// its prefetch to its COMMIT and only then took the next group, so every
// group paid its own BEGIN and prefetch round trip after the COMMIT of the
// one before. Now two writer goroutines, each on its own connection, take
// turns: the writer holding the admission token takes a group from the
// queue, prefetches it and runs its requests; it hands the token on as it
// starts Flush, so the other writer takes the requests that arrived in
// the meantime and sends their BEGIN and prefetch while the first group's
// writes and COMMIT are on the wire.
//
// Exactness is the one between two daemons on one database (the tests
// named TwoEngines… and …AcrossServers): the prefetch's first statement
// takes the key-class lock of the outcomes (store.Tx.LockKey with
// GroupKeyLocks), so the second group's reads wait on the server until
// the first group committed and then see its rows; shared rows are taken
// with row locks as before; a deadlock or serialization failure runs the
// whole group again, and no request is acknowledged before its group's
// COMMIT returned. In the process, requests still run one at a time: only
// the token holder runs requests (the first run and every rerun of a
// group), so the functions given to Update never run concurrently, as
// with one writer.

// writers is the number of writer goroutines (and connections they hold).
var writers = envInt("KAIZEN_PG05_WRITERS", 2)

var lateJoin = envInt("KAIZEN_PG05_LATE", 0) == 1

func envInt(k string, d int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return v
	}
	return d
}

// admission is the token that lets a writer take and run requests.
type admission struct {
	mu   *sync.Mutex
	held bool
}

// acquire takes the token (if not held).
func (a *admission) acquire() {
	if !a.held {
		a.mu.Lock()
		a.held = true
	}
}

// release hands the token on (if held): the group runs no more requests.
func (a *admission) release() {
	if a.held {
		a.held = false
		a.mu.Unlock()
	}
}
