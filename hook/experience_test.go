package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/server"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
)

// noAbstention turns recall's abstention and score floor off and scales
// the topic as before (recall.scale_topic): these tests are about what the hooks do
// with a recall, and the fixtures' prompts ("Add OAuth login. Plan: split
// by file type…") are below the offline embedder's calibrated floor for
// the OAuth lesson.
func noAbstention(c *kaizen.Config) {
	c.Experience.Recall.Calibrated = nil
	c.Experience.Recall.ScaleTopic = true
	c.Experience.Filter.MinScore = 0
}

// oauthRule is the lesson of a past task that the prompt fixtures (about
// OAuth login and its callback test) should recall.
const oauthRule = "register the OAuth redirect URL with the provider before testing the login callback"

// learnHeuristic stores, through the agent-as-extractor flow, the
// experience of a past task with one heuristic about OAuth login.
func (b *testBundle) learnHeuristic(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if _, err := b.e.Capture(ctx, kaizen.CaptureInput{Project: "webapp", TaskID: "bd-oauth", Turns: []kaizen.TurnInput{
		{Role: "user", Content: "The OAuth login callback fails with redirect_uri_mismatch."},
		{Role: "assistant", Content: "The redirect URL was not registered with the provider; registered it and the callback works."},
	}}); err != nil {
		t.Fatal(err)
	}
	result, _ := json.Marshal(map[string]any{
		"goal":             "Make the OAuth login callback work",
		"working_approach": "register the redirect URL with the provider",
		"transferable_heuristics": []any{map[string]any{"kind": "verify",
			"trigger": "adding or testing OAuth login and its callback", "rule": oauthRule,
			"why": "the callback failed with redirect_uri_mismatch until the URL was registered"}},
	})
	res, err := b.e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: "webapp", TaskID: "bd-oauth",
		Kind: "experience", Result: result})
	if err != nil {
		t.Fatal(err)
	}
	return res.Experience.Heuristics[0].HeuristicID
}

func (b *testBundle) turns(t *testing.T, task string) []experience.Turn {
	t.Helper()
	l, err := b.e.ListTurns(context.Background(), kaizen.TurnQuery{Project: "webapp", TaskID: task})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (b *testBundle) recalls(t *testing.T, task string) []experience.RecallEvent {
	t.Helper()
	l, err := b.e.ListRecalls(context.Background(), kaizen.RecallQuery{Project: "webapp", TaskID: task})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func additionalContext(t *testing.T, out []byte, event string) string {
	t.Helper()
	var o struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	mustDecode(t, out, &o)
	if o.HookSpecificOutput.HookEventName != event {
		t.Errorf("hookEventName %q, want %q", o.HookSpecificOutput.HookEventName, event)
	}
	return o.HookSpecificOutput.AdditionalContext
}

// A prompt is captured as a user turn of the session's task; the
// heuristic a past task taught about it is injected, with how to report
// on it; the recall is stored under the session's task.
func TestPromptRecallsExperience(t *testing.T) {
	t.Parallel()
	b := setup(t, noAbstention)
	b.h.Experience = b.e
	hid := b.learnHeuristic(t)

	for _, c := range []struct {
		client hook.Client
		event  string
	}{{hook.Claude, "UserPromptSubmit"}, {hook.Codex, "UserPromptSubmit"}} {
		ev, out := b.send(t, c.client, c.event)
		got := additionalContext(t, out, c.event)
		recalls := b.recalls(t, ev.TaskID())
		if len(recalls) != 1 {
			t.Fatalf("%s: %d recalls stored for %s", c.client, len(recalls), ev.TaskID())
		}
		rid := recalls[0].ID
		for _, want := range []string{"## Experience from past tasks (kaizen)", "not instructions", oauthRule,
			"_kaizen recall `" + rid + "` showed the heuristics `" + hid + "`, in order.", "heuristic_feedback tool"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the injected context lacks %q:\n%s", c.client, want, got)
			}
		}
		turns := b.turns(t, ev.TaskID())
		if len(turns) != 1 || turns[0].Role != experience.RoleUser || turns[0].Content != ev.Prompt ||
			turns[0].Source != string(c.client) {
			t.Errorf("%s: turns %+v", c.client, turns)
		}
		if recalls[0].Query != ev.Prompt {
			t.Errorf("%s: recall query %q", c.client, recalls[0].Query)
		}
	}

	// opencode injects the plain text.
	_, out := b.send(t, hook.Opencode, "chat.message")
	if !strings.HasPrefix(string(out), "## Experience from past tasks (kaizen)") || !strings.Contains(string(out), oauthRule) {
		t.Errorf("opencode: %s", out)
	}
	// Cursor's prompt hook injects additional_context (runtime 1.0.32) and
	// always lets the prompt through.
	ev, out := b.send(t, hook.Cursor, "beforeSubmitPrompt")
	if !strings.HasPrefix(string(out), "{\"additional_context\":\"## Experience from past tasks (kaizen)") ||
		!strings.HasSuffix(string(out), ",\"continue\":true}\n") {
		t.Errorf("cursor: %s", out)
	}
	if n, r := len(b.turns(t, ev.TaskID())), len(b.recalls(t, ev.TaskID())); n != 1 || r != 1 {
		t.Errorf("cursor: %d turns, %d recalls", n, r)
	}
}

// With no heuristic (nor any past task), nothing is injected, but the
// prompt is captured. A later session then recalls the earlier session's
// prompt as a memory.
func TestPromptWithoutExperienceInjectsNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		client hook.Client
		event  string
	}{{hook.Claude, "UserPromptSubmit"}, {hook.Codex, "UserPromptSubmit"}, {hook.Opencode, "chat.message"}} {
		b := setup(t)
		b.h.Experience = b.e
		ev, out := b.send(t, c.client, c.event)
		if out != nil {
			t.Errorf("%s %s: injected %s", c.client, c.event, out)
		}
		if n := len(b.turns(t, ev.TaskID())); n != 1 {
			t.Errorf("%s: %d turns", c.client, n)
		}
		// the same prompt again in the same session: its own turns are
		// not recalled
		if _, out := b.send(t, c.client, c.event); out != nil {
			t.Errorf("%s %s again: injected %s", c.client, c.event, out)
		}
	}
	b := setup(t)
	b.h.Experience = b.e
	first, _ := b.send(t, hook.Claude, "UserPromptSubmit")
	ev := first
	ev.SessionID = "later-session"
	resp, err := b.h.Handle(context.Background(), ev)
	if err != nil || !strings.Contains(resp.Context, "### Memories") || !strings.Contains(resp.Context, "> "+first.Prompt) ||
		strings.Contains(resp.Context, "heuristic_feedback") {
		t.Errorf("later session: %v\n%s", err, resp.Context)
	}
	// A blank prompt is neither captured nor recalled.
	ev = hook.Event{Client: hook.Claude, Name: "UserPromptSubmit", Kind: hook.KindPrompt, SessionID: "blank", Prompt: " \x00 "}
	if resp, err := b.h.Handle(context.Background(), ev); err != nil || resp.Context != "" {
		t.Fatalf("blank prompt: %+v, %v", resp, err)
	}
	if n, r := len(b.turns(t, ev.TaskID())), len(b.recalls(t, ev.TaskID())); n != 0 || r != 0 {
		t.Errorf("blank prompt: %d turns, %d recalls", n, r)
	}
}

