package backupsvc

import (
	"encoding/json"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// scrubRecord is the import's redaction boundary: every imported record
// (an export written by an older kaizen, or by hand) is untrusted text, so
// each of its strings, and the JSON documents it carries, pass through
// app.Scrub before the record is checked and stored.
func scrubRecord(v any) {
	app.ScrubStruct(v)
	switch r := v.(type) {
	case *store.ExploreSession:
		r.State = app.ScrubJSON(r.State)
	case *exploreSettingsRecord:
		r.Settings = app.ScrubJSON(r.Settings)
	case *store.TeamRecord:
		r.Doc = app.ScrubJSON(r.Doc)
	case *teamTaskRecord:
		r.Task.Metadata, r.Task.Result = app.ScrubJSON(r.Task.Metadata), app.ScrubJSON(r.Task.Result)
	case *teamMessageRecord:
		r.Message.Data = app.ScrubJSON(r.Message.Data)
	case *store.TeamEvent:
		r.Data = app.ScrubJSON(r.Data)
	case *store.TeamRun:
		r.Run = app.ScrubJSON(r.Run)
	case *teamRunEventRecord:
		r.Event.Event, r.Event.Commands = app.ScrubJSON(r.Event.Event), app.ScrubJSON(r.Event.Commands)
	}
}

// scrubExported scrubs an exported record on its way out: records stored
// before the redaction boundary existed may hold secrets. Clean records
// (all of them since) cost one scan and are written as they are.
func scrubExported(rec json.RawMessage) json.RawMessage {
	if app.Scrub(string(rec)) == string(rec) {
		return rec
	}
	return app.ScrubJSON(rec)
}
