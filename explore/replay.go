package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// EventType is the type of a recorded agent-loop event.
type EventType string

// Event types of the replay schema.
const (
	EventTick          EventType = "tick"           // a round starts (Tick, then ShouldExit, ToolChoice, Nudge)
	EventRollback      EventType = "rollback"       // the model call failed (RollbackTick)
	EventToolCall      EventType = "tool_call"      // one tool call (RecordToolCall)
	EventEndRound      EventType = "end_round"      // the round's tool calls are done (EndRound)
	EventThought       EventType = "thought"        // reasoning text beside tool calls (RecordThought)
	EventText          EventType = "text"           // a reply without tool calls (OnTextResponse)
	EventForceTerminal EventType = "force_terminal" // forced wrap-up, e.g. token pressure (ForceTerminal)
)

// Event is one line of a recorded agent log (JSON lines). A tool_call event
// carries the ToolCall fields inline:
//
//	{"type":"tick","time":"2025-05-01T10:00:00Z"}
//	{"type":"tool_call","name":"Grep","args":{"pattern":"Tracker"},"status":"ok","output":"a.go:12:type Tracker"}
//	{"type":"end_round"}
//	{"type":"text","text":"..."}
//	{"type":"force_terminal","reason":"token_pressure"}
type Event struct {
	Type EventType `json:"type"`
	// Time is the event's time (optional; used by tick).
	Time time.Time `json:"time,omitzero"`
	ToolCall
	// Text is the reply or reasoning text of text and thought events.
	Text string `json:"text,omitempty"`
	// Reason explains a force_terminal event.
	Reason string `json:"reason,omitempty"`
	// Line is the event's line in the parsed input (0 when built in code).
	Line int `json:"-"`
}

// Validate checks the event's type and, for tool calls, the call.
func (e *Event) Validate() error {
	switch e.Type {
	case EventTick, EventRollback, EventEndRound, EventThought, EventText, EventForceTerminal:
		if e.Name != "" || e.Args != nil || e.Status != "" || e.Output != "" || e.Files != nil {
			return fmt.Errorf("%w: tool call fields on a %s event", ErrBadValue, e.Type)
		}
		return nil
	case EventToolCall:
		return e.ToolCall.Validate()
	case "":
		return fmt.Errorf("%w: missing \"type\" (want tick, rollback, tool_call, end_round, thought, text or force_terminal)", ErrUnknownEventType)
	}
	return fmt.Errorf("%w: %q (want tick, rollback, tool_call, end_round, thought, text or force_terminal)", ErrUnknownEventType, e.Type)
}

const maxEventLine = 1 << 20

// ParseEvents reads a JSON-lines agent log. Blank lines and lines starting
// with # are skipped; unknown fields are errors. Errors are *EventError
// naming the 1-based line.
func ParseEvents(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var events []Event
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var ev Event
		if err := dec.Decode(&ev); err != nil {
			return nil, &EventError{Line: line, Err: jsonError(err)}
		}
		if dec.More() {
			return nil, &EventError{Line: line, Err: errors.New("more than one JSON value on the line")}
		}
		if err := ev.Validate(); err != nil {
			return nil, &EventError{Line: line, Err: err}
		}
		ev.Line = line
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &EventError{Line: line + 1, Err: fmt.Errorf("line longer than %d bytes", maxEventLine)}
		}
		return nil, &EventError{Line: line + 1, Err: err}
	}
	return events, nil
}

func jsonError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed JSON at byte %d: %v", se.Offset, err)
	}
	return fmt.Errorf("malformed event: %v", err)
}

// Timeline is the result of a replay: one record per round.
type Timeline struct {
	Strategy string        `json:"strategy"`
	Pipeline string        `json:"pipeline"`
	Budget   Budget        `json:"budget"`
	Rounds   []RoundRecord `json:"rounds"`
	Exit     ExitReason    `json:"exit,omitempty"`
	// ExitRound is the round the session ended in.
	ExitRound int `json:"exit_round,omitempty"`
	// Ignored counts events after the session ended.
	Ignored int     `json:"ignored,omitempty"`
	Metrics Metrics `json:"metrics"`
	Quality Quality `json:"quality"`
}

// RoundRecord is what happened in one round. Round 0 holds events before the
// first tick.
type RoundRecord struct {
	Round       int           `json:"round"`
	Phase       string        `json:"phase"` // phase at the model call
	ToolChoice  ChoiceMode    `json:"tool_choice,omitempty"`
	Calls       []CallRecord  `json:"calls,omitempty"`
	NewInfo     bool          `json:"new_info"`
	Nudges      []Nudge       `json:"nudges,omitempty"`
	Transitions []PhaseChange `json:"transitions,omitempty"`
	Text        TextAction    `json:"text,omitempty"`
	Rollbacks   int           `json:"rollbacks,omitempty"`
	Forced      string        `json:"forced,omitempty"` // reason of a force_terminal event
	Exit        ExitReason    `json:"exit,omitempty"`
}

