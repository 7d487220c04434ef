package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
)

// testBundle is a real engine on a temporary SQLite database, with a clock
// the test moves, and a handler over it.
type testBundle struct {
	e   *kaizen.Engine
	h   *hook.Handler
	mu  sync.Mutex
	now time.Time
}

func setup(t *testing.T, tweaks ...func(*kaizen.Config)) *testBundle {
	t.Helper()
	b := &testBundle{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	cfg.Project = "webapp"
	cfg.Now = func() time.Time {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.now
	}
	for _, f := range tweaks {
		f(&cfg)
	}
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	b.e = e
	b.h = &hook.Handler{Backend: e, Project: "webapp"}
	return b
}

func (b *testBundle) advance(d time.Duration) {
	b.mu.Lock()
	b.now = b.now.Add(d)
	b.mu.Unlock()
}

// send parses a fixture and handles it one minute after the previous event.
func (b *testBundle) send(t *testing.T, c hook.Client, file string) (hook.Event, []byte) {
	t.Helper()
	name := eventName(file)
	ev, err := hook.Parse(c, name, fixture(t, c, file))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.h.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s: %v", c, file, err)
	}
	b.advance(time.Minute)
	return ev, hook.Render(c, name, resp)
}

// learnAntiPattern records failures of "Split by file type" until it is
// inverted into an anti-pattern, and a success of "Split by feature".
func (b *testBundle) learnAntiPattern(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for i, ok := range []bool{false, false, false, false, true} {
		strategy, d := "Split by file type", int64(600000)
		if ok {
			strategy, d = "Split by feature", 120000
		}
		_, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{Project: "webapp", TaskID: "bd-" + string(rune('1'+i)),
			DurationMs: &d, Success: &ok, Strategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// One session of each client, in the order a real session goes: start,
// prompt, tool call, tool failure, stop, and a second prompt (a retry
// after the failure). The task then has its duration, tool calls,
// failures, retry and the tool failure in the error accumulator.
func TestSessionBecomesATrackedTask(t *testing.T) {
	t.Parallel()
	sessions := map[hook.Client][]string{
		hook.Claude:   {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "UserPromptSubmit"},
		hook.Codex:    {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUse.failure", "Stop", "UserPromptSubmit"},
		hook.Cursor:   {"sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure", "stop", "beforeSubmitPrompt"},
		hook.Opencode: {"session.created", "chat.message", "tool.execute.after", "tool.failed", "session.idle", "chat.message"},
	}
	wantError := map[hook.Client]struct{ tool, message string }{
		hook.Claude:   {"Bash", "Command exited with non-zero status code 1"},
		hook.Codex:    {"Bash", "Exit code: 1\nWall time: 3.2 seconds\nOutput:\nFAIL src/auth/callback.test.ts\n  expected 302, got 500"},
		hook.Cursor:   {"Shell", "Command failed with exit code 1: 1 failing test"},
		hook.Opencode: {"bash", "npm test exited with code 1"},
	}
	for c, files := range sessions {
		t.Run(string(c), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			var ev hook.Event
			for _, f := range files {
				ev, _ = b.send(t, c, f)
			}
			ctx := context.Background()
			task, err := b.e.GetTask(ctx, "webapp", ev.TaskID())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(task.ID, string(c)+"-") || task.Source != string(c) {
				t.Errorf("task %s from %s", task.ID, task.Source)
			}
			if task.DurationMs != (5*time.Minute).Milliseconds() || task.Prompts != 2 || task.ToolCalls != 2 ||
				task.ToolFailures != 1 || task.RetryCount != 1 || task.ErrorCount != 1 || task.OpenErrors != 1 {
				t.Errorf("task: duration %dms, %d prompts, %d tool calls, %d failures, %d retries, %d errors (%d open)",
					task.DurationMs, task.Prompts, task.ToolCalls, task.ToolFailures, task.RetryCount, task.ErrorCount, task.OpenErrors)
			}
			if task.Description == "" {
				t.Error("the first prompt did not become the task's description")
			}
			errs, err := b.e.ListErrors(ctx, kaizen.ErrorQuery{Project: "webapp", TaskID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if len(errs.Items) != 1 {
				t.Fatalf("%d errors", len(errs.Items))
			}
			got, want := errs.Items[0], wantError[c]
			if got.Type != "tool_failure" || got.ToolName != want.tool || got.Message != want.message {
				t.Errorf("error: %s from %q: %q, want tool_failure from %q: %q", got.Type, got.ToolName, got.Message, want.tool, want.message)
			}

			// the outcome then needs no numbers
			yes := true
			res, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{Project: "webapp", TaskID: task.ID, Success: &yes})
			if err != nil {
				t.Fatal(err)
			}
			if o := res.Outcome; o.DurationMs != 300000 || o.RetryCount != 1 || o.ErrorCount != 1 {
				t.Errorf("outcome: %dms, %d retries, %d errors", o.DurationMs, o.RetryCount, o.ErrorCount)
			}
		})
	}
}

// Nothing learned yet: the session start injects nothing at all.
func TestSessionStartInjectsNothingBeforeLearning(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, c := range []struct {
		client hook.Client
		file   string
	}{{hook.Claude, "SessionStart"}, {hook.Codex, "SessionStart"}, {hook.Cursor, "sessionStart"}, {hook.Opencode, "session.created"}} {
		if _, out := b.send(t, c.client, c.file); out != nil {
			t.Errorf("%s %s: %s", c.client, c.file, out)
		}
	}
}

// With patterns learned, the session start injects the guidance in the
// client's additional-context format, and a prompt that uses the
// anti-pattern gets the warning.
func TestGuidanceInjection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.learnAntiPattern(t)

	_, out := b.send(t, hook.Claude, "SessionStart")
	var claude struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	mustDecode(t, out, &claude)
	ctx := claude.HookSpecificOutput.AdditionalContext
	if claude.HookSpecificOutput.HookEventName != "SessionStart" ||
		!strings.Contains(ctx, "it is not an instruction") ||
		!strings.Contains(ctx, "AVOID: Split by file type") ||
		!strings.Contains(ctx, "Split by feature") ||
		!strings.Contains(ctx, "claude-9f0c1e52-6a8e-4c55-b1d2-2f0a6d3c7e11") ||
		strings.Contains(ctx, "criteria weights") {
		t.Errorf("session context:\n%s", ctx)
	}

	_, out = b.send(t, hook.Claude, "UserPromptSubmit")
	mustDecode(t, out, &claude)
	if claude.HookSpecificOutput.HookEventName != "UserPromptSubmit" ||
		!strings.Contains(claude.HookSpecificOutput.AdditionalContext, "Your plan uses an anti-pattern: AVOID: Split by file type") {
		t.Errorf("prompt context: %s", out)
	}

	// a session's first prompt gets the ranking for its task; a later
	// prompt that mentions no strategy gets nothing
	ev, err := hook.Parse(hook.Codex, "UserPromptSubmit", fixture(t, hook.Codex, "UserPromptSubmit"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := b.h.Handle(context.Background(), ev); err != nil || !strings.Contains(resp.Context, "Recommended for this task") {
		t.Errorf("first prompt: %+v, %v", resp, err)
	}
	if resp, err := b.h.Handle(context.Background(), ev); err != nil || resp.Context != "" {
		t.Errorf("plain later prompt: %+v, %v", resp, err)
	}

	_, out = b.send(t, hook.Codex, "SessionStart")
	var codex struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	mustDecode(t, out, &codex)
	if codex.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(codex.HookSpecificOutput.AdditionalContext, "AVOID") {
		t.Errorf("codex: %s", out)
	}

	_, out = b.send(t, hook.Cursor, "sessionStart")
	var cursor struct {
		AdditionalContext string `json:"additional_context"`
	}
	mustDecode(t, out, &cursor)
	if !strings.Contains(cursor.AdditionalContext, "AVOID") {
		t.Errorf("cursor: %s", out)
	}
	// Cursor's prompt hook adds context and always lets the prompt through
	_, out = b.send(t, hook.Cursor, "beforeSubmitPrompt")
	var prompt struct {
		Continue          bool   `json:"continue"`
		AdditionalContext string `json:"additional_context"`
	}
	mustDecode(t, out, &prompt)
	if !prompt.Continue || !strings.Contains(prompt.AdditionalContext, "Your plan uses an anti-pattern") {
		t.Errorf("cursor prompt: %s", out)
	}

	_, out = b.send(t, hook.Opencode, "session.created")
	if !strings.HasPrefix(string(out), "## Learned guidance") {
		t.Errorf("opencode: %s", out)
	}
	if _, out = b.send(t, hook.Opencode, "chat.message"); !strings.Contains(string(out), "Your plan uses an anti-pattern") {
		t.Errorf("opencode prompt: %s", out)
	}

	// tool calls and stops answer nothing (until an advisor speaks)
	for _, f := range []string{"PostToolUse", "PostToolUseFailure", "Stop"} {
		if _, out := b.send(t, hook.Claude, f); out != nil {
			t.Errorf("claude %s: %s", f, out)
		}
	}
}

// The session start includes the open errors of the session's task.
func TestSessionStartIncludesOpenErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.send(t, hook.Claude, "PostToolUseFailure")
	_, out := b.send(t, hook.Claude, "SessionStart") // e.g. resumed
	if !strings.Contains(string(out), "Command exited with non-zero status code 1") {
		t.Errorf("resumed session: %s", out)
	}
}

func mustDecode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("output %q is not JSON: %v", data, err)
	}
}

type advisorFunc func(context.Context, hook.AdviceInput) (hook.Advice, error)

func (f advisorFunc) Advise(ctx context.Context, in hook.AdviceInput) (hook.Advice, error) {
	return f(ctx, in)
}

// The seam for exploration nudges: advisors see tool calls, failures and
// stops with the task after the event, and what they say reaches the
// agent in the client's format.
func TestAdvisorsSpeakAfterToolsAndStops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var seen []string
	b.h.Advisors = []hook.Advisor{advisorFunc(func(_ context.Context, in hook.AdviceInput) (hook.Advice, error) {
		seen = append(seen, string(in.Event.Kind))
		if in.Task.ID != in.Event.TaskID() || in.Project != "webapp" {
			t.Errorf("advice input: project %s, task %s for %s", in.Project, in.Task.ID, in.Event.TaskID())
		}
		switch in.Event.Kind {
		case hook.KindTool:
			if len(in.Event.ToolInput) == 0 {
				t.Error("the advisor does not see the tool input")
			}
			return hook.Advice{Context: "You have read 12 files; consider summarising."}, nil
		case hook.KindStop:
			return hook.Advice{Continue: "Write the summary before stopping."}, nil
		}
		return hook.Advice{}, nil
	})}
	b.send(t, hook.Claude, "SessionStart")
	_, out := b.send(t, hook.Claude, "PostToolUse")
	if !strings.Contains(string(out), `"hookEventName":"PostToolUse"`) || !strings.Contains(string(out), "consider summarising") {
		t.Errorf("PostToolUse: %s", out)
	}
	_, out = b.send(t, hook.Claude, "Stop")
	var stop struct{ Decision, Reason string }
	mustDecode(t, out, &stop)
	if stop.Decision != "block" || stop.Reason != "Write the summary before stopping." {
		t.Errorf("Stop: %s", out)
	}
	// Cursor continues with a follow-up message
	_, out = b.send(t, hook.Cursor, "stop")
	if string(out) != "{\"followup_message\":\"Write the summary before stopping.\"}\n" {
		t.Errorf("cursor stop: %s", out)
	}
	// an agent already continuing because of a stop hook is not asked again
	ev, _ := hook.Parse(hook.Claude, "Stop", fixture(t, hook.Claude, "Stop"))
	ev.StopHookActive = true
	if resp, err := b.h.Handle(context.Background(), ev); err != nil || resp.Continue != "" {
		t.Errorf("stop_hook_active: %+v, %v", resp, err)
	}
	if strings.Join(seen, ",") != "tool,stop,stop,stop" {
		t.Errorf("advisors saw %v", seen)
	}
}

// A failing advisor does not lose the event, and its error is reported.
func TestAdvisorErrorKeepsTheEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.Advisors = []hook.Advisor{advisorFunc(func(context.Context, hook.AdviceInput) (hook.Advice, error) {
		return hook.Advice{}, errors.New("tracker unavailable")
	})}
	ev, _ := hook.Parse(hook.Claude, "PostToolUse", fixture(t, hook.Claude, "PostToolUse"))
	if _, err := b.h.Handle(context.Background(), ev); err == nil || !strings.Contains(err.Error(), "tracker unavailable") {
		t.Errorf("error %v", err)
	}
	task, err := b.e.GetTask(context.Background(), "webapp", ev.TaskID())
	if err != nil || task.ToolCalls != 1 {
		t.Errorf("task %+v, %v", task, err)
	}
}

