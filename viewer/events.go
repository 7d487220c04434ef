package viewer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen"
)

// Live updates. Open pages subscribe to /events?project=P, a
// server-sent-events stream. One shared poller per watched project reads a
// cheap change signature of the project (signature) every PollInterval
// and notifies every subscriber when it changes; the poller stops with the
// project's last subscriber. Close (on server shutdown) ends every stream.

// hub fans change notifications out to event streams.
type hub struct {
	e        *kaizen.Engine
	interval time.Duration
	log      *slog.Logger

	mu     sync.Mutex
	topics map[string]*topic
	closed bool
	done   chan struct{} // closed by close
	wg     sync.WaitGroup
}

// topic is one watched project: its subscribers and its poller.
type topic struct {
	subs   map[chan string]struct{}
	cancel context.CancelFunc
}

func newHub(e *kaizen.Engine, interval time.Duration, log *slog.Logger) *hub {
	return &hub{e: e, interval: interval, log: log, topics: map[string]*topic{}, done: make(chan struct{})}
}

var errClosed = errors.New("the viewer is shutting down")

// subscribe registers a stream for project. It receives the new signature
// after each change (coalesced: a slow stream gets the latest one).
func (h *hub) subscribe(project string) (<-chan string, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errClosed
	}
	t, ok := h.topics[project]
	if !ok {
		ctx, cancel := context.WithCancel(context.Background())
		t = &topic{subs: map[chan string]struct{}{}, cancel: cancel}
		h.topics[project] = t
		h.wg.Add(1)
		go h.poll(ctx, project, t)
	}
	ch := make(chan string, 1)
	t.subs[ch] = struct{}{}
	var once sync.Once
	return ch, func() { once.Do(func() { h.unsubscribe(project, t, ch) }) }, nil
}

func (h *hub) unsubscribe(project string, t *topic, ch chan string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(t.subs, ch)
	if len(t.subs) == 0 && h.topics[project] == t {
		t.cancel()
		delete(h.topics, project)
	}
}

// poll watches one project until ctx is cancelled.
func (h *hub) poll(ctx context.Context, project string, t *topic) {
	defer h.wg.Done()
	last, _ := h.read(ctx, project)
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sig, err := h.read(ctx, project)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Debug("viewer: change poll failed", "project", project, "err", err)
			}
			continue
		}
		if sig == last {
			continue
		}
		last = sig
		h.mu.Lock()
		for ch := range t.subs {
			select {
			case ch <- sig:
			default: // a notification is pending: replace it with the newest
				select {
				case <-ch:
				default:
				}
				select {
				case ch <- sig:
				default:
				}
			}
		}
		h.mu.Unlock()
	}
}

func (h *hub) read(ctx context.Context, project string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return signature(ctx, h.e, project)
}

// streams counts the open subscriptions (for tests and diagnostics).
func (h *hub) streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, t := range h.topics {
		n += len(t.subs)
	}
	return n
}

// pollers counts the running pollers.
func (h *hub) pollers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.topics)
}

// close ends every stream and stops every poller; it waits for the
// pollers to return.
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	close(h.done)
	for p, t := range h.topics {
		t.cancel()
		delete(h.topics, p)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// events streams change notifications for a project as server-sent
// events: a "version" event with the current signature first, then one
// after every change; comments keep the connection alive. It ends when
// the client goes away or the viewer closes.
func (v *Viewer) events(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOf(r)
	if err != nil {
		return err
	}
	if _, err := q.str("project"); err != nil {
		return err
	}
	project := v.project(r)
	ctx := r.Context()
	// Validate the project the way every engine query does.
	if _, err := v.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: project, Limit: 1}); err != nil {
		return err
	}
	ch, unsubscribe, err := v.hub.subscribe(project)
	if err != nil {
		return viewError{status: http.StatusServiceUnavailable, message: err.Error()}
	}
	defer unsubscribe()
	sig, err := signature(ctx, v.e, project)
	if err != nil {
		return err
	}

	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	send := func(s string) bool {
		if _, err := fmt.Fprint(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("retry: 2000\n\n" + event("version", sig)) {
		return nil
	}
	heartbeat := time.NewTicker(v.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-v.hub.done:
			return nil
		case sig := <-ch:
			if !send(event("version", sig)) {
				return nil
			}
		case <-heartbeat.C:
			if !send(": keep-alive\n\n") {
				return nil
			}
		}
	}
}

// event formats one server-sent event. data is a signature (no newlines),
// but is split on lines anyway so it can never inject fields.
func event(name, data string) string {
	var b strings.Builder
	b.WriteString("event: " + name + "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + strings.TrimRight(line, "\r") + "\n")
	}
	b.WriteString("\n")
	return b.String()
}
