package viewer_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/viewer"
)

// Payloads agents could write. Everything they write is untrusted text.
const (
	scriptPayload = `<script>alert(1)</script>`
	imgPayload    = `"><img src=x onerror=alert(1)>`
	jsURLPayload  = `javascript:alert(1)`
	svgPayload    = `'><svg onload=alert(1)>`
)

// evilProject is a valid project name (no slash) that tries to break out
// of attributes.
const evilProject = `"><img src=x onerror=alert(2)>`

var (
	// rawMarkup matches the payloads' markup if it was not escaped.
	rawMarkup = regexp.MustCompile(`(?i)<script>alert|<img src=x|<svg onload|onerror=alert\(\d\)>`)
	// jsURL matches a javascript: URL in an attribute that loads or
	// navigates.
	jsURL = regexp.MustCompile(`(?i)(href|src|action|hx-get|hx-post|data-events)="\s*javascript:`)
)

func recordPayloads(t *testing.T, b *testBundle, project string) (patternID, errorID string) {
	t.Helper()
	ctx := context.Background()
	all := strings.Join([]string{scriptPayload, imgPayload, jsURLPayload, svgPayload}, " ")
	for i, ok := range []bool{true, false, false, false} {
		b.record(kaizen.OutcomeInput{
			Project:        project,
			TaskID:         imgPayload + string(rune('a'+i)),
			Success:        ptr(ok),
			Strategy:       scriptPayload,
			FilesTouched:   []string{jsURLPayload, svgPayload},
			Patterns:       []string{"Pattern " + all},
			Criteria:       []string{`<script>alert(3)</script>`, `"><img src=x onerror=alert(4)>`},
			FailureDetails: map[bool]string{true: "", false: all}[ok],
		})
	}
	e, err := b.engine.RecordError(ctx, kaizen.ErrorInput{Project: project, TaskID: scriptPayload, Message: all,
		StackTrace: imgPayload, ToolName: svgPayload, Context: jsURLPayload})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.engine.ObservePattern(ctx, kaizen.ObserveInput{Project: project, Pattern: jsURLPayload,
		Success: ptr(true), TaskID: svgPayload, Tags: []string{imgPayload}}); err != nil {
		t.Fatal(err)
	}
	id := b.patternID(project, jsURLPayload)
	if _, err := b.engine.DeprecatePattern(ctx, kaizen.ManualInput{Project: project, Pattern: id, Reason: all}); err != nil {
		t.Fatal(err)
	}
	return b.patternID(project, "Pattern "+all), e.ID
}

// TestXSSPayloadsEscaped records HTML and script payloads through the
// engine API in every field the viewer shows, and checks every page and
// fragment shows them as text.
func TestXSSPayloadsEscaped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, project := range []string{"proj", evilProject} {
		patternID, errorID := recordPayloads(t, b, project)
		jsID := b.patternID(project, jsURLPayload)
		p := url.QueryEscape(project)
		pages := []string{
			"/?project=" + p,
			"/outcomes?project=" + p,
			"/patterns?project=" + p,
			"/patterns?project=" + p + "&q=" + url.QueryEscape(imgPayload),
			"/patterns/" + patternID + "?project=" + p,
			"/patterns/" + jsID + "?project=" + p,
			"/patterns/anti-" + patternID + "?project=" + p,
			"/anti-patterns?project=" + p,
			"/criteria?project=" + p,
			"/criteria?project=" + p + "&criterion=" + url.QueryEscape(`<script>alert(3)</script>`),
			"/criteria?project=" + p + "&q=" + url.QueryEscape(scriptPayload),
			"/errors?project=" + p + "&status=all",
			"/errors?project=" + p + "&task=" + url.QueryEscape(scriptPayload),
			"/login?next=" + url.QueryEscape(jsURLPayload),
			"/nope?project=" + p, // an error page echoing nothing
		}
		for _, path := range pages {
			for _, target := range []string{"", "list", "detail", "overview-live"} {
				var r response
				if target == "" {
					r = b.get(path)
				} else {
					r = b.htmx("GET", path, target, nil)
				}
				if r.status >= 500 {
					t.Errorf("GET %s (%q): %d", path, target, r.status)
				}
				checkEscaped(t, path+" target "+target, r)
			}
		}
		// The pages show the payloads, escaped.
		overview := b.must(b.get("/?project="+p), http.StatusOK).body
		contains(t, "overview", overview, "&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
		patterns := b.must(b.get("/patterns?project="+p), http.StatusOK).body
		contains(t, "patterns", patterns, "Pattern &lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x onerror=alert(1)&gt; javascript:alert(1) &#39;&gt;&lt;svg onload=alert(1)&gt;")
		detail := b.must(b.get("/patterns/"+jsID+"?project="+p), http.StatusOK).body
		contains(t, "deprecated detail", detail, "<h2 id=\"panel-title\">javascript:alert(1)</h2>", "&lt;script&gt;alert(1)&lt;/script&gt;")
		errs := b.must(b.get("/errors?project="+p), http.StatusOK).body
		contains(t, "errors", errs, "Task <a href=", "&lt;script&gt;alert(1)&lt;/script&gt;</a>", "<pre>&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</pre>")
		crit := b.must(b.get("/criteria?project="+p), http.StatusOK).body
		contains(t, "criteria", crit, "&lt;script&gt;alert(3)&lt;/script&gt;")
		// Actions answer fragments with the payloads escaped too.
		r := b.must(b.htmx("POST", "/patterns/"+patternID+"/deprecate?project="+p, "pattern-panel",
			url.Values{"reason": {scriptPayload + imgPayload}}), http.StatusOK)
		checkEscaped(t, "deprecate fragment", r)
		r = b.must(b.htmx("POST", "/patterns/"+patternID+"/promote?project="+p, "pattern-panel", nil), http.StatusConflict)
		checkEscaped(t, "conflict fragment", r)
		r = b.must(b.htmx("POST", "/errors/"+errorID+"/resolve?project="+p, errorID, nil), http.StatusOK)
		checkEscaped(t, "resolve fragment", r)
	}
	// The evil project name is escaped in the switcher and the stream URL.
	body := b.must(b.get("/"), http.StatusOK).body
	contains(t, "switcher", body, `<option value="&#34;&gt;&lt;img src=x onerror=alert(2)&gt;">&#34;&gt;&lt;img src=x onerror=alert(2)&gt; · `)
	body = b.must(b.get("/?project="+url.QueryEscape(evilProject)), http.StatusOK).body
	contains(t, "events url", body, `data-events="/events?project=%22%3E%3Cimg&#43;src%3Dx&#43;onerror%3Dalert%282%29%3E"`)
	// A login redirect never leaves the site.
	r := b.do(req{path: "/login?next=" + url.QueryEscape(jsURLPayload)})
	if loc := r.header.Get("Location"); loc != "/" {
		t.Errorf("login next=javascript: redirects to %q", loc)
	}
}

func checkEscaped(t *testing.T, what string, r response) {
	t.Helper()
	if m := rawMarkup.FindString(r.body); m != "" {
		i := strings.Index(r.body, m)
		t.Errorf("%s: unescaped payload %q in …%s…", what, m, r.body[max(0, i-200):min(len(r.body), i+100)])
	}
	if m := jsURL.FindString(r.body); m != "" {
		t.Errorf("%s: javascript: URL in an attribute: %q", what, m)
	}
	if r.header.Get("Content-Security-Policy") != viewer.ContentSecurityPolicy && r.status < 400 {
		t.Errorf("%s: CSP %q", what, r.header.Get("Content-Security-Policy"))
	}
}