// The stop stores the agent's last reply as an assistant turn (clients
// that send it), and a tool failure a short tool turn.
func TestStopAndToolFailureAreCaptured(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.Experience = b.e
	ev, out := b.send(t, hook.Claude, "Stop")
	if out != nil {
		t.Errorf("stop answered %s", out)
	}
	turns := b.turns(t, ev.TaskID())
	if len(turns) != 1 || turns[0].Role != experience.RoleAssistant || turns[0].Content != ev.LastMessage || ev.LastMessage == "" {
		t.Fatalf("claude stop turns %+v", turns)
	}
	ev, _ = b.send(t, hook.Codex, "Stop")
	if turns := b.turns(t, ev.TaskID()); len(turns) != 1 || turns[0].Content != "The callback test passes now." {
		t.Errorf("codex stop turns %+v", turns)
	}
	// Cursor sends no reply at its stop: nothing to capture.
	ev, _ = b.send(t, hook.Cursor, "stop")
	if turns := b.turns(t, ev.TaskID()); len(turns) != 0 {
		t.Errorf("cursor stop turns %+v", turns)
	}

	ev, _ = b.send(t, hook.Claude, "PostToolUseFailure")
	turns = b.turns(t, ev.TaskID())
	if len(turns) != 2 || turns[1].Role != experience.RoleTool ||
		turns[1].Content != "Tool Bash failed: Command exited with non-zero status code 1" {
		t.Errorf("tool failure turns %+v", turns)
	}
	// A long error is cut to an excerpt; a successful tool call is not captured.
	long := hook.Event{Client: hook.Claude, Name: "PostToolUseFailure", Kind: hook.KindToolFailure, SessionID: "long",
		ToolName: "Bash", Error: strings.Repeat("x", 5000)}
	if _, err := b.h.Handle(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	b.send(t, hook.Claude, "PostToolUse")
	if turns := b.turns(t, long.TaskID()); len(turns) != 1 || len(turns[0].Content) > 1100 ||
		!strings.HasSuffix(turns[0].Content, "…") {
		t.Errorf("long failure: %d turns, %d bytes", len(turns), len(turns[0].Content))
	}
	if turns := b.turns(t, ev.TaskID()); len(turns) != 2 {
		t.Errorf("a successful tool call was captured: %+v", turns)
	}
}

// Through a daemon: the hook's client captures and recalls over the REST
// API. A daemon that is down gives an error and no injection; a failing
// experience backend does not lose the task event.
func TestExperienceThroughTheDaemon(t *testing.T) {
	t.Parallel()
	b := setup(t, noAbstention)
	hid := b.learnHeuristic(t)
	srv, err := server.New(b.e, server.Options{Addr: "127.0.0.1:0", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	cl := client.New(ts.URL, "tok", 5*time.Second)
	h := &hook.Handler{Backend: cl, Project: "webapp", Experience: cl}
	ev, err := hook.Parse(hook.Claude, "UserPromptSubmit", fixture(t, hook.Claude, "UserPromptSubmit"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Handle(context.Background(), ev)
	if err != nil || !strings.Contains(resp.Context, oauthRule) || !strings.Contains(resp.Context, hid) {
		t.Fatalf("through the daemon: %v\n%s", err, resp.Context)
	}
	if n := len(b.turns(t, ev.TaskID())); n != 1 {
		t.Errorf("%d turns", n)
	}

	// The daemon is down: an error, nothing to print but the no-op.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := client.New("http://"+l.Addr().String(), "tok", time.Second)
	l.Close()
	down := &hook.Handler{Backend: dead, Project: "webapp", Experience: dead}
	resp, err = down.Handle(context.Background(), ev)
	if err == nil || resp.Context != "" {
		t.Fatalf("daemon down: %+v, %v", resp, err)
	}
	if out := hook.NoOp(hook.Claude, "UserPromptSubmit"); out != nil {
		t.Errorf("no-op %s", out)
	}

	// Only the experience backend fails: the task event is recorded, the
	// error says what failed, and nothing is injected.
	half := &hook.Handler{Backend: b.e, Project: "webapp", Experience: dead}
	ev.SessionID = "half"
	resp, err = half.Handle(context.Background(), ev)
	if err == nil || !strings.Contains(err.Error(), "experience: capture the user turn") {
		t.Fatalf("experience down: %+v, %v", resp, err)
	}
	if task, err := b.e.GetTask(context.Background(), "webapp", ev.TaskID()); err != nil || task.Prompts != 1 {
		t.Errorf("task %+v, %v", task, err)
	}
	// An engine error keeps its kind across the wire.
	_, err = cl.Recall(context.Background(), kaizen.RecallInput{Project: "webapp", Query: " "})
	var ke *kaizen.Error
	if !errors.As(err, &ke) || ke.Kind != kaizen.KindInvalid || ke.Field != "query" {
		t.Errorf("recall error across the wire: %#v", err)
	}
}

// The cost of a prompt with the experience system on an engine opened
// in-process (SQLite): the task event, the capture and the recall.
func BenchmarkPromptWithExperience(b *testing.B) {
	for _, withExperience := range []bool{false, true} {
		name := "task event only"
		if withExperience {
			name = "with capture and recall"
		}
		b.Run(name, func(b *testing.B) {
			bundle := benchSetup(b)
			if withExperience {
				bundle.h.Experience = bundle.e
			}
			ev := hook.Event{Client: hook.Claude, Name: "UserPromptSubmit", Kind: hook.KindPrompt, SessionID: "bench",
				Prompt: "Add OAuth login to the settings page and test the callback"}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := bundle.h.Handle(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchSetup is a handler over an engine on SQLite whose store holds the
// experience of 20 past tasks (one heuristic and two memories each).
func benchSetup(b *testing.B) *testBundle {
	b.Helper()
	cfg := kaizen.DefaultConfig()
	cfg.Home = b.TempDir()
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	cfg.Project = "webapp"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	ctx := context.Background()
	topics := []string{"OAuth login", "database migration", "flaky test", "CSS layout", "API pagination"}
	for i := range 20 {
		task := fmt.Sprintf("bd-%d", i)
		topic := topics[i%len(topics)]
		if _, err := e.Capture(ctx, kaizen.CaptureInput{Project: "webapp", TaskID: task, Turns: []kaizen.TurnInput{
			{Role: "user", Content: fmt.Sprintf("Please fix the %s problem number %d", topic, i)},
			{Role: "assistant", Content: fmt.Sprintf("Fixed the %s problem %d by checking the configuration first", topic, i)},
		}}); err != nil {
			b.Fatal(err)
		}
		result, _ := json.Marshal(map[string]any{"goal": "fix the " + topic + " problem",
			"transferable_heuristics": []any{map[string]any{"kind": "verify",
				"trigger": fmt.Sprintf("working on %s, variant %d", topic, i),
				"rule":    fmt.Sprintf("check the %s configuration before changing code (case %d)", topic, i)}}})
		if _, err := e.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{Project: "webapp", TaskID: task,
			Kind: "experience", Result: result}); err != nil {
			b.Fatal(err)
		}
	}
	return &testBundle{e: e, h: &hook.Handler{Backend: e, Project: "webapp"}}
}
