package hook

import (
	"context"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

// ExploreBackend is what the exploration advisor needs of kaizen; both
// *kaizen.Engine and *client.Client implement it.
type ExploreBackend interface {
	ExploreEvent(ctx context.Context, in kaizen.ExploreEventInput) (*kaizen.ExploreEventResult, error)
}

// ExploreAdvisor feeds a session's tool calls to its exploration tracker
// (the exploration session has the task's id) and hands the tracker's
// nudges to the agent:
//
//   - after a tool call or a tool failure, the call is one round (hooks do
//     not see the model calls, so a round is a tool call); a nudge, such as
//     a phase change, a budget warning or the forced exit, becomes context;
//   - at a stop, the agent's last reply is a text response. When the
//     tracker does not accept it as the final answer and has something to
//     say (the summary format it has not given yet, or a phase change such
//     as "verify your claims"), the agent is asked to continue with that
//     text; once only, as the client marks a continuation it caused
//     (stop_hook_active) and the handler then asks nothing.
//
// Tracking is opt-in per project (kaizen explore enable): while it is not
// enabled, the advisor says nothing and reports no error.
type ExploreAdvisor struct {
	Backend ExploreBackend
}

// Advise implements Advisor.
func (a ExploreAdvisor) Advise(ctx context.Context, in AdviceInput) (Advice, error) {
	ev := in.Event
	req := kaizen.ExploreEventInput{Project: in.Project, SessionID: ev.TaskID(), EventID: in.EventID}
	if !in.At.IsZero() {
		req.At = in.At.UTC().Format(time.RFC3339Nano)
	}
	switch ev.Kind {
	case KindTool, KindToolFailure:
		req.AutoStart = true
		req.Events = []explore.Event{{Type: explore.EventTick},
			{Type: explore.EventToolCall, ToolCall: toolCallOf(ev)}, {Type: explore.EventEndRound}}
	case KindStop:
		req.Events = []explore.Event{{Type: explore.EventText, Text: cleanText(ev.LastMessage, explore.MaxHookOutput)}}
	default:
		return Advice{}, nil
	}
	res, err := a.Backend.ExploreEvent(ctx, req)
	if err != nil {
		if k := kaizen.KindOf(err); k == kaizen.KindConflict || k == kaizen.KindNotFound {
			// not enabled for the project; or a stop without a session
			return Advice{}, nil
		}
		return Advice{}, err
	}
	if ev.Kind != KindStop {
		if res.Nudge == nil {
			return Advice{}, nil
		}
		return Advice{Context: "## kaizen: exploration\n\n" + strings.TrimSpace(res.Nudge.Text)}, nil
	}
	for _, st := range res.Steps {
		if d := st.Text; d != nil && !d.Final() && d.Nudge != nil {
			return Advice{Continue: strings.TrimSpace(d.Nudge.Text)}, nil
		}
	}
	return Advice{}, nil
}

// toolCallOf describes the event's tool call for the tracker (see
// explore.ToolCallFromHook). A payload the tracker cannot read still counts
// as a call of the tool; a failure carries the client's error message.
func toolCallOf(ev Event) explore.ToolCall {
	name := ev.ToolName
	if strings.TrimSpace(name) == "" {
		name = "tool"
	}
	c, err := explore.ToolCallFromHook(name, ev.ToolInput, ev.ToolResponse)
	if err != nil {
		c = explore.ToolCall{Name: name}
	}
	if ev.Kind == KindToolFailure {
		c.Status, c.Output, c.Files = explore.StatusError, ev.Error, nil
	}
	c.Output = cleanText(c.Output, explore.MaxHookOutput)
	return c
}
