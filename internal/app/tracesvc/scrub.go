package tracesvc

import (
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/trace"
)

// scrub redacts secrets from one untrusted text before it is stored, with
// the engine boundary's one redaction pass (app.Scrub).
func scrub(s string) string { return app.Scrub(s) }

func scrubMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = scrub(v)
	}
	return out
}

func scrubList(l []string) []string { return app.ScrubAll(l) }

// scrubEvent redacts every text of a session event.
func scrubEvent(ev trace.Event) trace.Event {
	ev.Command = scrub(ev.Command)
	ev.Output = scrub(ev.Output)
	ev.Context = scrubMap(ev.Context)
	ev.Artifacts = scrubList(ev.Artifacts)
	ev.FixApplied = scrub(ev.FixApplied)
	ev.Path = scrub(ev.Path)
	ev.Text = scrub(ev.Text)
	return ev
}

// scrubTrace redacts every text of a trace recorded whole.
func scrubTrace(t trace.ExecutionTrace) trace.ExecutionTrace {
	atts := make([]trace.Attempt, len(t.Attempts))
	for i, a := range t.Attempts {
		a.Context = scrubMap(a.Context)
		a.ActivatedArtifacts = scrubList(a.ActivatedArtifacts)
		a.Result = scrub(a.Result)
		a.Error = scrub(a.Error)
		a.FixApplied = scrub(a.FixApplied)
		if len(a.FixActions) > 0 {
			fa := make([]trace.FixAction, len(a.FixActions))
			for j, f := range a.FixActions {
				f.Detail = scrub(f.Detail)
				fa[j] = f
			}
			a.FixActions = fa
		}
		atts[i] = a
	}
	t.Attempts = atts
	return t
}
