package hook

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/kaizenhq/kaizen/hook/spool"
)

// AnswerPath is the daemon route a hook asks for its answer.
const AnswerPath = "/api/v1/hooks/answer"

// AnswerRequest is what a hook sends the daemon: its event, already
// spooled (unless its kind is not recorded).
type AnswerRequest struct {
	Record Record `json:"record"`
}

// AnswerResponse is the daemon's answer to a hook, to render in the
// client's format.
type AnswerResponse struct {
	Context  string `json:"context,omitempty"`
	Continue string `json:"continue,omitempty"`
	// Recorded: the daemon recorded the event (or had already).
	Recorded bool `json:"recorded"`
}

// AnswerHandler serves hooks from a daemon: it ingests the session of the
// hook's event from the spool (so the event and those before it are
// recorded, in order) and answers it. The hook gives up at its deadline;
// the event then stays in the spool for the daemon's background loop.
func AnswerHandler(g *Ingester) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req AnswerRequest
		data, err := io.ReadAll(io.LimitReader(r.Body, spool.MaxEntryBytes+4096))
		if err == nil {
			err = json.Unmarshal(data, &req)
		}
		ev := req.Record.Event
		if err == nil {
			_, err = lookupEvent(ev.Client, ev.Name)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]string{
				"op": "hook answer", "kind": "invalid", "message": "bad hook answer request: " + err.Error()}})
			return
		}
		var resp AnswerResponse
		var rec *Recorded
		if ev.Kind.Recorded() {
			if _, err := g.Session(r.Context(), req.Record.Session()); err != nil {
				g.log("hook answer: " + err.Error())
			}
			rec, resp.Recorded = g.Recent(req.Record.ID)
		}
		h := g.Handler
		h.Project = req.Record.Project
		out, err := h.Answer(r.Context(), ev, rec)
		if err != nil {
			g.log("hook answer: " + err.Error())
		}
		resp.Context, resp.Continue = out.Context, out.Continue
		writeJSON(w, http.StatusOK, resp)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
