package team

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// PatternID names a collaboration pattern.
type PatternID string

// The seed's ten collaboration patterns.
const (
	CP1  PatternID = "CP-1"  // Linear Pipeline
	CP2  PatternID = "CP-2"  // Review-Fix Cycle
	CP3  PatternID = "CP-3"  // Parallel Fan-out/Fan-in
	CP4  PatternID = "CP-4"  // Consensus Gate
	CP5  PatternID = "CP-5"  // Escalation Chain
	CP6  PatternID = "CP-6"  // Incremental Delivery
	CP7  PatternID = "CP-7"  // Swarming
	CP8  PatternID = "CP-8"  // Consulting/Advisory
	CP9  PatternID = "CP-9"  // Dual-Track
	CP10 PatternID = "CP-10" // Post-Mortem
)

// Patterns lists the pattern ids in order.
var Patterns = []PatternID{CP1, CP2, CP3, CP4, CP5, CP6, CP7, CP8, CP9, CP10}

var patternNames = map[PatternID]string{
	CP1: "Linear Pipeline", CP2: "Review-Fix Cycle", CP3: "Parallel Fan-out/Fan-in", CP4: "Consensus Gate",
	CP5: "Escalation Chain", CP6: "Incremental Delivery", CP7: "Swarming", CP8: "Consulting/Advisory",
	CP9: "Dual-Track", CP10: "Post-Mortem",
}

// Name is the pattern's name in the seed ("Review-Fix Cycle"), "" if unknown.
func (p PatternID) Name() string { return patternNames[p] }

// Valid reports whether p is CP-1 … CP-10.
func (p PatternID) Valid() bool { _, ok := patternNames[p]; return ok }

// OutcomeStatus is how a run ended.
type OutcomeStatus string

// Outcome statuses.
const (
	// OutcomeSuccess: the pattern's success gate was met.
	OutcomeSuccess OutcomeStatus = "success"
	// OutcomeFailed: the run could not reach its gate and no fallback applied.
	OutcomeFailed OutcomeStatus = "failed"
	// OutcomeEscalated: handed to the user (or a higher level) to decide.
	OutcomeEscalated OutcomeStatus = "escalated"
	// OutcomeDegraded: finished by a fallback (partial results, a default
	// decision, a workaround, a simpler pattern).
	OutcomeDegraded OutcomeStatus = "degraded"
)

// Terminal states of every run; the state name says how it ended.
const (
	StateDone      = "DONE"
	StateFailed    = "FAILED"
	StateEscalated = "ESCALATED"
	StateDegraded  = "DEGRADED"
)

func terminalState(s OutcomeStatus) string {
	switch s {
	case OutcomeSuccess:
		return StateDone
	case OutcomeEscalated:
		return StateEscalated
	case OutcomeDegraded:
		return StateDegraded
	}
	return StateFailed
}

// Outcome is what a finished run reports to the learning system.
type Outcome struct {
	Pattern    PatternID       `json:"pattern"`
	Status     OutcomeStatus   `json:"status"`
	Success    bool            `json:"success"`
	Summary    string          `json:"summary"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	DurationMs int64           `json:"duration_ms"`
	Iterations int             `json:"iterations"`
	Errors     int             `json:"errors"`  // failed tasks, invalid messages, timeouts
	Retries    int             `json:"retries"` // redone work: fix tasks, revisions, re-votes
	Data       json.RawMessage `json:"data,omitempty"`
}

// RunTask is the run's record of a task it created, by run-local key.
type RunTask struct {
	Subject string      `json:"subject"`
	Role    Role        `json:"role,omitempty"`
	Owner   string      `json:"owner,omitempty"`
	Expect  MessageType `json:"expect,omitempty"` // the report type its result carries
	Status  TaskStatus  `json:"status"`
}

// RunChild is the run's record of a child run it started.
type RunChild struct {
	Pattern PatternID     `json:"pattern"`
	Status  OutcomeStatus `json:"status,omitempty"` // empty while running
}

// RunAsk is a question put to the user that awaits an answer.
type RunAsk struct {
	Question string    `json:"question"`
	Options  []string  `json:"options,omitempty"`
	AskedAt  time.Time `json:"asked_at"`
}

// Decision is one entry of a run's log: a state change (From ≠ To) or a
// decision inside a state, with the event that caused it and why.
type Decision struct {
	At     time.Time `json:"at"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Event  string    `json:"event"`
	Reason string    `json:"reason"`
}

