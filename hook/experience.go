package hook

import (
	"context"
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// ExperienceBackend is what the experience system's hooks need of kaizen:
// capturing a session's turns and recalling what past tasks teach. Both
// *kaizen.Engine and *client.Client implement it.
type ExperienceBackend interface {
	Capture(ctx context.Context, in kaizen.CaptureInput) (*kaizen.CaptureResult, error)
	Recall(ctx context.Context, in kaizen.RecallInput) (*kaizen.RecallResult, error)
}

// Limits of what the experience hooks send.
const (
	// maxCapturedText bounds a captured prompt or reply (the engine's own
	// cut is 32 KB too).
	maxCapturedText = 32 << 10
	// maxRecallQuery bounds the prompt text used as the recall query: the
	// beginning of a prompt says what it is about.
	maxRecallQuery = 4 << 10
	// maxToolExcerpt bounds the excerpt of a failing tool's error that is
	// captured as a tool turn.
	maxToolExcerpt = 1 << 10
)

// capture captures the event's turn as a turn of the session's task:
//
//   - prompt: the prompt, as a user turn;
//   - stop: the agent's last reply, when the client sends it, as an
//     assistant turn;
//   - tool failure: a short excerpt of the error, as a tool turn, so that
//     live signals see repeated failures.
//
// With an event id the turn carries it as its turn id, so that capturing
// the same event twice stores it once.
func (h *Handler) capture(ctx context.Context, ev Event, id, stamp string) error {
	in := kaizen.CaptureInput{Project: h.Project, TaskID: ev.TaskID(), Source: string(ev.Client)}
	turn := kaizen.TurnInput{TurnID: id, Time: stamp}
	switch ev.Kind {
	case KindPrompt:
		turn.Role, turn.Content = string(experience.RoleUser), cleanText(ev.Prompt, maxCapturedText)
	case KindStop:
		turn.Role, turn.Content = string(experience.RoleAssistant), cleanText(ev.LastMessage, maxCapturedText)
	case KindToolFailure:
		msg := cleanText(ev.Error, maxToolExcerpt)
		if msg == "" {
			msg = "(no error message)"
		}
		name := oneLine(ev.ToolName, maxIDBytes)
		if name == "" {
			name = "tool"
		}
		turn.Role, turn.Content = string(experience.RoleTool), "Tool "+name+" failed: "+msg
	default:
		return nil
	}
	if turn.Content == "" {
		return nil // nothing said (an empty prompt, a stop without the reply)
	}
	in.Turns = []kaizen.TurnInput{turn}
	if _, err := h.Experience.Capture(ctx, in); err != nil {
		return fmt.Errorf("capture the %s turn: %w", turn.Role, err)
	}
	return nil
}

// recall recalls the experience of past tasks about a prompt, with the
// session's task as the current task (its recent turns give the live
// signals), and renders it for injection ("" when nothing was recalled).
func (h *Handler) recall(ctx context.Context, ev Event) (string, error) {
	query := cleanText(ev.Prompt, maxRecallQuery)
	if strings.TrimSpace(query) == "" {
		return "", nil
	}
	res, err := h.Experience.Recall(ctx, kaizen.RecallInput{Project: h.Project, TaskID: ev.TaskID(), Query: query})
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	return RecallContext(res), nil
}

// RecallContext is what a prompt gets from a recall: the rendered
// experience (framed by the engine as evidence, not instructions) and,
// when heuristics were shown, how to report whether they helped. Empty
// when nothing was recalled.
func RecallContext(r *kaizen.RecallResult) string {
	if r == nil || strings.TrimSpace(r.Text) == "" {
		return ""
	}
	text := strings.TrimRight(r.Text, "\n") + "\n"
	if r.ID == "" || len(r.Heuristics) == 0 {
		return text
	}
	ids := make([]string, len(r.Heuristics))
	for i, hr := range r.Heuristics {
		ids[i] = "`" + hr.ID + "`"
	}
	return text + fmt.Sprintf("\n_kaizen recall `%s` showed the heuristics %s, in order. After acting on one, "+
		"report whether it helped with the heuristic_feedback tool (heuristic_id, recall_id `%s`, verdict helpful or misleading)._\n",
		r.ID, strings.Join(ids, ", "), r.ID)
}
