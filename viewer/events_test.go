package viewer_test

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/server"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
	"github.com/kaizenhq/kaizen/viewer"
)

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// openStream connects to /events and returns a channel of its events,
// closed when the stream ends.
func openStream(ctx context.Context, t *testing.T, client *http.Client, url string, header map[string]string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	hr, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	resp, err := client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch, resp
}

func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(testkit.Patience):
		t.Fatalf("no event within %v", testkit.Patience)
	}
	return sseEvent{}
}

func TestEventsStreamChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, resp := openStream(ctx, t, b.ts.Client(), b.ts.URL+"/events?project=proj", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Content-Security-Policy") != viewer.ContentSecurityPolicy {
		t.Errorf("stream CSP %q", resp.Header.Get("Content-Security-Policy"))
	}
	first := next(t, ch)
	if first.name != "version" || first.data == "" {
		t.Fatalf("first event: %+v", first)
	}
	// The page's version matches the stream's until something changes.
	contains(t, "page version", b.get("/").body, `data-version="`+first.data+`"`)

	// A second stream on another project shares nothing with this one.
	other, _ := openStream(ctx, t, b.ts.Client(), b.ts.URL+"/events?project=other", nil)
	next(t, other)
	testkit.Eventually(t, "two pollers run", func() bool { return b.viewer.Pollers() == 2 && b.viewer.OpenStreams() == 2 })

	b.record(kaizen.OutcomeInput{TaskID: "bd-1", Patterns: []string{"Split by feature"}})
	ev := next(t, ch)
	if ev.name != "version" || ev.data == first.data {
		t.Fatalf("after an outcome: %+v (before %q)", ev, first.data)
	}
	// Resolving an error and a manual action are changes too.
	e, err := b.engine.RecordError(ctx, kaizen.ErrorInput{TaskID: "bd-1", Message: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	ev2 := next(t, ch)
	if _, err := b.engine.ResolveError(ctx, "proj", e.ID); err != nil {
		t.Fatal(err)
	}
	ev3 := next(t, ch)
	if _, err := b.engine.PromotePattern(ctx, kaizen.ManualInput{Project: "proj", Pattern: "Split by feature"}); err != nil {
		t.Fatal(err)
	}
	ev4 := next(t, ch)
	seen := map[string]bool{first.data: true}
	for _, e := range []sseEvent{ev, ev2, ev3, ev4} {
		if seen[e.data] {
			t.Errorf("repeated signature %q", e.data)
		}
		seen[e.data] = true
	}
	select {
	case e := <-other:
		t.Errorf("the other project's stream got %+v", e)
	default:
	}

	// The client goes away: its stream and, with the last one, the
	// project's poller stop.
	cancel()
	testkit.Eventually(t, "streams and pollers stop", func() bool { return b.viewer.OpenStreams() == 0 && b.viewer.Pollers() == 0 })
}

func TestEventsRequireValidProjectAndAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, withToken("tok-0123456789abcdef"))
	if r := b.do(req{path: "/events?project=" + "%01bad"}); r.status != http.StatusBadRequest {
		t.Errorf("bad project: %d", r.status)
	}
	// Without a session the stream is refused with a plain 401, not a
	// redirect that EventSource would follow to an HTML page.
	r := b.do(req{path: "/events", noToken: true, header: map[string]string{"Accept": "text/event-stream"}})
	if r.status != http.StatusUnauthorized || r.header.Get("Location") != "" {
		t.Errorf("stream without auth: %d %q", r.status, r.header.Get("Location"))
	}
	// HEAD answers the headers and ends.
	r = b.do(req{method: "HEAD", path: "/events"})
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Errorf("HEAD stream: %d %q", r.status, r.header.Get("Content-Type"))
	}
	if b.viewer.OpenStreams() != 0 {
		t.Error("refused streams are counted")
	}
}

