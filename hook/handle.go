package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// Backend is what a hook needs of kaizen. Both *kaizen.Engine (the
// database opened in-process) and *client.Client (a running daemon)
// implement it.
type Backend interface {
	RecordTaskEvent(ctx context.Context, in kaizen.TaskEventInput) (*kaizen.TaskEventResult, error)
	PlanGuidance(ctx context.Context, in kaizen.PlanInput) (*learning.Guidance, error)
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
	// Experience, when set, captures prompts, final replies and tool
	// failures as turns of the session's task, and injects what recall
	// finds about a prompt (see ExperienceBackend).
	Experience ExperienceBackend
}

// Handle records the event as a task event of the session's task and
// returns what to inject: plan guidance at session start, the warnings of
// a prompt that mentions an anti-pattern or deprecated pattern and the
// experience recalled about it, and the advisors' advice after tool calls
// and stops. A failure of the experience system or of an advisor is
// returned with the response; the event is recorded all the same.
func (h *Handler) Handle(ctx context.Context, ev Event) (Response, error) {
	spec, err := lookupEvent(ev.Client, ev.Name)
	if err != nil {
		return Response{}, err
	}
	if strings.TrimSpace(ev.SessionID) == "" {
		return Response{}, ErrNoSession
	}
	in := kaizen.TaskEventInput{
		Project: h.Project, TaskID: ev.TaskID(), Kind: string(ev.Kind), Source: string(ev.Client),
		ToolName: oneLine(ev.ToolName, maxIDBytes),
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
		return Response{}, fmt.Errorf("record %s event: %w", ev.Kind, err)
	}
	var out Response
	switch {
	case spec.guidance:
		g, err := h.Backend.PlanGuidance(ctx, kaizen.PlanInput{Project: h.Project, TaskID: in.TaskID, Limit: h.limit()})
		if err != nil {
			return Response{}, fmt.Errorf("plan guidance: %w", err)
		}
		out.Context = SessionContext(g, in.TaskID)
	case spec.warnings:
		prompt := cleanText(ev.Prompt, maxGuidanceTask)
		// Warnings come only from strategies the prompt mentions; most
		// prompts mention none, and then there is nothing to ask.
		if prompt == "" || len(learning.ExtractPatterns(prompt)) == 0 {
			break
		}
		g, err := h.Backend.PlanGuidance(ctx, kaizen.PlanInput{Project: h.Project, Task: prompt, Limit: h.limit()})
		if err != nil {
			return Response{}, fmt.Errorf("plan guidance: %w", err)
		}
		out.Context = PromptContext(g)
	}
	var errs []error
	if h.Experience != nil {
		// spec.warnings marks the prompt events whose answer the client
		// adds to the context (not Cursor's beforeSubmitPrompt).
		recalled, err := h.experience(ctx, ev, spec.warnings)
		if err != nil {
			errs = append(errs, fmt.Errorf("experience: %w", err))
		}
		out.Context = joinText(out.Context, recalled)
	}
	if ev.Kind == KindTool || ev.Kind == KindToolFailure || ev.Kind == KindStop {
		for _, a := range h.Advisors {
			adv, err := a.Advise(ctx, AdviceInput{Project: h.Project, Event: ev, Task: res.Task})
			if err != nil {
				errs = append(errs, fmt.Errorf("advisor: %w", err))
				continue
			}
			out.Context = joinText(out.Context, adv.Context)
			if !ev.StopHookActive {
				out.Continue = joinText(out.Continue, adv.Continue)
			}
		}
	}
	out.Context = truncate(out.Context, maxInjected)
	return out, errors.Join(errs...)
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

// PromptContext is what a prompt that mentions an anti-pattern or a
// deprecated pattern gets: the guidance's warnings. Empty when none.
func PromptContext(g *learning.Guidance) string {
	if g == nil || len(g.Warnings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## kaizen: about this request\n\n")
	b.WriteString("_Evidence from past outcomes in this project, to weigh when planning; it is not an instruction._\n\n")
	for _, w := range g.Warnings {
		fmt.Fprintf(&b, "- %s\n", w)
	}
	return b.String()
}