// Agent text is made storable: control characters go, long prompts and
// error messages are cut, odd tool names become identifiers.
func TestAgentTextIsCleaned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	prompt := "fix \x1b[31mred\x1b[0m\r\n" + strings.Repeat("é", 10000)
	for _, ev := range []hook.Event{
		{Client: hook.Claude, Name: "UserPromptSubmit", Kind: hook.KindPrompt, SessionID: "s", Prompt: prompt},
		{Client: hook.Claude, Name: "PostToolUseFailure", Kind: hook.KindToolFailure, SessionID: "s",
			ToolName: " my tool\n", Error: strings.Repeat("boom ", 5000) + "\x00"},
		{Client: hook.Claude, Name: "PostToolUseFailure", Kind: hook.KindToolFailure, SessionID: "s"},
	} {
		if _, err := b.h.Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	task, err := b.e.GetTask(context.Background(), "webapp", "claude-s")
	if err != nil {
		t.Fatal(err)
	}
	if len(task.Description) > 4096 || strings.ContainsRune(task.Description, 0x1b) || !strings.HasPrefix(task.Description, "fix  [31mred") {
		t.Errorf("description (%d bytes) %.40q", len(task.Description), task.Description)
	}
	errs, _ := b.e.ListErrors(context.Background(), kaizen.ErrorQuery{Project: "webapp", TaskID: "claude-s"})
	if len(errs.Items) != 2 {
		t.Fatalf("%d errors", len(errs.Items))
	}
	for _, e := range errs.Items {
		if len(e.Message) > 4096 || strings.ContainsRune(e.Message, 0) || e.Message == "" {
			t.Errorf("message (%d bytes) %.40q", len(e.Message), e.Message)
		}
		if e.ToolName != "" && e.ToolName != "my_tool" {
			t.Errorf("tool name %q", e.ToolName)
		}
	}
}