// TestEventsEndOnShutdown: a server shutdown ends open streams at once,
// so the graceful drain does not wait for them.
func TestEventsEndOnShutdown(t *testing.T) {
	t.Parallel()
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = "memory"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	srv, err := server.New(e, server.Options{Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.Register(srv, viewer.Options{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	ch, _ := openStream(context.Background(), t, http.DefaultClient, "http://"+ln.Addr().String()+"/events", nil)
	next(t, ch)
	testkit.Eventually(t, "the stream is open", func() bool { return v.OpenStreams() == 1 })
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(testkit.Patience): // the shutdown timeout is an hour
		t.Fatal("shutdown waited for the event stream")
	}
	for range ch { // the stream ends
	}
	if v.OpenStreams() != 0 || v.Pollers() != 0 {
		t.Errorf("after shutdown: %d streams, %d pollers", v.OpenStreams(), v.Pollers())
	}
	// Closing twice is harmless, and new streams are refused.
	v.Close()
}

// TestEventsExperienceChanges: every kind of experience change, even one
// that indexes nothing for recall (a tool turn, a verdict, a recall, a
// skill's status), changes the project's signature and is announced on
// the event stream. The engine's clock stands still but for the turn (the
// newest turn is part of the signature): no other change is seen through
// an update time alone.
func TestEventsExperienceChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	s := seedExperience(t, b, "proj")
	e := b.engine
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, _ := openStream(ctx, t, b.ts.Client(), b.ts.URL+"/events?project=proj", nil)
	first := next(t, ch)
	contains(t, "heuristics page version", b.get("/heuristics").body, `data-version="`+first.data+`"`)

	seen := map[string]string{first.data: "the stream's first event"}
	sig, err := e.ProjectSignature(ctx, "proj")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what   string
		change func() error
	}{
		{"a captured tool turn", func() error {
			b.clock.Advance(time.Second)
			_, err := e.Capture(ctx, kaizen.CaptureInput{Project: "proj", TaskID: "bd-2", Source: "cli",
				Turns: []kaizen.TurnInput{{Role: "tool", Content: "ok"}}})
			return err
		}},
		{"a verdict", func() error {
			_, err := e.HeuristicFeedback(ctx, kaizen.HeuristicFeedbackInput{Project: "proj", HeuristicID: s.heuristic,
				Verdict: "helpful", Source: "test"})
			return err
		}},
		{"a recall", func() error {
			_, err := e.Recall(ctx, kaizen.RecallInput{Project: "proj", TaskID: "bd-4", Query: "is the login test flaky?"})
			return err
		}},
		{"a skill activated", func() error {
			_, err := e.SetSkillStatus(ctx, kaizen.SkillStatusInput{Project: "proj", Skill: s.skill, Status: "active"})
			return err
		}},
		{"a heuristic archived", func() error {
			_, err := e.HeuristicAction(ctx, kaizen.HeuristicActionInput{Project: "proj", HeuristicID: s.heuristic,
				Action: "archive", Reason: "rewritten"})
			return err
		}},
	} {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		after, err := e.ProjectSignature(ctx, "proj")
		if err != nil {
			t.Fatal(err)
		}
		if after == sig {
			t.Errorf("%s left the signature %q", c.what, sig)
		}
		sig = after
		ev := next(t, ch)
		if ev.name != "version" {
			t.Fatalf("after %s: %+v", c.what, ev)
		}
		if prev, ok := seen[ev.data]; ok {
			t.Errorf("after %s: the stream repeated the version of %s", c.what, prev)
		}
		seen[ev.data] = c.what
	}
}

// TestVersionHeader: fragments name the state they show, read before
// their data; an action's fragment names the state its own change made,
// which is what the stream announces next, so the page does not reload
// the action's answer. Versions are hashes: agent text never reaches them.
func TestVersionHeader(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := seedExperience(t, b, "proj")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, _ := openStream(ctx, t, b.ts.Client(), b.ts.URL+"/events?project=proj", nil)
	first := next(t, ch)
	testkit.Eventually(t, "the poller runs", func() bool { return b.viewer.Pollers() == 1 })

	path := "/heuristics/" + s.heuristic + "?project=proj"
	r := b.must(b.htmx("GET", path, "heuristic-panel", nil), http.StatusOK)
	if v := r.header.Get("X-Kaizen-Version"); v != first.data {
		t.Errorf("panel version %q, stream %q", v, first.data)
	}
	for _, p := range []string{"/", "/turns", "/heuristics", "/skills/" + s.skill, "/explore"} {
		r := b.must(b.get(p), http.StatusOK)
		v := r.header.Get("X-Kaizen-Version")
		if len(v) != 24 || strings.Trim(v, "0123456789abcdef") != "" {
			t.Errorf("%s: version %q is not a short hash", p, v)
		}
		contains(t, p, r.body, `data-version="`+v+`"`)
	}
	if r := b.get("/skills/bundle"); r.header.Get("X-Kaizen-Version") != "" {
		t.Error("the skill bundle download carries a version")
	}
	if r := b.htmx("GET", "/heuristics?project=%01bad", "list", nil); r.status != http.StatusBadRequest ||
		r.header.Get("X-Kaizen-Version") != "" {
		t.Errorf("bad project: %d, version %q", r.status, r.header.Get("X-Kaizen-Version"))
	}

	for _, a := range []struct {
		what, path string
		form       url.Values
	}{
		{"a verdict", "/feedback", url.Values{"verdict": {"helpful"}, "note": {"fine"}}},
		{"an archive", "/action", url.Values{"action": {"archive"}, "reason": {"rewritten"}}},
	} {
		r := b.must(b.htmx("POST", "/heuristics/"+s.heuristic+a.path+"?project=proj", "heuristic-panel", a.form), http.StatusOK)
		ev := next(t, ch)
		if v := r.header.Get("X-Kaizen-Version"); v == "" || v != ev.data {
			t.Errorf("%s: the answer's version %q, the stream's next %q", a.what, v, ev.data)
		}
	}
	r = b.must(b.htmx("POST", "/skills/"+s.skill+"/status?project=proj", "skill-panel", url.Values{"status": {"active"}}), http.StatusOK)
	if ev := next(t, ch); r.header.Get("X-Kaizen-Version") != ev.data {
		t.Errorf("skill status: the answer's version %q, the stream's next %q", r.header.Get("X-Kaizen-Version"), ev.data)
	}
}
