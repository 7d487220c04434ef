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
	return answerAction(v, w, r, ctx, project, "/patterns/"+id, actErr,
		func() *flash { return &flash{Kind: "ok", Message: "Pattern " + done + ".", Notes: res.Notes} },
		func() (*panelData, error) { return v.panel(ctx, project, id) },
		func(status int, p *panelData) {
			if isHTMX(r) {
				v.render(w, r, status, "pattern", p, "panel")
				return
			}
			b := v.base(r, "Pattern "+p.Detail.ID, "patterns")
			b.Path = "/patterns"
			v.render(w, r, status, "pattern", struct {
				base
				Panel *panelData
			}{b, p}, "layout")
		})
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

// flashable is a detail panel that can carry an action's result.
type flashable interface{ setFlash(*flash) }

func (p *panelData) setFlash(f *flash)     { p.Flash = f }
func (p *heuristicView) setFlash(f *flash) { p.Flash = f }
func (p *skillView) setFlash(f *flash)     { p.Flash = f }

// answerAction answers a detail panel's action the same way for every
// panel: a plain form post that succeeded is redirected back to page
// (303); otherwise the panel is read again after the change (load) and
// rendered with the result (ok; the other live regions are told to
// refresh) or with the engine's refusal, at the refusal's status.
func answerAction[P flashable](v *Viewer, w http.ResponseWriter, r *http.Request, ctx context.Context,
	project, page string, actErr error, ok func() *flash, load func() (P, error), render func(status int, p P)) error {
	if actErr == nil && !isHTMX(r) {
		http.Redirect(w, r, link(page, "project", project), http.StatusSeeOther)
		return nil
	}
	v.stamp(ctx, w, project) // after the change, before the panel's read
	p, err := load()
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
		p.setFlash(&flash{Kind: "error", Message: msg})
	} else {
		p.setFlash(ok())
		w.Header().Set("HX-Trigger", refreshEvent)
	}
	render(status, p)
	return nil
}