// CallRecord is one tool call in a round.
type CallRecord struct {
	Name   string     `json:"name"`
	Kind   ToolKind   `json:"kind"`
	Status CallStatus `json:"status,omitempty"`
	New    bool       `json:"new"`
}

// Replay runs a recorded agent log through a new tracker with the given
// strategy and budget, as the agent's runtime would: each tick is followed by
// ShouldExit, ToolChoice and Nudge. Events after the session ends are
// counted as ignored. Errors: the strategy's or budget's validation error, or
// an *EventError for an invalid event.
func Replay(strategy Strategy, budget Budget, events []Event) (Timeline, error) {
	s, err := NewSession(strategy, budget)
	if err != nil {
		return Timeline{}, err
	}
	for i := range events {
		if _, err := s.Apply(events[i]); err != nil {
			var ee *EventError
			if errors.As(err, &ee) && ee.Line == 0 {
				ee.Line = i + 1
			}
			return Timeline{}, err
		}
	}
	return s.Timeline(), nil
}

// Session is a tracker with the timeline of what happened in it: the unit
// a service keeps for an agent session between hook calls. Apply feeds one
// event the way Replay does; Snapshot and RestoreSession persist it.
type Session struct {
	t  *Tracker
	tl Timeline
}

// SessionState is a session as a plain value (JSON round-trip exact).
type SessionState struct {
	Tracker  State    `json:"tracker"`
	Timeline Timeline `json:"timeline"`
}

// NewSession starts a session.
func NewSession(strategy Strategy, budget Budget, opts ...Option) (*Session, error) {
	t, err := New(strategy, budget, opts...)
	if err != nil {
		return nil, err
	}
	return &Session{t: t, tl: Timeline{Strategy: strategy.Name, Pipeline: strategy.Pipeline, Budget: budget}}, nil
}

// RestoreSession rebuilds a session from its snapshot.
func RestoreSession(st SessionState, opts ...Option) (*Session, error) {
	t, err := Restore(st.Tracker, opts...)
	if err != nil {
		return nil, err
	}
	return &Session{t: t, tl: st.Timeline}, nil
}

// Snapshot returns the session as a plain value.
func (s *Session) Snapshot() SessionState {
	tl := s.tl
	tl.Rounds = append([]RoundRecord{}, s.tl.Rounds...)
	return SessionState{Tracker: s.t.Snapshot(), Timeline: tl}
}

// Tracker is the session's tracker (for its queries; feed events with Apply).
func (s *Session) Tracker() *Tracker { return s.t }

// Timeline is what happened so far, with current metrics and quality.
func (s *Session) Timeline() Timeline {
	tl := s.tl
	tl.Rounds = append([]RoundRecord(nil), s.tl.Rounds...)
	tl.Metrics, tl.Quality = s.t.Metrics(), s.t.Quality()
	return tl
}

// Step is what one event produced.
type Step struct {
	// Nudges produced by the event, in order (a tick's nudge, an end of
	// round's transition nudge, a text reply's nudge).
	Nudges []Nudge `json:"nudges,omitempty"`
	// Text is the decision on a text reply.
	Text *TextDecision `json:"text,omitempty"`
	// Choice is the tool choice for the round a tick started.
	Choice *ToolChoice `json:"tool_choice,omitempty"`
	// Exit is set when the session has ended.
	Exit ExitReason `json:"exit,omitempty"`
	// Ignored: the session had already ended.
	Ignored bool `json:"ignored,omitempty"`
}

