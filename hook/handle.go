package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// Backend is what recording a hook event needs of kaizen:
// *kaizen.Engine implements it (in the hook process when no daemon runs,
// else in the daemon, which ingests the spool).
type Backend interface {
	RecordTaskEvent(ctx context.Context, in kaizen.TaskEventInput) (*kaizen.TaskEventResult, error)
	PlanGuidance(ctx context.Context, in kaizen.PlanInput) (*learning.Guidance, error)
}

// Closer is what closing sessions needs of kaizen (*kaizen.Engine): the
// task of a session that ended gets its inferred outcome, and a new
// session closes the sessions idle for longer than the idle timeout.
type Closer interface {
	CloseTask(ctx context.Context, in kaizen.CloseTaskInput) (*kaizen.CloseTaskResult, error)
	CloseIdleTasks(ctx context.Context, in kaizen.CloseIdleInput) (*kaizen.CloseIdleResult, error)
}

// Advice is what an advisor wants the agent to see after an event.
type Advice struct {
	// Context is added to the agent's context (additionalContext).
	Context string
	// Continue, at a stop, asks the agent to keep going with this message
	// (Claude Code and Codex "decision: block", Cursor "followup_message").
	// Advisors must leave it empty when Event.StopHookActive is set.
	Continue string
}

// AdviceInput is an event after kaizen recorded it.
type AdviceInput struct {
	Project string
	Event   Event
	// EventID and At identify the event's delivery (its spool record), so
	// that a stateful advisor applies it once.
	EventID string
	At      time.Time
	// Task is the tracked task after the event (duration, tool calls,
	// failures, retries so far).
	Task kaizen.TaskInfo
}

// Advisor contributes advice after the task events of tool calls, tool
// failures and stops. This is the seam for the exploration tracker
// (issue 5): an advisor records the tool call into the session's tracker
// and returns a nudge as Context, or at a stop asks for the missing
// summary with Continue. Advisors run in order; their contexts are joined.
type Advisor interface {
	Advise(ctx context.Context, in AdviceInput) (Advice, error)
}

// Response is what a hook answers the client, before rendering it in the
// client's format (see Render).
type Response struct {
	Context  string
	Continue string
}

// Handler turns hook events into kaizen actions.
type Handler struct {
	Backend Backend
	// Project is the project to record into.
	Project string
	// GuidanceLimit bounds the patterns and anti-patterns injected at
	// session start (default 5).
	GuidanceLimit int
	Advisors      []Advisor
	// PreTool are consulted before a tool runs (PreToolUse): the seam of
	// a pre-execution check; their context is injected, nothing is
	// recorded.
	PreTool []Advisor
	// Experience, when set, captures prompts, final replies and tool
	// failures as turns of the session's task, and injects what recall
	// finds about a prompt (see ExperienceBackend).
	Experience ExperienceBackend
	// Closer, when set, closes the session's task when the session ends,
	// and (with IdleTimeout) the idle sessions of the project when a new
	// session starts.
	Closer      Closer
	IdleTimeout time.Duration
	// Traces, when set, feeds shell commands, edits, prompts and session
	// ends to failure learning's trace assembly (see TraceEvents).
	Traces TraceBackend
	// Team, when set, delivers the team messages of a session bound to a
	// team member (Event.Team, Event.Member) in the answers to tool calls,
	// prompts and session starts (see teamContext).
	Team TeamBackend
}

// Recorded is what recording an event did: the durable part of a hook
// call, done once per event (ingesting the spool).
type Recorded struct {
	// Task is the tracked task after the event.
	Task kaizen.TaskInfo
	// Duplicate: the event had been recorded already (same event id).
	Duplicate bool
	// Advice is what the advisors said after the event (a stateful
	// advisor such as the exploration tracker speaks when it records).
	Advice Advice
	// Closed is the session's closing when the event ended it.
	Closed *kaizen.CloseTaskResult
	// Problems are failures of the experience system, of an advisor or of
	// the idle sweep: the event is recorded all the same.
	Problems []error
}

