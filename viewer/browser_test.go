package viewer_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
	"github.com/kaizenhq/kaizen/learning"
)

// Browser tests drive headless Chromium through chromedriver's W3C
// WebDriver HTTP API (net/http and JSON, no client library). They are
// skipped when Chromium or chromedriver is missing, except under CI
// (CI set), where that is a failure: .ci/run installs the Debian packages
// chromium and chromium-driver.

// browser is one WebDriver session.
type browser struct {
	t       *testing.T
	base    string // chromedriver URL
	session string
	client  *http.Client
}

// findBrowser returns the paths of chromedriver and Chromium.
func findBrowser(t *testing.T) (driver, chrome string) {
	t.Helper()
	driver, err := exec.LookPath("chromedriver")
	if err == nil {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if chrome, err = exec.LookPath(name); err == nil {
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("headless browser tests need chromium and chromedriver under CI (apt-get install -y chromium chromium-driver): %v", err)
		}
		t.Skipf("chromium or chromedriver not installed (apt-get install -y chromium chromium-driver): %v", err)
	}
	return driver, chrome
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startBrowser starts chromedriver and a headless Chromium session with a
// fresh profile; both are stopped when the test ends.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	driver, chrome := findBrowser(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start chromedriver: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	b := &browser{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), client: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status struct {
			Ready bool `json:"ready"`
		}
		if err := b.call("GET", "/status", nil, &status); err == nil && status.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not become ready:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chrome,
			"args": []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
				"--window-size=1400,1000", "--user-data-dir=" + t.TempDir()},
		},
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("POST", "/session", caps, &created); err != nil {
		t.Fatalf("create session: %v\n%s", err, logs.String())
	}
	b.session = created.SessionID
	t.Cleanup(func() { _ = b.call("DELETE", "/session/"+b.session, nil, nil) })
	return b
}

// call sends one WebDriver command and decodes its "value".
func (b *browser) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var envelope struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &envelope); err != nil {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, envelope.Value)
	}
	if out != nil {
		return json.Unmarshal(envelope.Value, out)
	}
	return nil
}

