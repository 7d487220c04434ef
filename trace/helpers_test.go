package trace

import (
	"encoding/json"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 20, 9, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func code(n int) *int { return &n }

// session feeds events in order, persisting the state as JSON between
// calls the way a hook would, and returns every update.
type session struct {
	t       *testing.T
	st      AssemblerState
	cfg     AssemblyConfig
	updates []TraceUpdate
	clock   int
}

func newSession(t *testing.T) *session {
	t.Helper()
	st, err := NewAssemblerState("sess-1")
	if err != nil {
		t.Fatal(err)
	}
	return &session{t: t, st: st, cfg: DefaultAssemblyConfig()}
}

func (s *session) feed(ev Event) []TraceUpdate {
	s.t.Helper()
	if ev.Time.IsZero() {
		s.clock += 10
		ev.Time = at(s.clock)
	}
	raw, err := json.Marshal(s.st)
	if err != nil {
		s.t.Fatal(err)
	}
	var st AssemblerState
	if err := json.Unmarshal(raw, &st); err != nil {
		s.t.Fatal(err)
	}
	next, ups, err := Feed(st, ev, s.cfg)
	if err != nil {
		s.t.Fatalf("Feed(%+v): %v", ev, err)
	}
	s.st = next
	s.updates = append(s.updates, ups...)
	for _, u := range ups {
		if err := u.Trace.Validate(); err != nil {
			s.t.Fatalf("update %s produced an invalid trace: %v", u.Kind, err)
		}
	}
	return ups
}

func (s *session) run(cmd string, exit int, output string) []TraceUpdate {
	return s.feed(Event{Kind: EventCommand, Command: cmd, ExitCode: code(exit), Output: output})
}

func (s *session) closed() []ExecutionTrace {
	var out []ExecutionTrace
	for _, u := range s.updates {
		if u.Kind == UpdateClosed {
			out = append(out, u.Trace)
		}
	}
	return out
}
