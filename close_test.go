package kaizen_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// A session that ends closes its task by itself: one outcome, inferred from
// the session's signals, with the strategies its prompt and plan named as
// patterns and the files it edited; an explicit outcome then replaces it.
func TestClosedSessionGetsAnInferredOutcome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		ev := func(in kaizen.TaskEventInput) *kaizen.TaskEventResult {
			t.Helper()
			in.TaskID, in.Source = "claude-s1", "claude"
			res, err := b.e.RecordTaskEvent(ctx, in)
			if err != nil {
				t.Fatalf("%s: %v", in.Kind, err)
			}
			b.clock.Advance(time.Minute)
			return res
		}
		ev(kaizen.TaskEventInput{Kind: "start", EventID: "e1"})
		ev(kaizen.TaskEventInput{Kind: "prompt", Text: "Add OAuth login; split by feature", EventID: "e2"})
		ev(kaizen.TaskEventInput{Kind: "tool", ToolName: "ExitPlanMode", Plan: "1. write the tests alongside the implementation", EventID: "e3"})
		ev(kaizen.TaskEventInput{Kind: "tool", ToolName: "Edit", Files: []string{"auth/oauth.go"}, EventID: "e4"})
		ev(kaizen.TaskEventInput{Kind: "tool_failure", ToolName: "Bash", Message: "go test: 1 failing", Signal: "test_fail", EventID: "e5"})
		// the same event delivered again (a retried hook): counted once
		if res := ev(kaizen.TaskEventInput{Kind: "tool_failure", ToolName: "Bash", Message: "go test: 1 failing", Signal: "test_fail", EventID: "e5",
			Timestamp: b.clock.Now().Add(-time.Minute).Format(time.RFC3339Nano)}); !res.Duplicate || res.Task.ToolFailures != 1 {
			t.Fatalf("a redelivered event: %+v", res)
		}
		ev(kaizen.TaskEventInput{Kind: "tool", ToolName: "Edit", Files: []string{"auth/oauth.go", "auth/oauth_test.go"}, EventID: "e6"})
		last := ev(kaizen.TaskEventInput{Kind: "tool", ToolName: "Bash", Signal: "test_pass", EventID: "e7"})
		ev(kaizen.TaskEventInput{Kind: "end", EndReason: "prompt_input_exit", EventID: "e8"})

		closed, err := b.e.CloseTask(ctx, kaizen.CloseTaskInput{TaskID: "claude-s1", Reason: "session_end"})
		if err != nil {
			t.Fatal(err)
		}
		if closed.Outcome == nil || closed.Inference == nil {
			t.Fatalf("no outcome: %+v", closed)
		}
		o := closed.Outcome.Outcome
		if !o.Success || !o.Inferred || o.Inference != "the last test run passed (closed: session_end)" {
			t.Errorf("inferred outcome %+v", o)
		}
		if o.DurationMs != last.Task.DurationMs+60_000 || o.ErrorCount != 1 || o.RetryCount != 0 {
			t.Errorf("outcome numbers: duration %d errors %d retries %d", o.DurationMs, o.ErrorCount, o.RetryCount)
		}
		if !slices.Equal(o.FilesTouched, []string{"auth/oauth.go", "auth/oauth_test.go"}) {
			t.Errorf("files touched %v", o.FilesTouched)
		}
		var contents []string
		for _, u := range closed.Outcome.Patterns {
			contents = append(contents, u.Content)
		}
		slices.Sort(contents)
		if !slices.Equal(contents, []string{"Split by feature", "Tests alongside implementation"}) {
			t.Errorf("patterns from the prompt and the plan: %v", contents)
		}
		if closed.Task.Description != "Add OAuth login; split by feature" {
			t.Errorf("description %q", closed.Task.Description)
		}
		// Closing again (a redelivered SessionEnd) records nothing more.
		again, err := b.e.CloseTask(ctx, kaizen.CloseTaskInput{TaskID: "claude-s1", Reason: "session_end"})
		if err != nil || again.Outcome != nil || again.Skipped == "" {
			t.Fatalf("closing twice: %+v %v", again, err)
		}
		// The agent reports the real outcome afterwards: it replaces the
		// inferred one, and the pattern counts follow.
		out, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "claude-s1", Success: ptr(false), Description: "split by feature"})
		if err != nil {
			t.Fatal(err)
		}
		if out.Replaced != o.ID || out.Outcome.Inferred || out.Outcome.Success {
			t.Fatalf("explicit after inferred: %+v", out)
		}
		list, err := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{TaskID: "claude-s1"})
		if err != nil || list.Total != 1 || list.Items[0].ID != out.Outcome.ID {
			t.Fatalf("outcomes after the replacement: %+v %v", list, err)
		}
		pats, err := b.e.ListPatterns(ctx, kaizen.PatternQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pats.Items {
			switch p.Content {
			case "Split by feature":
				if p.SuccessCount != 0 || p.FailureCount != 1 {
					t.Errorf("%s after the replacement: %d/%d", p.Content, p.SuccessCount, p.FailureCount)
				}
			case "Tests alongside implementation":
				if p.SuccessCount != 0 || p.FailureCount != 0 {
					t.Errorf("%s after the replacement: %d/%d", p.Content, p.SuccessCount, p.FailureCount)
				}
			}
		}
		// An inferred outcome never replaces an explicit one.
		ev(kaizen.TaskEventInput{Kind: "prompt", Text: "one more thing", EventID: "e9"})
		kept, err := b.e.CloseTask(ctx, kaizen.CloseTaskInput{TaskID: "claude-s1", Reason: "idle"})
		if err != nil || kept.Outcome != nil {
			t.Fatalf("closing after an explicit outcome: %+v %v", kept, err)
		}
	})
}

// The idle sweep closes only the tasks idle for longer than the timeout,
// and a session in which nothing happened gets no outcome.
func TestIdleTasksAreClosed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		start := b.clock.Now()
		ev := func(task, kind string, sig learning.Signal) {
			t.Helper()
			if _, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: task, Kind: kind, Signal: string(sig), Text: "fix the bug"}); err != nil {
				t.Fatal(err)
			}
		}
		ev("old", "prompt", "")
		ev("old", "tool_failure", "")
		ev("empty", "start", "")
		b.clock.Advance(50 * time.Minute)
		ev("recent", "prompt", learning.SignalUserRejected)
		b.clock.Advance(10*time.Minute + time.Millisecond)
		res, err := b.e.CloseIdleTasks(ctx, kaizen.CloseIdleInput{IdleMs: time.Hour.Milliseconds()})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]kaizen.CloseTaskResult{}
		for _, c := range res.Closed {
			got[c.Task.ID] = c
		}
		if len(got) != 2 || got["old"].Outcome == nil || got["empty"].Outcome != nil || got["empty"].Skipped == "" {
			t.Fatalf("closed %+v", res.Closed)
		}
		if o := got["old"].Outcome.Outcome; o.Success || !o.Inferred || o.Timestamp != start {
			t.Errorf("the idle task with a failed last turn: %+v", o)
		}
		b.clock.Advance(time.Hour)
		res, err = b.e.CloseIdleTasks(ctx, kaizen.CloseIdleInput{IdleMs: time.Hour.Milliseconds()})
		if err != nil || len(res.Closed) != 1 || res.Closed[0].Outcome == nil || res.Closed[0].Outcome.Outcome.Success {
			t.Fatalf("the rejected task: %+v %v", res, err)
		}
		if _, err := b.e.CloseIdleTasks(ctx, kaizen.CloseIdleInput{IdleMs: 0}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("idle_ms 0: %v", err)
		}
	})
}