func (b *browser) must(method, path string, body, out any) {
	b.t.Helper()
	if err := b.call(method, "/session/"+b.session+path, body, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) open(u string) {
	b.t.Helper()
	b.must("POST", "/url", map[string]string{"url": u}, nil)
}

// eval runs a script (a function body) and decodes its return value.
func (b *browser) eval(script string, out any, args ...any) {
	b.t.Helper()
	if args == nil {
		args = []any{}
	}
	b.must("POST", "/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// waitFor polls a script until it returns true.
func (b *browser) waitFor(what, script string, args ...any) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ok bool
		b.eval(script, &ok, args...)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var text string
			b.eval("return document.body ? document.body.innerText.slice(0, 2000) : ''", &text)
			b.t.Fatalf("timed out waiting for %s; page text:\n%s", what, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// click clicks the element matching a CSS selector.
func (b *browser) click(selector string) {
	b.t.Helper()
	var el map[string]string
	b.must("POST", "/element", map[string]string{"using": "css selector", "value": selector}, &el)
	for _, id := range el {
		b.must("POST", "/element/"+id+"/click", map[string]any{}, nil)
		return
	}
	b.t.Fatalf("no element %s", selector)
}

// typeInto types text into the element matching a CSS selector.
func (b *browser) typeInto(selector, text string) {
	b.t.Helper()
	var el map[string]string
	b.must("POST", "/element", map[string]string{"using": "css selector", "value": selector}, &el)
	for _, id := range el {
		b.must("POST", "/element/"+id+"/value", map[string]string{"text": text}, nil)
		return
	}
	b.t.Fatalf("no element %s", selector)
}

// clear empties the field matching a CSS selector, as a user deleting
// its text would.
func (b *browser) clear(selector string) {
	b.t.Helper()
	var el map[string]string
	b.must("POST", "/element", map[string]string{"using": "css selector", "value": selector}, &el)
	for _, id := range el {
		b.must("POST", "/element/"+id+"/clear", map[string]any{}, nil)
		return
	}
	b.t.Fatalf("no element %s", selector)
}

type logEntry struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	Source  string `json:"source"`
}

// logs returns the browser console entries since the last call.
func (b *browser) logs() []logEntry {
	b.t.Helper()
	var entries []logEntry
	b.must("POST", "/se/log", map[string]string{"type": "browser"}, &entries)
	return entries
}

// noConsoleErrors fails on console errors or warnings logged since the
// last call (CSP violations are reported there too).
func (b *browser) noConsoleErrors(where string) {
	b.t.Helper()
	for _, e := range b.logs() {
		if e.Level == "SEVERE" || e.Level == "WARNING" {
			b.t.Errorf("%s: console %s (%s): %s", where, e.Level, e.Source, e.Message)
		}
	}
}

// screenshot saves a PNG of the page and returns its path.
func (b *browser) screenshot(path string) string {
	b.t.Helper()
	var data string
	b.must("GET", "/screenshot", nil, &data)
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return path
}

// Payloads that would run if they reached the DOM as markup.
const (
	pwnScript = `<script>window.__pwned=1;document.title='pwned'</script>`
	pwnImg    = `"><img src=x onerror="window.__pwned=2;document.title='pwned'">`
	pwnURL    = `javascript:window.__pwned=3`
	// pwnSession is a session id (it is in the page title, which must not
	// say "pwned" unless a payload ran).
	pwnSession = `<img src=x onerror="window['__pw'+'ned']=4">`
)

func TestBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t, withToken(token))
	br := startBrowser(t)
	ctx := context.Background()
	seed(t, b)
	// Payloads recorded through the API, in text the pages show.
	b.record(kaizen.OutcomeInput{TaskID: pwnImg, Success: ptr(false), Strategy: pwnScript, FailureDetails: pwnImg + " " + pwnURL,
		Patterns: []string{"Evil " + pwnScript + pwnImg}, Criteria: []string{pwnImg}})
	if _, err := b.engine.RecordError(ctx, kaizen.ErrorInput{TaskID: pwnScript, Message: pwnScript + pwnImg,
		ToolName: pwnURL, StackTrace: pwnImg}); err != nil {
		t.Fatal(err)
	}

	// Log in through the form: the session cookie then opens every page.
	br.open(b.ts.URL + "/")
	br.waitFor("the login page", `return location.pathname === "/login" && !!document.querySelector("#token")`)
	br.typeInto("#token", token)
	br.click(`.login button[type=submit]`)
	br.waitFor("the overview after login", `return location.pathname === "/" && document.title.startsWith("Overview")`)
	br.noConsoleErrors("login")

	// Exploration sessions: a finished one, an active one, and one whose id,
	// tool names and forced-exit reason are payloads.
	finishedSession(t, b, "proj", "sess-done")
	b.startSession(kaizen.ExploreStartInput{SessionID: "sess-active", Strategy: "analyst"})
	b.explore("proj", "sess-active", toolRound("Read", map[string]any{"file_path": "explore/tracker.go"})...)
	b.startSession(kaizen.ExploreStartInput{SessionID: pwnSession, Strategy: "analyst"})
	b.explore("proj", pwnSession, append(append(toolRound(pwnScript, nil), toolRound(pwnImg, nil)...),
		explore.Event{Type: explore.EventForceTerminal, Reason: pwnImg + pwnURL})...)

	evil := b.patternID("proj", "Evil "+pwnScript+pwnImg)
	pages := []struct{ path, title, text string }{
		{"/", "Overview", "Success rate"},
		{"/patterns", "Patterns", "Split by feature"},
		{"/patterns/" + evil, "Pattern", "Evil <script>"},
		{"/anti-patterns", "Anti-patterns", "AVOID: Split by file type"},
		{"/criteria", "Criteria", "Decay of"},
		{"/criteria?criterion=" + url.QueryEscape(pwnImg), "Criteria", `"><img src=x`},
		{"/outcomes", "Outcomes", `"><img src=x onerror=`},
		{"/errors", "Errors", "<script>window.__pwned=1"},
		{"/explore", "Exploration", "sess-done"},
		{"/explore?q=" + url.QueryEscape("onerror"), "Exploration", pwnSession},
		{"/explore/sess-done", "Exploration session", "The exploration budget is spent"},
		{"/explore/" + url.PathEscape(pwnSession), "Exploration session", "forced wrap-up: " + pwnImg},
	}
	for _, p := range pages {
		br.open(b.ts.URL + p.path)
		br.waitFor(p.path+" loaded with htmx and live updates",
			`return document.readyState === "complete" && !!window.htmx && document.title.startsWith(arguments[0]) && document.querySelector("#live").classList.contains("on")`, p.title)
		// Agent text is shown as text and never runs.
		var state struct {
			Pwned  any    `json:"pwned"`
			Title  string `json:"title"`
			Images int    `json:"images"`
			Text   bool   `json:"text"`
		}
		br.eval(`return {pwned: window.__pwned === undefined ? null : window.__pwned, title: document.title,
			images: document.querySelectorAll("img").length, text: document.body.innerText.includes(arguments[0])}`, &state, p.text)
		if state.Pwned != nil || strings.Contains(state.Title, "pwned") || state.Images != 0 {
			t.Errorf("%s: a payload ran: %+v", p.path, state)
		}
		if !state.Text {
			t.Errorf("%s: %q is not shown as text", p.path, p.text)
		}
		br.noConsoleErrors(p.path)
	}

	// The session page draws its timeline, and follows the session live.
	br.open(b.ts.URL + "/explore?status=active")
	br.waitFor("the exploration list", `return !!window.htmx && document.querySelector("#live").classList.contains("on") && !!document.querySelector("a.session-link")`)
	br.click(`a.session-link[href^="/explore/sess-active"]`)
	br.waitFor("the session page", `return location.pathname === "/explore/sess-active" && !!window.htmx &&
		document.querySelector("#live").classList.contains("on") && document.querySelectorAll("figure.timeline g.band").length === 1`)
	br.eval(`window.__sameDocument = true; return true`, nil)
	b.explore("proj", "sess-active", toolRound("Grep", map[string]any{"pattern": "Tracker"})...)
	br.waitFor("the second round, live", `var s = document.querySelector("#session-live"), l = document.querySelector("#list");
		return window.__sameDocument === true && !!s && s.innerText.includes("2 of 24") && l.innerText.includes("1–2 of 2")`)
	// The rounds table is searched in place.
	br.typeInto("#q", "grep")
	br.waitFor("the round search", `var l = document.querySelector("#list"); return !!l && l.innerText.includes("1–1 of 1") && location.search.includes("q=grep")`)
	br.noConsoleErrors("exploration session")

	// An action through the UI: open a pattern's panel from the list,
	// promote it, and see it proven.
	br.open(b.ts.URL + "/patterns?q=file+type")
	br.waitFor("the patterns page", `return !!window.htmx && !!document.querySelector(".pattern-link")`)
	br.click(".pattern-link")
	br.waitFor("the panel", `return !!document.querySelector("#pattern-panel button.promote")`)
	br.click("#pattern-panel button.promote")
	br.waitFor("the promoted state", `var p = document.querySelector("#pattern-panel");
		return !!p && p.innerText.includes("Pattern promoted.") && p.innerText.includes("proven (manual)")`)
	d, err := b.engine.GetPattern(ctx, "proj", "Split by file type")
	if err != nil || d.Maturity.State != learning.Proven {
		t.Fatalf("after clicking promote: %v %v", d.Maturity.State, err)
	}
	// The list refreshes too (HX-Trigger and the event stream).
	br.waitFor("the list shows proven", `var l = document.querySelector("#list"); return !!l && l.innerText.includes("proven (manual)")`)
	// Deprecate with a reason typed in the form.
	br.typeInto("#deprecate-reason", "fails on monorepos")
	br.click("#pattern-panel button.deprecate")
	br.waitFor("the deprecated state", `var p = document.querySelector("#pattern-panel");
		return !!p && p.innerText.includes("Pattern deprecated.") && p.innerText.includes("fails on monorepos")`)
	br.noConsoleErrors("pattern actions")

	// Live update: an outcome recorded through the API appears without a
	// reload, through the event stream.
	br.eval(`window.__sameDocument = true; return true`, nil)
	b.record(kaizen.OutcomeInput{TaskID: "bd-live", Patterns: []string{"Live pattern from the API"}})
	br.open(b.ts.URL + "/patterns")
	br.waitFor("the patterns page", `return !!window.htmx && document.querySelector("#live").classList.contains("on")`)
	br.eval(`window.__sameDocument = true; return true`, nil)
	b.record(kaizen.OutcomeInput{TaskID: "bd-live-2", Patterns: []string{"Second live pattern"}})
	br.waitFor("the live pattern", `return window.__sameDocument === true && document.querySelector("#list").innerText.includes("Second live pattern")`)

	// Resolve an error through the UI.
	br.open(b.ts.URL + "/errors?q=" + url.QueryEscape("merge conflict"))
	br.waitFor("the errors page", `return !!window.htmx && !!document.querySelector("button.resolve")`)
	br.click("button.resolve")
	br.waitFor("the resolved row", `return !document.querySelector("button.resolve") && (document.body.innerText.includes("resolved") || document.body.innerText.includes("No errors match."))`)
	open, err := b.engine.ListErrors(ctx, kaizen.ErrorQuery{Project: "proj", UnresolvedOnly: true, Search: "merge conflict"})
	if err != nil || open.Total != 0 {
		t.Fatalf("after clicking resolve: %v %v", open, err)
	}
	br.noConsoleErrors("resolve")

	// A screenshot of the overview.
	br.open(b.ts.URL + "/")
	br.waitFor("the overview", `return !!window.htmx && !!document.querySelector("svg")`)
	shot := br.screenshot(filepath.Join(t.TempDir(), "overview.png"))
	data, err := os.ReadFile(shot)
	if err != nil || len(data) < 1000 || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot %s: %d bytes, %v", shot, len(data), err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(data))
	if dir := os.Getenv("KAIZEN_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "overview.png"), data, 0o644)
		br.open(b.ts.URL + "/patterns/" + b.patternID("proj", "Split by feature"))
		br.waitFor("the pattern page", `return !!window.htmx`)
		br.screenshot(filepath.Join(dir, "pattern.png"))
		br.open(b.ts.URL + "/criteria")
		br.waitFor("the criteria page", `return !!window.htmx`)
		br.screenshot(filepath.Join(dir, "criteria.png"))
		br.open(b.ts.URL + "/explore")
		br.waitFor("the exploration list", `return !!window.htmx`)
		br.screenshot(filepath.Join(dir, "explore.png"))
		br.open(b.ts.URL + "/explore/sess-done")
		br.waitFor("the session page", `return !!window.htmx && !!document.querySelector("figure.timeline svg")`)
		br.screenshot(filepath.Join(dir, "explore-session.png"))
	}
	br.noConsoleErrors("overview")
}
