package sqlstore

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// NextWithin: a request that comes within the wait is returned with those
// waiting behind it; none within it is idle; a closed queue is neither.
// Waiting counts the Submits the writer has not taken.
func TestGroupQueueNextWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quit := make(chan struct{})
		q := NewGroupQueue(quit)
		start := time.Now()
		if b, idle := q.NextWithin(8, 10*time.Millisecond); b != nil || !idle {
			t.Fatalf("empty queue: %d requests, idle %v; want none, idle", len(b), idle)
		}
		if waited := time.Since(start); waited != 10*time.Millisecond {
			t.Fatalf("idle after %v, want 10ms", waited)
		}

		done := make(chan error, 3)
		for range 3 {
			go func() { done <- q.Submit(context.Background(), func(store.Tx) error { return nil }) }()
		}
		synctest.Wait() // the three wait for the writer
		if n := q.Waiting(); n != 3 {
			t.Fatalf("Waiting %d, want 3", n)
		}
		b, idle := q.NextWithin(2, time.Hour)
		if len(b) != 2 || idle {
			t.Fatalf("%d requests, idle %v; want 2 (max), not idle", len(b), idle)
		}
		synctest.Wait() // the two taken are counted out
		if n := q.Waiting(); n != 1 {
			t.Fatalf("Waiting %d after taking 2, want 1", n)
		}
		b = append(b, q.Drain(nil, 8)...)
		for _, r := range b {
			r.Done <- r.Fn(nil)
		}
		for range 3 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}

		close(quit)
		if b, idle := q.NextWithin(8, time.Hour); b != nil || idle {
			t.Fatalf("closed queue: %d requests, idle %v; want none, not idle", len(b), idle)
		}
		if err := q.Submit(context.Background(), func(store.Tx) error { return nil }); err != store.ErrClosed {
			t.Fatalf("Submit after close: %v, want store.ErrClosed", err)
		}
		if n := q.Waiting(); n != 0 {
			t.Fatalf("Waiting %d after close, want 0", n)
		}
	})
}
