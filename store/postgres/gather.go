package postgres

import "runtime"

// Gathering a group before its first statement (issue 17, item 2). The
// writer acknowledges a group's requests and at once waits for the next
// request: the first caller back starts a group, and its prefetch
// (sqlstore/prefetch.go) goes out with the few requests already waiting.
// The callers just acknowledged, still producing their next requests,
// arrived during that round trip, and the group paid a second prefetch,
// a round trip more, for them (in four groups of five, with 16 callers).
// gather yields to the goroutines ready to run, which include the
// acknowledged callers, and takes what they submit, until the group is
// as large as the previous one or a yield brings nothing: a caller that
// is not coming back (a daemon's idle client) costs one yield, never a
// wait on a clock.
const gatherIdleYields = 2

func (s *Store) gather(batch []*request, want int) []*request {
	want = min(want, maxBatch)
	for idle := 0; len(batch) < want && idle < gatherIdleYields; {
		runtime.Gosched()
		n := len(batch)
		batch = s.queue.Drain(batch, maxBatch)
		if len(batch) == n {
			idle++
		} else {
			idle = 0
		}
	}
	return batch
}
