package teamsvc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/store"
)

// remote carries wake-ups between processes sharing a store (PostgreSQL
// LISTEN/NOTIFY): a change committed here is announced to the others, and
// the announcements of the others wake this process's waiters. The
// listener starts with the first wait (a process that never waits holds
// no listening connection) and stops with Close.
type remote struct {
	n store.TeamNotifier

	mu      sync.Mutex
	started bool
	ready   chan struct{} // closed once the first LISTEN is in place (or failed)
	cancel  context.CancelFunc
	done    chan struct{}
	// up: the listener is connected, so waits need no polling.
	up atomic.Bool
}

// remotePoll bounds a wait while the listener of a shared store is not
// connected: a waiter then re-reads at this interval.
const remotePoll = 2 * time.Second

// publish announces a change of the team to the other processes (after
// its commit). A failure costs the others latency only: it is logged.
func (s *Service) publish(project, name string) {
	r := s.remote
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.n.NotifyTeam(ctx, project, name); err != nil {
		s.env.Logger.Warn("team: announce a change to other processes", "team", name, "err", err)
	}
}

// listen makes sure the listener runs and, the first time, waits until it
// listens, so that a change committed by another process after a wait's
// first read wakes it. It returns at once after that.
func (s *Service) listen(ctx context.Context) {
	r := s.remote
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.started {
		r.started = true
		lctx, cancel := context.WithCancel(context.Background())
		r.cancel, r.done = cancel, make(chan struct{})
		first := sync.OnceFunc(func() { close(r.ready) })
		go func() {
			defer close(r.done)
			defer first()
			err := r.n.ListenTeams(lctx, func(up bool) {
				r.up.Store(up)
				if up {
					first()
				}
				// changes announced while not listening are not
				// replayed: every waiter reads again (and, while the
				// listener is down, sleeps at most remotePoll)
				s.wakeAll()
			}, func(project, name string) { s.wake(project, name) })
			r.up.Store(false)
			if err != nil && lctx.Err() == nil {
				s.env.Logger.Warn("team: listening to other processes stopped", "err", err)
			}
		}()
		go func() { // a listener that cannot connect does not hold waiters
			t := time.NewTimer(remotePoll)
			defer t.Stop()
			select {
			case <-t.C:
				first()
			case <-r.done:
			}
		}()
	}
	r.mu.Unlock()
	select {
	case <-r.ready:
	case <-ctx.Done():
	}
}

// maxSleep is how long a waiter may sleep without re-reading: unbounded
// (d) unless the store is shared and the listener is down.
func (s *Service) maxSleep(d time.Duration) time.Duration {
	if r := s.remote; r != nil && !r.up.Load() {
		return min(d, remotePoll)
	}
	return d
}

// Close stops the listener, if one runs, and waits for it.
func (s *Service) Close() {
	r := s.remote
	if r == nil {
		return
	}
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