// Run is one collaboration pattern run: a persisted state machine. Its whole
// state is this value, which round-trips through encoding/json; Start and
// Step depend only on (run, event, now), so a service persists the run after
// every step and resumes after a crash by loading it and delivering the
// next event.
type Run struct {
	ID            string               `json:"id"`
	Pattern       PatternID            `json:"pattern"`
	Team          string               `json:"team"`
	ParentID      string               `json:"parent_id,omitempty"`
	ParentKey     string               `json:"parent_key,omitempty"` // the child key in the parent
	State         string               `json:"state"`
	Iteration     int                  `json:"iteration"`
	MaxIterations int                  `json:"max_iterations"`
	StartedAt     time.Time            `json:"started_at"`
	UpdatedAt     time.Time            `json:"updated_at"`
	Config        Config               `json:"config"`
	Input         json.RawMessage      `json:"input,omitempty"`
	Data          json.RawMessage      `json:"data,omitempty"` // the pattern's own state
	Tasks         map[string]RunTask   `json:"tasks,omitempty"`
	Children      map[string]RunChild  `json:"children,omitempty"`
	Timers        map[string]time.Time `json:"timers,omitempty"`
	Asks          map[string]RunAsk    `json:"asks,omitempty"`
	LastSeq       int64                `json:"last_seq,omitempty"` // highest message seq handled
	Sent          int                  `json:"sent,omitempty"`     // messages sent
	Errors        int                  `json:"errors,omitempty"`
	Retries       int                  `json:"retries,omitempty"`
	Decisions     []Decision           `json:"decisions,omitempty"`
	Outcome       *Outcome             `json:"outcome,omitempty"`
	// Compose is set on the runs of a composition: the steps, and which
	// one this run is (the service starts the next when it finishes).
	Compose *Composed `json:"compose,omitempty"`
}

// Finished reports whether the run has ended.
func (r Run) Finished() bool { return r.Outcome != nil }

func (r Run) clone() Run {
	r.Tasks = maps.Clone(r.Tasks)
	r.Children = maps.Clone(r.Children)
	r.Timers = maps.Clone(r.Timers)
	r.Asks = maps.Clone(r.Asks)
	r.Decisions = slices.Clone(r.Decisions)
	if r.Outcome != nil {
		o := *r.Outcome
		r.Outcome = &o
	}
	return r
}

// RunSpec describes a run to start.
type RunSpec struct {
	ID        string
	Pattern   PatternID
	Team      string
	ParentID  string
	ParentKey string
	Config    Config
	Input     json.RawMessage
	Compose   *Composed
}

// EventKind says what happened.
type EventKind string

// Event kinds.
const (
	EventMessage EventKind = "message" // a bus message reached the run
	EventTask    EventKind = "task"    // a task the run created changed status
	EventTimer   EventKind = "timer"   // a timer the run set fired
	EventChild   EventKind = "child"   // a child run finished
	EventUser    EventKind = "user"    // the user answered a question
)

