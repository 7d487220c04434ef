package viewer

import (
	"context"
	"mime"
	"net/http"
	"strings"

	"github.com/kaizenhq/kaizen"
)

// Actions change state: promote, deprecate and reset a pattern, resolve an
// error. They are POSTs, so the server's cross-origin protection refuses
// them from other origins before they get here, and the session cookie is
// SameSite=Strict. htmx gets the updated fragment (and an HX-Trigger that
// refreshes the other live parts of the page); a plain form post is
// redirected back to the page (303).

// refreshEvent is the client event that refreshes the page's live parts.
const refreshEvent = "kaizen-refresh"

// form parses an action's form body (urlencoded, or none).
func form(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/x-www-form-urlencoded" {
			return viewError{status: http.StatusUnsupportedMediaType,
				message: "send the form as application/x-www-form-urlencoded"}
		}
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: %v", err)
	}
	return nil
}

type manualAction func(context.Context, kaizen.ManualInput) (*kaizen.ManualResult, error)

func (v *Viewer) promote(w http.ResponseWriter, r *http.Request) error {
	return v.manual(w, r, "promoted", v.e.PromotePattern)
}

func (v *Viewer) deprecate(w http.ResponseWriter, r *http.Request) error {
	return v.manual(w, r, "deprecated", v.e.DeprecatePattern)
}

func (v *Viewer) reset(w http.ResponseWriter, r *http.Request) error {
	return v.manual(w, r, "reset", v.e.ResetPattern)
}

// manual runs a manual pattern action and answers with the pattern's
// panel, carrying the result or the engine's refusal.
func (v *Viewer) manual(w http.ResponseWriter, r *http.Request, done string, act manualAction) error {
	if err := form(r); err != nil {
		return err
	}
	project := v.project(r)
	id := r.PathValue("id")
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	res, actErr := act(ctx, kaizen.ManualInput{Project: project, Pattern: id, Reason: strings.TrimSpace(r.PostForm.Get("reason"))})
	if actErr == nil && !isHTMX(r) {
		http.Redirect(w, r, link("/patterns/"+id, "project", project), http.StatusSeeOther)
		return nil
	}
	v.stamp(ctx, w, project) // after the change, before the panel's read
	p, err := v.panel(ctx, project, id)
	if err != nil {
		if actErr != nil {
			return actErr
		}
		return err
	}
	status := http.StatusOK
	if actErr != nil {
		var msg string
		status, msg = v.statusOf(w, r, actErr)
		p.Flash = &flash{Kind: "error", Message: msg}
	} else {
		p.Flash = &flash{Kind: "ok", Message: "Pattern " + done + ".", Notes: res.Notes}
		w.Header().Set("HX-Trigger", refreshEvent)
	}
	if !isHTMX(r) {
		b := v.base(r, "Pattern "+p.Detail.ID, "patterns")
		b.Path = "/patterns"
		v.render(w, r, status, "pattern", struct {
			base
			Panel *panelData
		}{b, p}, "layout")
		return nil
	}
	v.render(w, r, status, "pattern", p, "panel")
	return nil
}

// resolve marks an error resolved and answers with its updated row.
func (v *Viewer) resolve(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	project := v.project(r)
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	entry, err := v.e.ResolveError(ctx, project, r.PathValue("id"))
	if err != nil {
		return err
	}
	if !isHTMX(r) {
		http.Redirect(w, r, link("/errors", "project", project), http.StatusSeeOther)
		return nil
	}
	w.Header().Set("HX-Trigger", refreshEvent)
	v.render(w, r, http.StatusOK, "errors", errorRow{*entry, project}, "error-row")
	return nil
}
