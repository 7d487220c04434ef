package viewer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// Versions of live regions. Every page and fragment says which state of
// the project it shows: full pages in the body's data-version, htmx
// fragments in the X-Kaizen-Version header. GET handlers read it before
// their data and actions right after their change, so a fragment shows at
// least the state it names. The live-update script compares it with the
// versions the event stream announces, and refreshes a region only when
// it may be behind: never right after an action answered with the
// region's fresh fragment (which would throw away the action's result).

// versionHeader carries a fragment's version.
const versionHeader = "X-Kaizen-Version"

// versionKey is the request context key of the version read before a
// GET handler ran (for base, which puts it in the page).
type versionKey struct{}

// signature is a project's change signature as the browser sees it: a
// short hash of kaizen.Engine.ProjectSignature, plain ASCII, so the ids
// agents chose never reach a header, an attribute or an event.
func signature(ctx context.Context, e *kaizen.Engine, project string) (string, error) {
	sig, err := e.ProjectSignature(ctx, project)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(sig))
	return hex.EncodeToString(sum[:12]), nil
}

// stamp reads the project's version and sets it as the response's version
// header; "" (and no header) when it cannot be read: the handler's own
// queries report that error.
func (v *Viewer) stamp(ctx context.Context, w http.ResponseWriter, project string) string {
	sig, err := signature(ctx, v.e, project)
	if err != nil {
		return ""
	}
	w.Header().Set(versionHeader, sig)
	return sig
}

// versioned stamps a GET handler's response with the version read before
// the handler reads anything, and hands it to base through the context.
func (v *Viewer) versioned(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := withTimeout(r.Context())
		sig := v.stamp(ctx, w, v.project(r))
		cancel()
		if sig != "" {
			r = r.WithContext(context.WithValue(r.Context(), versionKey{}, sig))
		}
		return h(w, r)
	}
}

// unversioned are the GET routes that show no live region.
var unversioned = map[string]bool{"/events": true, "/skills/bundle": true}