// Apply feeds one event to the session. An invalid event is an
// *EventError and changes nothing; events after the end are ignored.
func (s *Session) Apply(ev Event) (Step, error) {
	t, tl := s.t, &s.tl
	if err := ev.Validate(); err != nil {
		return Step{}, &EventError{Line: ev.Line, Err: err}
	}
	if reason, done := t.Done(); done {
		tl.Ignored++
		return Step{Ignored: true, Exit: reason}, nil
	}
	record := func(round int) *RoundRecord {
		for i := len(tl.Rounds) - 1; i >= 0; i-- {
			if tl.Rounds[i].Round == round {
				return &tl.Rounds[i]
			}
		}
		tl.Rounds = append(tl.Rounds, RoundRecord{Round: round, Phase: t.Phase()})
		return &tl.Rounds[len(tl.Rounds)-1]
	}
	var step Step
	seen := len(t.s.History)
	var nudges []*Nudge
	switch ev.Type {
	case EventTick:
		t.Tick(ev.Time)
		if _, exit := t.ShouldExit(); !exit {
			rec := record(t.Iteration())
			choice := t.ToolChoice()
			rec.Phase, rec.ToolChoice, step.Choice = t.Phase(), choice.Mode, &choice
			nudges = append(nudges, t.Nudge())
		}
	case EventRollback:
		record(t.Iteration()).Rollbacks++
		t.RollbackTick()
	case EventToolCall:
		res, _ := t.RecordToolCall(ev.ToolCall)
		rec := record(t.Iteration())
		rec.Calls = append(rec.Calls, CallRecord{Name: ev.Name, Kind: res.Kind, Status: ev.Status, New: res.New})
		rec.NewInfo = rec.NewInfo || res.New
	case EventEndRound:
		nudges = append(nudges, t.EndRound())
	case EventThought:
		t.RecordThought(ev.Text)
	case EventText:
		d := t.OnTextResponse(ev.Text)
		record(t.Iteration()).Text = d.Action
		step.Text = &d
		nudges = append(nudges, d.Nudge)
	case EventForceTerminal:
		record(t.Iteration()).Forced = cmpOr(ev.Reason, "forced")
		t.ForceTerminal(ev.Reason)
	}
	for _, h := range t.s.History[seen:] {
		rec := record(h.Round)
		rec.Transitions = append(rec.Transitions, h)
	}
	for _, n := range nudges {
		if n != nil {
			rec := record(t.Iteration())
			rec.Nudges = append(rec.Nudges, *n)
			step.Nudges = append(step.Nudges, *n)
		}
	}
	if reason, done := t.Done(); done {
		rec := record(t.Iteration())
		rec.Exit = reason
		tl.Exit, tl.ExitRound = reason, t.Iteration()
		step.Exit = reason
	}
	return step, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// RenderTimeline writes a timeline as text: a header, one line per round
// (phase, tool choice, calls with * marking new information, events), the
// exit, and the nudges with the first line of their text.
func RenderTimeline(w io.Writer, tl Timeline) error {
	b := tl.Budget
	var out strings.Builder
	fmt.Fprintf(&out, "strategy %s (pipeline %s)\n", tl.Strategy, cmpOr(tl.Pipeline, "-"))
	fmt.Fprintf(&out, "budget: max_iterations %d, search_budget %d, search_budget_grace %d, max_submits %d, soft_submit_limit %d, idle_rounds_to_exit %d\n\n",
		b.MaxIterations, b.SearchBudget, b.SearchBudgetGrace, b.MaxSubmits, b.SoftSubmitLimit, b.IdleRoundsToExit)
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "round\tphase\ttools\tcalls\tevents")
	for _, r := range tl.Rounds {
		var calls []string
		for _, c := range r.Calls {
			s := c.Name
			if c.New {
				s += "*"
			}
			if c.Status != "" && c.Status != StatusOK {
				s += "!" + string(c.Status)
			}
			calls = append(calls, s)
		}
		var events []string
		if r.Rollbacks > 0 {
			events = append(events, fmt.Sprintf("rollback×%d", r.Rollbacks))
		}
		for _, n := range r.Nudges {
			events = append(events, "nudge "+string(n.Kind))
		}
		if r.Forced != "" {
			events = append(events, "force_terminal("+r.Forced+")")
		}
		for _, h := range r.Transitions {
			events = append(events, fmt.Sprintf("%s→%s (%s)", h.From, h.To, h.Cause))
		}
		if r.Text != "" {
			events = append(events, "text: "+string(r.Text))
		}
		if r.Exit != "" {
			events = append(events, "exit: "+string(r.Exit))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Round, r.Phase, cmpOr(string(r.ToolChoice), "-"),
			cmpOr(strings.Join(calls, " "), "-"), strings.Join(events, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	m := tl.Metrics
	exit := "none (log ended)"
	if tl.Exit != "" {
		exit = fmt.Sprintf("%s in round %d", tl.Exit, tl.ExitRound)
	}
	fmt.Fprintf(&out, "\nexit: %s\n", exit)
	fmt.Fprintf(&out, "phase %s · %d rounds · %d tool calls · %d files, %d patterns, %d queries · %d submits · %d findings · new-info rate %.2f · quality %d\n",
		m.Phase, m.Iteration, m.TotalToolCalls, m.UniqueFiles, m.UniquePatterns, m.UniqueQueries,
		m.SubmitCount, m.FindingCount, m.NewInfoRate, tl.Quality.Score)
	if p := m.Plan; p.Versions > 0 {
		fmt.Fprintf(&out, "plan: %d/%d steps done · deviation %.2f · %d unplanned calls · %d replans\n",
			p.Covered, p.Steps, p.Deviation, p.Unplanned, p.Replans)
	}
	if tl.Ignored > 0 {
		fmt.Fprintf(&out, "ignored events after the exit: %d\n", tl.Ignored)
	}
	first := true
	for _, r := range tl.Rounds {
		for _, n := range r.Nudges {
			if first {
				out.WriteString("\nnudges:\n")
				first = false
			}
			fmt.Fprintf(&out, "  round %d %s: %s\n", r.Round, n.Kind, firstLine(n.Text, 110))
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func firstLine(s string, limit int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "…"
	}
	return s
}