// Record records an event (ID and At from its spool record; empty id and
// zero time for a direct call): the task event, the turn the experience
// system captures, the advisors' state, and the closing of a session that
// ended. The task event is applied once per event id; an error means it
// was not recorded. Failures of the other steps are returned in
// Recorded.Problems.
func (h *Handler) Record(ctx context.Context, ev Event, id string, at time.Time) (*Recorded, error) {
	if _, err := lookupEvent(ev.Client, ev.Name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(ev.SessionID) == "" {
		return nil, ErrNoSession
	}
	if !ev.Kind.Recorded() {
		return &Recorded{}, nil
	}
	var stamp string
	if !at.IsZero() {
		stamp = at.UTC().Format(time.RFC3339Nano)
	}
	in := kaizen.TaskEventInput{
		Project: h.Project, TaskID: ev.TaskID(), Kind: string(ev.Kind), Source: string(ev.Client),
		ToolName: oneLine(ev.ToolName, maxIDBytes), EventID: id, Timestamp: stamp,
		Plan: ev.Plan, Files: ev.Files, Signal: ev.Signal, EndReason: ev.EndReason,
	}
	switch ev.Kind {
	case KindPrompt:
		in.Text = cleanText(ev.Prompt, maxStoredText)
	case KindToolFailure:
		in.Message = cleanText(ev.Error, maxStoredText)
		if in.Message == "" {
			in.Message = "tool " + in.ToolName + " failed"
		}
	}
	res, err := h.Backend.RecordTaskEvent(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("record %s event: %w", ev.Kind, err)
	}
	r := &Recorded{Task: res.Task, Duplicate: res.Duplicate}
	if h.Experience != nil {
		if err := h.capture(ctx, ev, id, stamp); err != nil {
			r.Problems = append(r.Problems, fmt.Errorf("experience: %w", err))
		}
	}
	if ev.Kind == KindTool || ev.Kind == KindToolFailure || ev.Kind == KindStop {
		for _, a := range h.Advisors {
			adv, err := a.Advise(ctx, AdviceInput{Project: h.Project, Event: ev, Task: res.Task, EventID: id, At: at})
			if err != nil {
				r.Problems = append(r.Problems, fmt.Errorf("advisor: %w", err))
				continue
			}
			r.Advice.Context = joinText(r.Advice.Context, adv.Context)
			if !ev.StopHookActive {
				r.Advice.Continue = joinText(r.Advice.Continue, adv.Continue)
			}
		}
	}
	if h.Traces != nil {
		if err := h.recordTrace(ctx, ev, id, at); err != nil {
			r.Problems = append(r.Problems, fmt.Errorf("traces: %w", err))
		}
	}
	if h.Closer != nil {
		switch {
		case ev.Kind == KindEnd:
			closed, err := h.Closer.CloseTask(ctx, kaizen.CloseTaskInput{Project: h.Project, TaskID: in.TaskID, Reason: "session_end"})
			if err != nil {
				return r, fmt.Errorf("close the session's task: %w", err)
			}
			r.Closed = closed
		case ev.Kind == KindStart && h.IdleTimeout > 0 && !res.Duplicate:
			_, err := h.Closer.CloseIdleTasks(ctx, kaizen.CloseIdleInput{Project: h.Project, IdleMs: h.IdleTimeout.Milliseconds(), At: stamp})
			if err != nil {
				r.Problems = append(r.Problems, fmt.Errorf("close idle sessions: %w", err))
			}
		}
	}
	return r, nil
}

// Answer computes what to inject after an event was recorded (rec nil
// when another process recorded it): plan guidance at session start, the
// warnings of a prompt that mentions an anti-pattern or deprecated pattern
// and the experience recalled about it, the advisors' advice after tool
// calls and stops, and the pre-tool advisors' context before a tool runs.
// Answers are best effort: a failure is returned with what could be
// answered.
func (h *Handler) Answer(ctx context.Context, ev Event, rec *Recorded) (Response, error) {
	spec, err := lookupEvent(ev.Client, ev.Name)
	if err != nil {
		return Response{}, err
	}
	var out Response
	var errs []error
	taskID := ev.TaskID()
	switch {
	case spec.guidance:
		g, err := h.Backend.PlanGuidance(ctx, kaizen.PlanInput{Project: h.Project, TaskID: taskID, Limit: h.limit()})
		if err != nil {
			return Response{}, fmt.Errorf("plan guidance: %w", err)
		}
		out.Context = SessionContext(g, taskID)
	case spec.warnings:
		prompt := cleanText(ev.Prompt, maxGuidanceTask)
		// A session's first prompt says what the task is: it gets the
		// strategies ranked for a task like it. Later prompts get warnings
		// only, and those come only from strategies the prompt mentions;
		// most prompts mention none, and then there is nothing to ask.
		first := ev.Kind == KindPrompt && rec != nil && rec.Task.Prompts == 1
		if prompt == "" || (!first && len(learning.ExtractPatterns(prompt)) == 0) {
			break
		}
		limit := h.limit()
		if first {
			// the ranking's head is a draw: ask for every strategy so
			// that those with evidence are among them
			limit = max(limit, 20)
		}
		g, err := h.Backend.PlanGuidance(ctx, kaizen.PlanInput{Project: h.Project, Task: prompt, Limit: limit})
		if err != nil {
			return Response{}, fmt.Errorf("plan guidance: %w", err)
		}
		out.Context = PromptContext(g, first)
	}
	if h.Experience != nil && spec.warnings && ev.Kind == KindPrompt {
		recalled, err := h.recall(ctx, ev)
		if err != nil {
			errs = append(errs, fmt.Errorf("experience: %w", err))
		}
		out.Context = joinText(out.Context, recalled)
	}
	if rec != nil {
		out.Context = joinText(out.Context, rec.Advice.Context)
		out.Continue = rec.Advice.Continue
	}
	if ev.Kind == KindPreTool {
		for _, a := range h.PreTool {
			adv, err := a.Advise(ctx, AdviceInput{Project: h.Project, Event: ev})
			if err != nil {
				errs = append(errs, fmt.Errorf("pre-tool advisor: %w", err))
				continue
			}
			out.Context = joinText(out.Context, adv.Context)
		}
	}
	// Teammates' messages come first: a fix_required matters more than
	// advice, and the total is cut at the end.
	msgs, err := h.teamContext(ctx, ev)
	if err != nil {
		errs = append(errs, err)
	}
	out.Context = truncate(joinText(msgs, out.Context), maxInjected)
	return out, errors.Join(errs...)
}

// Handle records the event and answers it in one call (Record, then
// Answer), for callers without a spool. A failure of the experience system
// or of an advisor is returned with the response; the event is recorded
// all the same.
func (h *Handler) Handle(ctx context.Context, ev Event) (Response, error) {
	rec, err := h.Record(ctx, ev, "", time.Time{})
	if err != nil {
		return Response{}, err
	}
	out, err := h.Answer(ctx, ev, rec)
	return out, errors.Join(append(rec.Problems, err)...)
}

func (h *Handler) limit() int {
	if h.GuidanceLimit > 0 {
		return h.GuidanceLimit
	}
	return 5
}

func joinText(a, b string) string {
	switch {
	case strings.TrimSpace(b) == "":
		return a
	case a == "":
		return b
	}
	return a + "\n\n" + b
}

// Learned reports whether guidance has anything learned to show.
func Learned(g *learning.Guidance) bool {
	return g != nil && (len(g.Patterns) > 0 || len(g.AntiPatterns) > 0 || len(g.Excluded) > 0 ||
		g.ErrorContext != "" || len(g.Sections) > 0)
}

// SessionContext is the guidance injected at session start: the proven
// patterns, anti-patterns and the session's open errors, framed (by the
// guidance itself) as evidence rather than instructions. Criterion weights
// are left out to keep it short. It is empty when nothing is learned yet.
func SessionContext(g *learning.Guidance, taskID string) string {
	if !Learned(g) {
		return ""
	}
	short := *g
	short.Criteria = nil
	md := strings.TrimRight(short.Markdown(), "\n")
	return truncate(md, maxInjected-512) + "\n\n" +
		fmt.Sprintf("_kaizen tracks this session as task `%s`; when it ends, its outcome can be recorded with "+
			"`kaizen outcome record --task %s --success` (or `--success=false`)._\n", taskID, taskID)
}

// PromptContext is what a prompt gets: the guidance's warnings when it
// mentions an anti-pattern or a deprecated pattern and, with withRanking
// (a session's first prompt, which says what the task is), the strategies
// ranked for a task like it. Empty when there is neither.
func PromptContext(g *learning.Guidance, withRanking bool) string {
	if g == nil {
		return ""
	}
	ranking := ""
	if withRanking {
		ranking = g.RecommendationMarkdown()
	}
	if len(g.Warnings) == 0 && ranking == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("## kaizen: about this request\n\n")
	b.WriteString("_Evidence from past outcomes in this project, to weigh when planning; it is not an instruction._\n")
	if len(g.Warnings) > 0 {
		b.WriteString("\n")
	}
	for _, w := range g.Warnings {
		fmt.Fprintf(&b, "- %s\n", w)
	}
	b.WriteString(ranking)
	return b.String()
}
