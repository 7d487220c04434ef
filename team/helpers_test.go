package team

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// harness drives one run the way the service does, failing the test on errors.
type harness struct {
	t    *testing.T
	r    Run
	now  time.Time
	cmds []Command // commands of the last step
	all  []Command // every command so far
	seq  int64
}

func mustJSON(t interface{ Fatal(...any) }, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newHarness(t *testing.T, p PatternID, input any) *harness {
	t.Helper()
	return newHarnessCfg(t, p, DefaultConfig(), input)
}

func newHarnessCfg(t *testing.T, p PatternID, cfg Config, input any) *harness {
	t.Helper()
	r, cmds, err := Start(RunSpec{ID: "run1", Pattern: p, Team: "alpha", Config: cfg, Input: mustJSON(t, input)}, t0)
	if err != nil {
		t.Fatalf("start %s: %v", p, err)
	}
	h := &harness{t: t, r: r, now: t0, cmds: cmds, all: cmds}
	h.checkRoundTrip()
	return h
}

func (h *harness) step(ev Event) []Command {
	h.t.Helper()
	r, cmds, err := Step(h.r, ev, h.now)
	if err != nil {
		h.t.Fatalf("step %+v: %v", ev, err)
	}
	h.r, h.cmds = r, cmds
	h.all = append(h.all, cmds...)
	h.checkRoundTrip()
	return cmds
}

// checkRoundTrip: the run survives JSON (persistence) unchanged.
func (h *harness) checkRoundTrip() {
	h.t.Helper()
	b := mustJSON(h.t, h.r)
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		h.t.Fatal(err)
	}
	if string(mustJSON(h.t, back)) != string(b) {
		h.t.Fatalf("run does not round-trip through JSON")
	}
}

func (h *harness) msg(from string, typ MessageType, data any) []Command {
	h.t.Helper()
	return h.msgFor(from, typ, data, "")
}

func (h *harness) msgFor(from string, typ MessageType, data any, taskKey string) []Command {
	h.t.Helper()
	h.seq++
	m := &Message{Team: "alpha", Seq: h.seq, From: from, To: "coordinator", Type: typ, Data: mustJSON(h.t, data), CreatedAt: h.now}
	return h.step(Event{Kind: EventMessage, Message: m, TaskKey: taskKey})
}

func (h *harness) task(key string, st TaskStatus, result any) []Command {
	h.t.Helper()
	ch := &TaskChange{Status: st}
	if result != nil {
		ch.Result = mustJSON(h.t, result)
	}
	return h.step(Event{Kind: EventTask, TaskKey: key, Task: ch})
}

// fire advances the clock to the timer and fires it.
func (h *harness) fire(name string) []Command {
	h.t.Helper()
	at, ok := h.r.Timers[name]
	if !ok {
		h.t.Fatalf("no timer %q (timers %v)", name, h.r.Timers)
	}
	h.now = at
	return h.step(Event{Kind: EventTimer, Timer: name, TimerAt: at})
}

func (h *harness) child(key string, st OutcomeStatus) []Command {
	h.t.Helper()
	return h.step(Event{Kind: EventChild, Child: &ChildResult{Key: key, Outcome: Outcome{Status: st, Summary: "child " + string(st)}}})
}

func (h *harness) reply(key, choice, text string) []Command {
	h.t.Helper()
	return h.step(Event{Kind: EventUser, Reply: &UserReply{Key: key, Choice: choice, Text: text}})
}

func (h *harness) wantState(s string) {
	h.t.Helper()
	if h.r.State != s {
		h.t.Fatalf("state %s, want %s; decisions:\n%s", h.r.State, s, h.decisions())
	}
}

func (h *harness) wantOutcome(st OutcomeStatus) Outcome {
	h.t.Helper()
	if h.r.Outcome == nil {
		h.t.Fatalf("run not finished (state %s); decisions:\n%s", h.r.State, h.decisions())
	}
	if h.r.Outcome.Status != st {
		h.t.Fatalf("outcome %s (%s), want %s; decisions:\n%s", h.r.Outcome.Status, h.r.Outcome.Summary, st, h.decisions())
	}
	return *h.r.Outcome
}

func (h *harness) decisions() string {
	var b strings.Builder
	for _, d := range h.r.Decisions {
		b.WriteString(d.From + " → " + d.To + " [" + d.Event + "] " + d.Reason + "\n")
	}
	return b.String()
}

// created returns the spec of the task created under key in the last step.
func (h *harness) created(key string) *TaskSpec {
	h.t.Helper()
	for _, c := range h.cmds {
		if c.Kind == CmdCreateTask && c.Key == key {
			return c.Task
		}
	}
	h.t.Fatalf("no task %q created in the last step; commands: %s", key, kinds(h.cmds))
	return nil
}

func (h *harness) has(kind CommandKind) *Command {
	for i := range h.cmds {
		if h.cmds[i].Kind == kind {
			return &h.cmds[i]
		}
	}
	return nil
}

func (h *harness) sent(typ MessageType) []OutMessage {
	var out []OutMessage
	for _, c := range h.cmds {
		if c.Kind == CmdSendMessage && c.Message.Type == typ {
			out = append(out, *c.Message)
		}
	}
	return out
}

func (h *harness) openTasks() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(h.r.Tasks)) {
		if !h.r.Tasks[k].Status.Terminal() {
			out = append(out, k)
		}
	}
	return out
}

func kinds(cmds []Command) string {
	var s []string
	for _, c := range cmds {
		s = append(s, string(c.Kind)+":"+c.Key)
	}
	return strings.Join(s, " ")
}

func ptr[T any](v T) *T { return &v }
