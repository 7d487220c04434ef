package learningsvc

import (
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
)

// The redaction boundary of the learning service: every request that
// carries untrusted text is scrubbed (app.Scrub) as the service receives
// it, before validation builds a record from it. Identifiers (project,
// bead_id, event_id) are not scrubbed: they are validated as ids and a
// changed id would break idempotency.

func scrubOutcome(in OutcomeInput) OutcomeInput {
	app.ScrubFields(&in.Strategy, &in.FailureDetails, &in.Description, &in.Task)
	in.FilesTouched = app.ScrubAll(in.FilesTouched)
	in.Patterns = app.ScrubAll(in.Patterns)
	in.Criteria = app.ScrubAll(in.Criteria)
	in.Tags = app.ScrubAll(in.Tags)
	return in
}

func scrubTaskEvent(in TaskEventInput) TaskEventInput {
	app.ScrubFields(&in.Text, &in.Message, &in.Plan, &in.Signal, &in.EndReason, &in.ToolName)
	in.Files = app.ScrubAll(in.Files)
	return in
}

func scrubError(in ErrorInput) ErrorInput {
	app.ScrubFields(&in.Message, &in.StackTrace, &in.ToolName, &in.Context)
	return in
}

// scrubErrorEntries scrubs stored error entries on their way into an
// error context (a retry prompt): entries written before the boundary
// existed may still hold secrets.
func scrubErrorEntries(es []learning.ErrorEntry) {
	for i := range es {
		e := &es[i]
		app.ScrubFields(&e.Message, &e.StackTrace, &e.ToolName, &e.Context)
	}
}

func scrubPlan(in PlanInput) PlanInput {
	in.Task = app.Scrub(in.Task)
	in.Tags = app.ScrubAll(in.Tags)
	return in
}

func scrubObserve(in ObserveInput) ObserveInput {
	in.Pattern = app.Scrub(in.Pattern)
	in.Tags = app.ScrubAll(in.Tags)
	return in
}

func scrubManual(in ManualInput) ManualInput {
	app.ScrubFields(&in.Pattern, &in.Reason)
	return in
}
