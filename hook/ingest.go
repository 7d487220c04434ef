package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook/spool"
)

// Record is a hook event as it is spooled: what the hook parsed, the
// project it belongs to, when it happened, and its id.
type Record struct {
	// V is the format version (1).
	V int `json:"v"`
	// ID identifies the event: a hash of the client, the event name and
	// the raw payload, so that the same payload delivered twice (a retried
	// hook, hooks installed in two scopes) has the same id.
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Project string    `json:"project"`
	Event   Event     `json:"event"`
}

// EventID is the id of a payload of a client's event.
func EventID(c Client, name string, payload []byte) string {
	h := sha256.New()
	h.Write([]byte(c))
	h.Write([]byte{0})
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(payload)
	return "ev" + hex.EncodeToString(h.Sum(nil))[:30]
}

// Session is the spool session key of the record's task.
func (r Record) Session() string { return spool.SessionKey(r.Event.TaskID()) }

// maxSpooledRaw bounds each raw tool field kept in a spooled event.
const maxSpooledRaw = 64 << 10

// NewRecord builds the spool record of a parsed event. Secrets in its
// text (the prompt, the tool input, response and error, the last message,
// the plan) are redacted first (app.Scrub: the spool is on disk), then
// large tool inputs and responses are cut (as JSON strings) so that a
// record stays small.
func NewRecord(ev Event, id, project string, at time.Time) Record {
	ev = scrubEvent(ev)
	ev.ToolInput = boundRaw(ev.ToolInput)
	ev.ToolResponse = boundRaw(ev.ToolResponse)
	ev.Prompt = cleanText(ev.Prompt, maxCapturedText)
	ev.LastMessage = cleanText(ev.LastMessage, maxCapturedText)
	ev.Error = cleanText(ev.Error, maxStoredText)
	return Record{V: 1, ID: id, At: at.UTC(), Project: project, Event: ev}
}

func boundRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) <= maxSpooledRaw {
		return raw
	}
	b, _ := json.Marshal(truncate(string(raw), maxSpooledRaw))
	return b
}

// Append spools a record: durable when it returns.
func Append(sp *spool.Spool, r Record, now time.Time) (spool.Entry, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return spool.Entry{}, err
	}
	return sp.Append(r.Session(), r.ID, data, now)
}

// Ingester records the spooled events of a kaizen home, in order and once
// each. A daemon runs one over its engine; without a daemon, the hook (its
// own session) and the next kaizen command (everything) do. Ingesters of
// several processes take turns on the spool's lock; event ids make a
// repeated ingestion (after a crash between recording and removing an
// event) change nothing.
type Ingester struct {
	Spool *spool.Spool
	// Handler records the events; its Project is replaced by each
	// record's.
	Handler Handler
	// Log reports events set aside and problems of the optional steps.
	Log func(msg string)

	mu     sync.Mutex
	recent map[string]*Recorded
	order  []string
}

// recentKept bounds the recorded results kept for answers.
const recentKept = 512

// IngestStats counts what an ingestion did.
type IngestStats struct {
	Recorded int `json:"recorded"`
	Rejected int `json:"rejected"`
}

// Recent returns what recording an event did, when this ingester recorded
// it recently (a daemon answering a hook whose event its background loop
// ingested first).
func (g *Ingester) Recent(id string) (*Recorded, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.recent[id]
	return r, ok
}

// Session ingests one session's pending events.
func (g *Ingester) Session(ctx context.Context, session string) (IngestStats, error) {
	return g.ingest(ctx, []string{session})
}

// All ingests every pending event.
func (g *Ingester) All(ctx context.Context) (IngestStats, error) {
	return g.ingest(ctx, nil)
}

func (g *Ingester) ingest(ctx context.Context, sessions []string) (IngestStats, error) {
	var st IngestStats
	g.mu.Lock()
	defer g.mu.Unlock()
	if sessions == nil {
		var err error
		if sessions, err = g.Spool.Sessions(); err != nil || len(sessions) == 0 {
			return st, err
		}
	}
	unlock, err := g.Spool.Lock(ctx)
	if err != nil {
		return st, err
	}
	defer unlock()
	var errs []error
	for _, ses := range sessions {
		if err := g.session(ctx, ses, &st); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return st, errors.Join(errs...)
}

// session ingests a session's events in order; the first one that cannot
// be recorded for now (the store busy) stops it, to keep the order.
func (g *Ingester) session(ctx context.Context, session string, st *IngestStats) error {
	entries, err := g.Spool.Pending(session)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := g.Spool.Read(e)
		if err != nil {
			return err
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil || r.V != 1 || r.ID == "" {
			g.reject(e, st, fmt.Errorf("unreadable spooled event: %v", err))
			continue
		}
		h := g.Handler
		h.Project = r.Project
		rec, err := h.Record(ctx, r.Event, r.ID, r.At)
		if err != nil {
			if permanent(err) {
				g.reject(e, st, err)
				continue
			}
			return fmt.Errorf("ingest %s/%s: %w", session, e.Name, err)
		}
		for _, p := range rec.Problems {
			g.log(fmt.Sprintf("%s %s (task %s): %v", r.Event.Client, r.Event.Name, r.Event.TaskID(), p))
		}
		if err := g.Spool.Remove(e); err != nil {
			return err
		}
		st.Recorded++
		g.keep(r.ID, rec)
	}
	return nil
}

// permanent tells an error that recording the event again cannot fix.
func permanent(err error) bool {
	if errors.Is(err, ErrNoSession) {
		return true
	}
	switch kaizen.KindOf(err) {
	case kaizen.KindInvalid, kaizen.KindNotFound, kaizen.KindConflict:
		return true
	}
	return false
}

func (g *Ingester) reject(e spool.Entry, st *IngestStats, err error) {
	st.Rejected++
	g.log(fmt.Sprintf("spooled event %s/%s set aside: %v", e.Session, e.Name, err))
	if rerr := g.Spool.Reject(e, err.Error()); rerr != nil {
		g.log(fmt.Sprintf("set aside %s/%s: %v", e.Session, e.Name, rerr))
	}
}

func (g *Ingester) keep(id string, r *Recorded) {
	if g.recent == nil {
		g.recent = map[string]*Recorded{}
	}
	if _, ok := g.recent[id]; !ok {
		g.order = append(g.order, id)
	}
	g.recent[id] = r
	for len(g.order) > recentKept {
		delete(g.recent, g.order[0])
		g.order = g.order[1:]
	}
}

func (g *Ingester) log(msg string) {
	if g.Log != nil {
		g.Log(msg)
	}
}

// Run ingests the spool every interval until ctx is done (a daemon's
// background loop, which records the events whose hooks gave up before
// the daemon answered), and calls tick after each round (the daemon's
// idle sweep).
func (g *Ingester) Run(ctx context.Context, every time.Duration, tick func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := g.All(ctx); err != nil && ctx.Err() == nil {
			g.log(fmt.Sprintf("ingest the spool: %v", err))
		}
		if tick != nil && ctx.Err() == nil {
			tick(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
