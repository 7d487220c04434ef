package viewer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

func (b *testBundle) state(content string) learning.MaturityState {
	b.t.Helper()
	d, err := b.engine.GetPattern(context.Background(), "proj", content)
	if err != nil {
		b.t.Fatal(err)
	}
	return d.Maturity.State
}

func TestPatternActions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(kaizen.OutcomeInput{TaskID: "bd-1", Patterns: []string{"Handle shared types first"}})
	id := b.patternID("proj", "Handle shared types first")
	base := "/patterns/" + id

	// Promote through htmx: the panel comes back showing proven, with a
	// refresh trigger for the rest of the page.
	r := b.must(b.htmx("POST", base+"/promote?project=proj", "pattern-panel", url.Values{}), http.StatusOK)
	contains(t, "promote", r.body, `id="pattern-panel"`, "Pattern promoted.", `state-proven">proven (manual)`)
	if r.header.Get("HX-Trigger") != "kaizen-refresh" {
		t.Errorf("promote: HX-Trigger %q", r.header.Get("HX-Trigger"))
	}
	if s := b.state("Handle shared types first"); s != learning.Proven {
		t.Fatalf("after promote: %s", s)
	}
	// The list shows it too.
	contains(t, "list after promote", b.get("/patterns?state=proven").body, "Handle shared types first")

	// Deprecate needs a reason: the engine's refusal is shown in the panel.
	r = b.htmx("POST", base+"/deprecate?project=proj", "pattern-panel", url.Values{"reason": {"  "}})
	if r.status != http.StatusBadRequest {
		t.Fatalf("deprecate without reason: %d", r.status)
	}
	contains(t, "deprecate without reason", r.body, `id="pattern-panel"`, "flash-error", "reason", "is required")
	if s := b.state("Handle shared types first"); s != learning.Proven {
		t.Fatalf("a refused deprecation changed the state: %s", s)
	}
	r = b.must(b.htmx("POST", base+"/deprecate?project=proj", "pattern-panel", url.Values{"reason": {"breaks the build"}}), http.StatusOK)
	contains(t, "deprecate", r.body, "Pattern deprecated.", `state-deprecated">deprecated (manual)`, "breaks the build")
	if s := b.state("Handle shared types first"); s != learning.Deprecated {
		t.Fatalf("after deprecate: %s", s)
	}

	// Promoting a deprecated pattern is a conflict: reset first.
	r = b.htmx("POST", base+"/promote?project=proj", "pattern-panel", nil)
	if r.status != http.StatusConflict {
		t.Fatalf("promote deprecated: %d", r.status)
	}
	contains(t, "promote deprecated", r.body, "flash-error", "reset")

	// Reset clears the manual state.
	r = b.must(b.htmx("POST", base+"/reset?project=proj", "pattern-panel", nil), http.StatusOK)
	contains(t, "reset", r.body, "Pattern reset.", `state-candidate">candidate</span>`)
	if s := b.state("Handle shared types first"); s != learning.Candidate {
		t.Fatalf("after reset: %s", s)
	}

	// A plain form post (no JavaScript) is redirected back to the pattern.
	r = b.do(req{method: "POST", path: base + "/promote?project=proj", form: url.Values{},
		header: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": b.ts.URL}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != base+"?project=proj" {
		t.Fatalf("form post: %d %q", r.status, r.header.Get("Location"))
	}
	if s := b.state("Handle shared types first"); s != learning.Proven {
		t.Fatalf("after form promote: %s", s)
	}

	// Unknown patterns, anti-patterns, other projects.
	if r := b.htmx("POST", "/patterns/pattern-nope/promote", "pattern-panel", nil); r.status != http.StatusNotFound {
		t.Errorf("unknown pattern: %d", r.status)
	}
	if r := b.htmx("POST", base+"/promote?project=other", "pattern-panel", nil); r.status != http.StatusNotFound {
		t.Errorf("pattern of another project: %d", r.status)
	}
	// A JSON body is not a form.
	r = b.do(req{method: "POST", path: base + "/reset", header: map[string]string{"Content-Type": "application/json"}})
	if r.status != http.StatusUnsupportedMediaType {
		t.Errorf("JSON body: %d", r.status)
	}
}

