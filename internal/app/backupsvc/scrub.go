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