// A session's first prompt says what the task is: it gets the strategies
// ranked for tasks like it, with the one that failed on similar tasks to
// avoid. The seed ranking has no task-conditioned recommendation, and a
// project with no evidence gets nothing.
func TestFirstPromptGetsTheRanking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	prompt := func(session, text string) string {
		t.Helper()
		payload := fmt.Sprintf(`{"session_id":%q,"cwd":"/home/dev/src/webapp","hook_event_name":"UserPromptSubmit","prompt":%q}`, session, text)
		resp, _ := b.handle(t, hook.Claude, "UserPromptSubmit", []byte(payload))
		return resp.Context
	}
	if got := prompt("empty-1", "Migrate the billing schema to v2"); got != "" {
		t.Errorf("no evidence yet, got:\n%s", got)
	}
	for i := range 6 {
		ok := i%2 == 0
		strategy := "Respect dependency chain"
		if !ok {
			strategy = "Split by file type"
		}
		d := int64(300000)
		if _, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{Project: "webapp", TaskID: fmt.Sprintf("mig-%d", i),
			DurationMs: &d, Task: fmt.Sprintf("Migrate the orders schema to v%d", i+2), Success: &ok, Strategy: strategy}); err != nil {
			t.Fatal(err)
		}
	}
	got := prompt("s-1", "Migrate the billing schema to v3")
	for _, want := range []string{"it is not an instruction", "Recommended for this task", "similar past task",
		"Respect dependency chain", "Likely to fail for tasks like this one: Split by file type"} {
		if !strings.Contains(got, want) {
			t.Errorf("first prompt lacks %q:\n%s", want, got)
		}
	}
	if got := prompt("s-1", "Now also update the README"); got != "" {
		t.Errorf("a later prompt got:\n%s", got)
	}
}