func TestAntiPatternHasNoActions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 3 {
		b.record(kaizen.OutcomeInput{TaskID: fmt.Sprintf("bd-%d", i), Success: ptr(false), Patterns: []string{"Split by file type"}})
	}
	anti := "anti-" + b.patternID("proj", "Split by file type")
	r := b.must(b.get("/patterns/"+anti), http.StatusOK)
	contains(t, "anti-pattern page", r.body, "act on its source pattern", "AVOID: Split by file type")
	if strings.Contains(r.body, "Promote to proven") {
		t.Error("an anti-pattern offers actions")
	}
	if r := b.htmx("POST", "/patterns/"+anti+"/promote", "pattern-panel", nil); r.status != http.StatusBadRequest {
		t.Errorf("promote an anti-pattern: %d", r.status)
	}
}

func TestResolveError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e, err := b.engine.RecordError(context.Background(), kaizen.ErrorInput{TaskID: "bd-1", Message: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	r := b.must(b.htmx("POST", "/errors/"+e.ID+"/resolve?project=proj", e.ID, nil), http.StatusOK)
	if !strings.HasPrefix(r.body, `<tr id="`+e.ID+`" class="error-row resolved">`) {
		t.Errorf("resolve answered:\n%s", r.body)
	}
	contains(t, "resolve", r.body, "resolved")
	list, err := b.engine.ListErrors(context.Background(), kaizen.ErrorQuery{Project: "proj", UnresolvedOnly: true})
	if err != nil || list.Total != 0 {
		t.Fatalf("open errors after resolve: %v %v", list, err)
	}
	contains(t, "open errors", b.get("/errors").body, "No errors match.")
	contains(t, "all errors", b.get("/errors?status=all").body, "boom", "resolved")
	if r := b.htmx("POST", "/errors/err-nope/resolve", "", nil); r.status != http.StatusNotFound {
		t.Errorf("unknown error: %d", r.status)
	}
	// Without htmx: back to the list.
	e2, _ := b.engine.RecordError(context.Background(), kaizen.ErrorInput{TaskID: "bd-1", Message: "again"})
	r = b.do(req{method: "POST", path: "/errors/" + e2.ID + "/resolve", form: url.Values{}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/errors?project=proj" {
		t.Errorf("form resolve: %d %q", r.status, r.header.Get("Location"))
	}
}

// TestActionsRejectCrossOrigin: every state-changing route refuses a
// cross-origin browser request (the server's CrossOriginProtection) and
// nothing changes.
func TestActionsRejectCrossOrigin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(kaizen.OutcomeInput{TaskID: "bd-1", Patterns: []string{"Split by feature"}})
	id := b.patternID("proj", "Split by feature")
	e, err := b.engine.RecordError(context.Background(), kaizen.ErrorInput{TaskID: "bd-1", Message: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/patterns/" + id + "/promote", "/patterns/" + id + "/deprecate", "/patterns/" + id + "/reset",
		"/errors/" + e.ID + "/resolve", "/logout", "/login"}
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "cross-site", "HX-Request": "true"},
	} {
		for _, p := range paths {
			r := b.do(req{method: "POST", path: p, form: url.Values{"reason": {"x"}}, header: hdr})
			if r.status != http.StatusForbidden {
				t.Errorf("POST %s with %v: %d, want 403", p, hdr, r.status)
			}
		}
	}
	if s := b.state("Split by feature"); s != learning.Candidate {
		t.Errorf("state changed by cross-origin requests: %s", s)
	}
	list, _ := b.engine.ListErrors(context.Background(), kaizen.ErrorQuery{Project: "proj", UnresolvedOnly: true})
	if list.Total != 1 {
		t.Error("a cross-origin request resolved the error")
	}
	// Same origin passes.
	b.must(b.do(req{method: "POST", path: "/patterns/" + id + "/promote", form: url.Values{},
		header: map[string]string{"Origin": b.ts.URL}}), http.StatusSeeOther)
}
