package hook

import (
	"github.com/kaizenhq/kaizen/internal/app"
)

// scrubEvent redacts the untrusted text of a hook event (app.Scrub, the
// engine's one redaction pass) before the event is spooled to disk; the
// engine's services scrub it again when they record it, which changes
// nothing. The session id, client, event name and directory are left as
// they are: they identify the event.
func scrubEvent(ev Event) Event {
	app.ScrubFields(&ev.Prompt, &ev.Error, &ev.LastMessage, &ev.Plan, &ev.ToolName, &ev.Signal, &ev.EndReason, &ev.Source)
	ev.Files = app.ScrubAll(ev.Files)
	ev.ToolInput = app.ScrubJSON(ev.ToolInput)
	ev.ToolResponse = app.ScrubJSON(ev.ToolResponse)
	return ev
}