// TaskChange is a status change of a task the run created.
type TaskChange struct {
	Status TaskStatus      `json:"status"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	By     string          `json:"by,omitempty"` // the member that reported
}

// ChildResult is a finished child run.
type ChildResult struct {
	Key     string  `json:"key"`
	RunID   string  `json:"run_id,omitempty"`
	Outcome Outcome `json:"outcome"`
}

// UserReply answers a question the run asked.
type UserReply struct {
	Key    string          `json:"key"`
	Choice string          `json:"choice,omitempty"`
	Text   string          `json:"text,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// Event is one input of a run. Exactly the fields of its kind are set.
type Event struct {
	Kind EventKind `json:"kind"`
	// Message: the bus message (kind message).
	Message *Message `json:"message,omitempty"`
	// TaskKey: the run-local key of the task (kind task), or of the task a
	// message reports on (Message.Task), when the service knows it.
	TaskKey string      `json:"task_key,omitempty"`
	Task    *TaskChange `json:"task,omitempty"`
	// Timer and TimerAt: the name and scheduled time of a fired timer. A
	// timer that was cancelled or set again since is ignored.
	Timer   string       `json:"timer,omitempty"`
	TimerAt time.Time    `json:"timer_at,omitzero"`
	Child   *ChildResult `json:"child,omitempty"`
	Reply   *UserReply   `json:"reply,omitempty"`
}

// CommandKind says what the service must do.
type CommandKind string

// Command kinds.
const (
	CmdCreateTask      CommandKind = "create_task"
	CmdUpdateTask      CommandKind = "update_task"
	CmdCancelTask      CommandKind = "cancel_task"
	CmdPauseTask       CommandKind = "pause_task"
	CmdResumeTask      CommandKind = "resume_task"
	CmdSendMessage     CommandKind = "send_message"
	CmdSetTimer        CommandKind = "set_timer"
	CmdCancelTimer     CommandKind = "cancel_timer"
	CmdStartRun        CommandKind = "start_run"
	CmdCancelRun       CommandKind = "cancel_run"
	CmdAskUser         CommandKind = "ask_user"
	CmdRecordDecision  CommandKind = "record_decision"
	CmdRecordPattern   CommandKind = "record_pattern"
	CmdRecordHeuristic CommandKind = "record_heuristic"
	CmdFinishRun       CommandKind = "finish_run"
)

// TaskSpec is a task to create. BlockedBy holds run-local keys.
type TaskSpec struct {
	Subject      string          `json:"subject"`
	Description  string          `json:"description,omitempty"`
	Role         Role            `json:"role,omitempty"`
	Owner        string          `json:"owner,omitempty"`
	Capabilities []string        `json:"capabilities,omitempty"`
	BlockedBy    []string        `json:"blocked_by,omitempty"`
	Gate         string          `json:"gate,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	Expect       MessageType     `json:"expect,omitempty"`
}

// OutMessage is a message to send from the run's coordinator.
type OutMessage struct {
	To      string          `json:"to"`
	Type    MessageType     `json:"type"`
	Summary string          `json:"summary,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ChildSpec is a child run to start.
type ChildSpec struct {
	Pattern PatternID       `json:"pattern"`
	Input   json.RawMessage `json:"input"`
}

// TeamDecision is a durable team decision (an ADR-like record): CP-4's
// outcome with its conditions as implementation constraints.
type TeamDecision struct {
	Title       string   `json:"title"`
	Decision    string   `json:"decision"`
	DecidedBy   string   `json:"decided_by"` // "vote", "coordinator", "user"
	Rationale   string   `json:"rationale,omitempty"`
	Constraints []string `json:"constraints,omitempty"`
}

// Learning is something to remember: a pattern observation for the
// learning system (record_pattern; Success is the outcome of the work it
// was seen in) or a heuristic for the experience system
// (record_heuristic: Content is the rule, Trigger when it applies,
// Evidence what it is backed by).
type Learning struct {
	Content string `json:"content"`
	Context string `json:"context,omitempty"`
	// Trigger says when a heuristic applies (record_heuristic).
	Trigger  string   `json:"trigger,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Success  bool     `json:"success"`
}

// Command is one action for the service to execute in the transaction that
// persists the step. Key names the task (create/update/cancel/pause/resume
// of run tasks), timer, child run or question; TaskID names a task the run
// did not create (CP-7 pauses).
type Command struct {
	Kind     CommandKind   `json:"kind"`
	Key      string        `json:"key,omitempty"`
	TaskID   string        `json:"task_id,omitempty"`
	Task     *TaskSpec     `json:"task,omitempty"`
	Message  *OutMessage   `json:"message,omitempty"`
	At       time.Time     `json:"at,omitzero"`
	Child    *ChildSpec    `json:"child,omitempty"`
	Ask      *RunAsk       `json:"ask,omitempty"`
	Decision *TeamDecision `json:"decision,omitempty"`
	Learning *Learning     `json:"learning,omitempty"`
	Outcome  *Outcome      `json:"outcome,omitempty"`
	Reason   string        `json:"reason,omitempty"`
}

// machine is one pattern's reducer over its own state struct.
type machine interface {
	start(c *ctx, input json.RawMessage) error
	handle(c *ctx, s signal) error
}

// canceller is implemented by patterns that must undo something when a run
// is cancelled from outside (CP-7 resumes paused tasks).
type canceller interface {
	cancel(c *ctx)
}

func newMachine(p PatternID) (machine, error) {
	switch p {
	case CP1:
		return &pipeline{}, nil
	case CP2:
		return &reviewFix{}, nil
	case CP3:
		return &fanOut{}, nil
	case CP4:
		return &consensus{}, nil
	case CP5:
		return &escalation{}, nil
	case CP6:
		return &incremental{}, nil
	case CP7:
		return &swarm{}, nil
	case CP8:
		return &consult{}, nil
	case CP9:
		return &dualTrack{}, nil
	case CP10:
		return &postMortem{}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownPattern, p)
}

// Start creates a run and returns it with its first commands.
func Start(spec RunSpec, now time.Time) (Run, []Command, error) {
	op := "start " + string(spec.Pattern)
	m, err := newMachine(spec.Pattern)
	if err != nil {
		return Run{}, nil, err
	}
	if spec.ID == "" || len(spec.ID) > 128 {
		return Run{}, nil, invalid(op, "id", "required, at most 128 bytes")
	}
	if !ValidName(spec.Team) {
		return Run{}, nil, invalid(op, "team", "%q is not a valid team name", spec.Team)
	}
	if err := spec.Config.Validate(); err != nil {
		return Run{}, nil, err
	}
	if len(spec.Input) > MaxDataLen {
		return Run{}, nil, invalid(op, "input", "%d bytes, at most %d", len(spec.Input), MaxDataLen)
	}
	r := Run{
		ID: spec.ID, Pattern: spec.Pattern, Team: spec.Team, ParentID: spec.ParentID, ParentKey: spec.ParentKey,
		StartedAt: now, UpdatedAt: now, Config: spec.Config, Input: spec.Input, Compose: spec.Compose,
	}
	c := &ctx{r: &r, now: now, event: "start"}
	if err := m.start(c, spec.Input); err != nil {
		return Run{}, nil, err
	}
	if err := c.save(m); err != nil {
		return Run{}, nil, err
	}
	return r, c.cmds, nil
}

// Step advances a run by one event at now and returns the new run and the
// commands to execute. The input run is never modified; on error it is the
// run to keep. Duplicate and stale events (a message seq already handled, a
// task status already recorded, a timer cancelled or re-set since, a child
// already finished) return the run unchanged and no commands.
func Step(r Run, ev Event, now time.Time) (Run, []Command, error) {
	if r.Finished() {
		return r, nil, fmt.Errorf("%w: run %s (%s)", ErrRunFinished, r.ID, r.Outcome.Status)
	}
	m, err := resume(r)
	if err != nil {
		return r, nil, err
	}
	nr := r.clone()
	c := &ctx{r: &nr, now: now}
	s, err := c.normalize(ev)
	if errors.Is(err, errDuplicate) {
		return r, nil, nil
	}
	if err != nil {
		return r, nil, err
	}
	if s != nil {
		if err := m.handle(c, *s); err != nil {
			return r, nil, err
		}
	}
	if nr.Iteration > nr.MaxIterations {
		return r, nil, fmt.Errorf("%w: run %s iteration %d exceeds %d", ErrBadRun, r.ID, nr.Iteration, nr.MaxIterations)
	}
	if err := c.save(m); err != nil {
		return r, nil, err
	}
	nr.UpdatedAt = now
	return nr, c.cmds, nil
}

// Cancel ends a run from outside (its parent finished, the user stopped it):
// open tasks, timers and children are cancelled and the outcome is failed.
func Cancel(r Run, reason string, now time.Time) (Run, []Command, error) {
	if r.Finished() {
		return r, nil, fmt.Errorf("%w: run %s", ErrRunFinished, r.ID)
	}
	m, err := resume(r)
	if err != nil {
		return r, nil, err
	}
	nr := r.clone()
	c := &ctx{r: &nr, now: now, event: "cancel"}
	if cc, ok := m.(canceller); ok {
		cc.cancel(c)
	}
	c.finish(OutcomeFailed, "cancelled: "+reason, nil)
	if err := c.save(m); err != nil {
		return r, nil, err
	}
	return nr, c.cmds, nil
}

// resume rebuilds a run's pattern machine from its persisted state.
func resume(r Run) (machine, error) {
	m, err := newMachine(r.Pattern)
	if err != nil {
		return nil, err
	}
	if len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, m); err != nil {
			return nil, fmt.Errorf("%w: run %s: %v", ErrBadRun, r.ID, err)
		}
	}
	return m, nil
}

var errDuplicate = errors.New("duplicate event")

type sigKind int

const (
	sigReport sigKind = iota + 1 // a typed report: a message, or a task completed with its expected result
	sigTask                      // a task status change without a report
	sigTimer
	sigChild
	sigUser
)

// signal is an event normalised for the pattern reducers.
type signal struct {
	kind    sigKind
	key     string // task key, timer name, child key or question key
	from    string
	typ     MessageType
	payload any
	status  TaskStatus
	result  json.RawMessage
	errText string
	child   *Outcome
	reply   *UserReply
}

func (c *ctx) normalize(ev Event) (*signal, error) {
	r := c.r
	switch ev.Kind {
	case EventMessage:
		if ev.Message == nil {
			return nil, fmt.Errorf("%w: message event without a message", ErrBadEvent)
		}
		m := ev.Message
		if m.Seq > 0 && m.Seq <= r.LastSeq {
			return nil, errDuplicate
		}
		r.LastSeq = max(r.LastSeq, m.Seq)
		c.event = fmt.Sprintf("message %s #%d from %s", m.Type, m.Seq, m.From)
		payload, err := (*Registry)(nil).Decode(m.Type, m.Data)
		if err != nil {
			r.Errors++
			c.note("ignored: " + err.Error())
			return nil, nil
		}
		key := ev.TaskKey
		if _, ok := r.Tasks[key]; !ok {
			key = ""
		}
		return &signal{kind: sigReport, key: key, from: m.From, typ: m.Type, payload: payload}, nil
	case EventTask:
		if ev.Task == nil || ev.TaskKey == "" {
			return nil, fmt.Errorf("%w: task event without task key or change", ErrBadEvent)
		}
		t, ok := r.Tasks[ev.TaskKey]
		if !ok {
			return nil, fmt.Errorf("%w: run %s has no task %q", ErrUnknownTask, r.ID, ev.TaskKey)
		}
		if !ev.Task.Status.Valid() {
			return nil, fmt.Errorf("%w: task status %q", ErrBadEvent, ev.Task.Status)
		}
		if t.Status == ev.Task.Status || t.Status.Terminal() && t.Status != StatusFailed {
			return nil, errDuplicate
		}
		t.Status = ev.Task.Status
		r.Tasks[ev.TaskKey] = t
		c.event = fmt.Sprintf("task %s (%s) %s", t.Subject, ev.TaskKey, ev.Task.Status)
		s := &signal{kind: sigTask, key: ev.TaskKey, from: ev.Task.By, status: ev.Task.Status, result: ev.Task.Result, errText: ev.Task.Error}
		switch ev.Task.Status {
		case StatusFailed:
			r.Errors++
		case StatusCompleted:
			if t.Expect != "" && len(ev.Task.Result) > 0 {
				if p, err := (*Registry)(nil).Decode(t.Expect, ev.Task.Result); err == nil {
					s.kind, s.typ, s.payload = sigReport, t.Expect, p
				}
			}
		}
		return s, nil
	case EventTimer:
		at, ok := r.Timers[ev.Timer]
		if !ok || (!ev.TimerAt.IsZero() && !ev.TimerAt.Equal(at)) {
			return nil, errDuplicate
		}
		if c.now.Before(at) {
			return nil, fmt.Errorf("%w: timer %q is due at %s, now is %s", ErrTimerNotDue, ev.Timer, at.UTC().Format(time.RFC3339), c.now.UTC().Format(time.RFC3339))
		}
		delete(r.Timers, ev.Timer)
		c.event = "timer " + ev.Timer
		return &signal{kind: sigTimer, key: ev.Timer}, nil
	case EventChild:
		if ev.Child == nil {
			return nil, fmt.Errorf("%w: child event without a result", ErrBadEvent)
		}
		ch, ok := r.Children[ev.Child.Key]
		if !ok {
			return nil, fmt.Errorf("%w: run %s has no child %q", ErrBadEvent, r.ID, ev.Child.Key)
		}
		if ch.Status != "" {
			return nil, errDuplicate
		}
		st := ev.Child.Outcome.Status
		if st != OutcomeSuccess && st != OutcomeFailed && st != OutcomeEscalated && st != OutcomeDegraded {
			return nil, fmt.Errorf("%w: child outcome status %q", ErrBadEvent, st)
		}
		ch.Status = st
		r.Children[ev.Child.Key] = ch
		c.event = fmt.Sprintf("child %s (%s) %s", ev.Child.Key, ch.Pattern, st)
		o := ev.Child.Outcome
		return &signal{kind: sigChild, key: ev.Child.Key, child: &o}, nil
	case EventUser:
		if ev.Reply == nil {
			return nil, fmt.Errorf("%w: user event without a reply", ErrBadEvent)
		}
		if _, ok := r.Asks[ev.Reply.Key]; !ok {
			return nil, errDuplicate
		}
		delete(r.Asks, ev.Reply.Key)
		c.event = "user reply to " + ev.Reply.Key
		rep := *ev.Reply
		return &signal{kind: sigUser, key: rep.Key, reply: &rep}, nil
	}
	return nil, fmt.Errorf("%w: kind %q", ErrBadEvent, ev.Kind)
}

// ctx collects the effects of one Start or Step.
type ctx struct {
	r     *Run
	now   time.Time
	event string
	cmds  []Command
}

func (c *ctx) save(m machine) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%w: encode state of run %s: %v", ErrBadRun, c.r.ID, err)
	}
	c.r.Data = data
	return nil
}

// to moves the run to state and records why.
func (c *ctx) to(state, reason string) {
	c.r.Decisions = append(c.r.Decisions, Decision{At: c.now, From: c.r.State, To: state, Event: c.event, Reason: reason})
	c.r.State = state
}

// note records a decision that keeps the state.
func (c *ctx) note(reason string) {
	c.r.Decisions = append(c.r.Decisions, Decision{At: c.now, From: c.r.State, To: c.r.State, Event: c.event, Reason: reason})
}

func (c *ctx) emit(cmd Command) { c.cmds = append(c.cmds, cmd) }

// task creates a task under a run-local key (which must be new).
func (c *ctx) task(key string, spec TaskSpec) {
	if c.r.Tasks == nil {
		c.r.Tasks = map[string]RunTask{}
	}
	if _, dup := c.r.Tasks[key]; dup {
		// Keys are generated from counters; a duplicate is a bug. Keep the
		// run consistent by suffixing.
		key = fmt.Sprintf("%s~%d", key, len(c.r.Tasks))
	}
	c.r.Tasks[key] = RunTask{Subject: spec.Subject, Role: spec.Role, Owner: spec.Owner, Expect: spec.Expect, Status: StatusPending}
	sp := spec
	c.emit(Command{Kind: CmdCreateTask, Key: key, Task: &sp})
}

// cancelTask cancels a run task that is not terminal.
func (c *ctx) cancelTask(key, reason string) {
	t, ok := c.r.Tasks[key]
	if !ok || t.Status.Terminal() {
		return
	}
	t.Status = StatusCancelled
	c.r.Tasks[key] = t
	c.emit(Command{Kind: CmdCancelTask, Key: key, Reason: reason})
}

func (c *ctx) send(to string, typ MessageType, summary string, data any) {
	raw, _ := json.Marshal(data)
	if data == nil {
		raw = nil
	}
	c.r.Sent++
	c.emit(Command{Kind: CmdSendMessage, Message: &OutMessage{To: to, Type: typ, Summary: clip(summary, MaxSummaryLen), Data: raw}})
}

func (c *ctx) setTimer(name string, d time.Duration) {
	if c.r.Timers == nil {
		c.r.Timers = map[string]time.Time{}
	}
	at := c.now.Add(d)
	c.r.Timers[name] = at
	c.emit(Command{Kind: CmdSetTimer, Key: name, At: at})
}

func (c *ctx) cancelTimer(name string) {
	if _, ok := c.r.Timers[name]; !ok {
		return
	}
	delete(c.r.Timers, name)
	c.emit(Command{Kind: CmdCancelTimer, Key: name})
}

func (c *ctx) startChild(key string, p PatternID, input any, reason string) error {
	if err := CheckChild(c.r.Pattern, p); err != nil {
		return err
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return fmt.Errorf("%w: child input: %v", ErrBadRun, err)
	}
	if c.r.Children == nil {
		c.r.Children = map[string]RunChild{}
	}
	if _, dup := c.r.Children[key]; dup {
		key = fmt.Sprintf("%s~%d", key, len(c.r.Children))
	}
	c.r.Children[key] = RunChild{Pattern: p}
	c.emit(Command{Kind: CmdStartRun, Key: key, Child: &ChildSpec{Pattern: p, Input: raw}, Reason: reason})
	return nil
}

func (c *ctx) ask(key, question string, options []string) {
	if c.r.Asks == nil {
		c.r.Asks = map[string]RunAsk{}
	}
	a := RunAsk{Question: question, Options: options, AskedAt: c.now}
	c.r.Asks[key] = a
	c.emit(Command{Kind: CmdAskUser, Key: key, Ask: &a})
}

func (c *ctx) record(d TeamDecision) { c.emit(Command{Kind: CmdRecordDecision, Decision: &d}) }

func (c *ctx) learn(kind CommandKind, l Learning) { c.emit(Command{Kind: kind, Learning: &l}) }

// finish ends the run: timers, open tasks, running children and open
// questions are withdrawn, the outcome recorded and a finish command emitted.
func (c *ctx) finish(status OutcomeStatus, summary string, data any) {
	r := c.r
	for _, name := range slices.Sorted(maps.Keys(r.Timers)) {
		c.cancelTimer(name)
	}
	for _, key := range slices.Sorted(maps.Keys(r.Tasks)) {
		c.cancelTask(key, "run finished")
	}
	for _, key := range slices.Sorted(maps.Keys(r.Children)) {
		if ch := r.Children[key]; ch.Status == "" {
			ch.Status = OutcomeFailed
			r.Children[key] = ch
			c.emit(Command{Kind: CmdCancelRun, Key: key, Reason: "parent finished"})
		}
	}
	r.Asks = nil
	var raw json.RawMessage
	if data != nil {
		raw, _ = json.Marshal(data)
	}
	o := Outcome{
		Pattern: r.Pattern, Status: status, Success: status == OutcomeSuccess, Summary: clip(summary, 2000),
		StartedAt: r.StartedAt, FinishedAt: c.now, DurationMs: c.now.Sub(r.StartedAt).Milliseconds(),
		Iterations: r.Iteration, Errors: r.Errors, Retries: r.Retries, Data: raw,
	}
	c.to(terminalState(status), summary)
	r.Outcome = &o
	oc := o
	c.emit(Command{Kind: CmdFinishRun, Outcome: &oc})
}

// decodeInput decodes a pattern's input strictly.
func decodeInput(op string, raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid(op, "input", "%v", err)
	}
	if _, err := dec.Token(); err == nil {
		return invalid(op, "input", "trailing data after the JSON object")
	}
	return nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func ord(n int) string { return fmt.Sprintf("%03d", n) }
