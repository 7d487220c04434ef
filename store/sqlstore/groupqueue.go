package sqlstore

import (
	"context"

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
	reqs chan *GroupRequest
	quit <-chan struct{}
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
	select {
	case q.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-q.quit:
		return store.ErrClosed
	}
	return <-req.Done
}

// Next waits for a request and returns it with the requests already
// waiting, max at most (a group); nil once the queue is closed.
func (q *GroupQueue) Next(max int) []*GroupRequest {
	var batch []*GroupRequest
	select {
	case r := <-q.reqs:
		batch = append(batch, r)
	case <-q.quit:
		return nil
	}
	return q.Drain(batch, max)
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
