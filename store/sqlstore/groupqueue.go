package sqlstore

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// GroupRequest is one Update waiting for its group commit.
type GroupRequest struct {
	Ctx  context.Context
	Fn   func(store.Tx) error
	Done chan error // receives the request's result once its group ends
}

// GroupQueue hands Updates to a store's single writer goroutine, which
// runs them in groups that commit once (the group commit of the SQLite and
// PostgreSQL stores). Submit waits for the request's result; the writer
// takes groups with Next and answers each request on its Done channel.
type GroupQueue struct {
	reqs    chan *GroupRequest
	quit    <-chan struct{}
	waiting atomic.Int64 // Submits not yet taken by the writer
}

// NewGroupQueue returns a queue that stops taking requests once quit is
// closed.
func NewGroupQueue(quit <-chan struct{}) *GroupQueue {
	return &GroupQueue{reqs: make(chan *GroupRequest), quit: quit}
}

// Submit hands fn to the writer and waits for its result. It waits even
// when ctx is cancelled after the writer took the request, so a nil error
// always means committed and a non-nil one means not; before that, a
// cancelled ctx returns ctx.Err() and a closed queue store.ErrClosed.
func (q *GroupQueue) Submit(ctx context.Context, fn func(store.Tx) error) error {
	req := &GroupRequest{Ctx: ctx, Fn: fn, Done: make(chan error, 1)}
	var err error
	q.waiting.Add(1)
	select {
	case q.reqs <- req:
	case <-ctx.Done():
		err = ctx.Err()
	case <-q.quit:
		err = store.ErrClosed
	}
	q.waiting.Add(-1)
	if err != nil {
		return err
	}
	return <-req.Done
}

// Waiting returns the number of Submits waiting for the writer to take
// their request.
func (q *GroupQueue) Waiting() int { return int(q.waiting.Load()) }

// Next waits for a request and returns it with the requests already
// waiting, max at most (a group); nil once the queue is closed.
func (q *GroupQueue) Next(max int) []*GroupRequest {
	batch, _ := q.next(max, nil)
	return batch
}

// NextWithin is Next waiting at most d: idle is true when no request
// came in that time (batch nil); nil and false once the queue is closed.
func (q *GroupQueue) NextWithin(max int, d time.Duration) (batch []*GroupRequest, idle bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	return q.next(max, t.C)
}

// next waits for a request until timeout fires (never when nil).
func (q *GroupQueue) next(max int, timeout <-chan time.Time) (batch []*GroupRequest, idle bool) {
	select {
	case r := <-q.reqs:
		return q.Drain([]*GroupRequest{r}, max), false
	case <-timeout:
		return nil, true
	case <-q.quit:
		return nil, false
	}
}

// Drain appends the requests already waiting to batch, without blocking,
// until it holds max (late arrivals join a group still running).
func (q *GroupQueue) Drain(batch []*GroupRequest, max int) []*GroupRequest {
	for len(batch) < max {
		select {
		case r := <-q.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}
