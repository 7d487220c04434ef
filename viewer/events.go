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
// and hands it to every subscriber that has not had that signature yet;
// the poller stops with the project's last subscriber. Close (on server
// shutdown) ends every stream.
//
// What a subscriber has had is kept per subscriber, not as one "last
// signature" of the poller: a stream sends the signature it reads itself
// first, and a poller whose first read came after a change (a poller
// started late on a loaded machine) would otherwise take the changed
// signature as its baseline and never announce the change. A new
// subscriber gets the poller's next reading whatever it is, and the
// stream drops one equal to what it already sent.

// hub fans change notifications out to event streams.
type hub struct {
	e        *kaizen.Engine
	interval time.Duration
	log      *slog.Logger
	// beforeRead, when set (tests), runs before each reading of a poller.
	beforeRead func()

	mu     sync.Mutex
	topics map[string]*topic
	closed bool
	done   chan struct{} // closed by close
	wg     sync.WaitGroup
}

// topic is one watched project: its subscribers, each with the last
// signature handed to it ("" before the first), and its poller.
type topic struct {
	subs   map[chan string]string
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
		t = &topic{subs: map[chan string]string{}, cancel: cancel}
		h.topics[project] = t
		h.wg.Add(1)
		go h.poll(ctx, project, t)
	}
	ch := make(chan string, 1)
	t.subs[ch] = ""
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
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	for {
		if h.beforeRead != nil {
			h.beforeRead()
		}
		sig, err := h.read(ctx, project)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			h.log.Debug("viewer: change poll failed", "project", project, "err", err)
		default:
			h.notify(t, sig)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// notify hands sig to every subscriber of t that has not had it.
func (h *hub) notify(t *topic, sig string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch, had := range t.subs {
		if had == sig {
			continue
		}
		t.subs[ch] = sig
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
		case next := <-ch:
			if next == sig {
				continue // the poller's first reading: already sent
			}
			sig = next
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
