package kaizen_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// A session tracked by hook events becomes a task: the outcome is then
// recorded with one call, taking duration, retries and errors from it.
func TestTrackedTaskFeedsTheOutcome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		event := func(kind, text, tool, msg string) *kaizen.TaskEventResult {
			t.Helper()
			res, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "session-1", Kind: kind, Text: text,
				ToolName: tool, Message: msg, Source: "claude"})
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			return res
		}
		event("start", "", "", "")
		b.clock.Advance(time.Minute)
		event("prompt", "Add OAuth login", "", "")
		b.clock.Advance(time.Minute)
		event("tool", "", "Read", "")
		res := event("tool_failure", "", "Bash", "npm test: 3 failing")
		if res.Error == nil || res.Error.Type != learning.ErrToolFailure || res.Error.ToolName != "Bash" {
			t.Fatalf("tool failure error %+v", res.Error)
		}
		b.clock.Advance(time.Minute)
		event("stop", "", "", "")
		b.clock.Advance(time.Minute)
		res = event("prompt", "the tests still fail, fix them", "", "") // after a failed turn: a retry
		b.clock.Advance(time.Minute)
		event("prompt", "thanks, also update the docs", "", "") // after a clean turn: not a retry
		b.clock.Advance(2 * time.Minute)
		res = event("stop", "", "", "")
		task := res.Task
		if task.Description != "Add OAuth login" || task.Prompts != 3 || task.ToolCalls != 2 || task.ToolFailures != 1 ||
			task.RetryCount != 1 || task.ErrorCount != 1 || task.DurationMs != (7*time.Minute).Milliseconds() {
			t.Fatalf("task %+v", task)
		}
		b.clock.Advance(5 * time.Minute) // recording later does not stretch the duration
		out, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "session-1", Success: ptr(true), Patterns: []string{"Split by feature"}})
		if err != nil {
			t.Fatal(err)
		}
		o := out.Outcome
		if o.DurationMs != (7*time.Minute).Milliseconds() || o.RetryCount != 1 || o.ErrorCount != 1 || o.ErrorCountSource != "accumulator" {
			t.Errorf("outcome from the task: duration %d retries %d errors %d (%s)", o.DurationMs, o.RetryCount, o.ErrorCount, o.ErrorCountSource)
		}
		if out.Task == nil || out.Task.EndedAt == nil {
			t.Errorf("the outcome must end the task: %+v", out.Task)
		}
		open, err := b.e.ListTasks(ctx, kaizen.TaskQuery{OpenOnly: true})
		if err != nil || open.Total != 0 {
			t.Errorf("open tasks after the outcome: %+v %v", open, err)
		}
		// A task has one outcome: the same report again changes nothing,
		// different values are a conflict.
		again, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "session-1", Success: ptr(true), Patterns: []string{"Split by feature"}})
		if err != nil || !again.Unchanged || again.Outcome.ID != o.ID {
			t.Errorf("the same outcome again: %+v %v", again, err)
		}
		_, err = b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "session-1", Success: ptr(true), DurationMs: ptr(int64(5))})
		if kaizen.KindOf(err) != kaizen.KindConflict || !strings.Contains(err.Error(), "duration_ms") {
			t.Errorf("different values: %v, want a conflict naming duration_ms", err)
		}
		if list, err := b.e.ListOutcomes(ctx, kaizen.OutcomeQuery{TaskID: "session-1"}); err != nil || list.Total != 1 {
			t.Errorf("outcomes of the task: %+v %v", list, err)
		}
		// Given values win over the task's.
		event2 := func() {
			if _, err := b.e.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "session-2", Kind: "start"}); err != nil {
				t.Fatal(err)
			}
		}
		event2()
		out, err = b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "session-2", Success: ptr(true), DurationMs: ptr(int64(5)), RetryCount: ptr(0)})
		if err != nil || out.Outcome.DurationMs != 5 || out.Outcome.RetryCount != 0 {
			t.Errorf("explicit values: %+v %v", out, err)
		}
	})
}

func TestUntrackedTaskNeedsDuration(t *testing.T) {
	b := setup(t, "memory")
	_, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "never-seen", Success: ptr(true)})
	var ke *kaizen.Error
	if kaizen.KindOf(err) != kaizen.KindInvalid || !asError(err, &ke) || ke.Field != "duration_ms" || !strings.Contains(ke.Hint, "track") {
		t.Fatalf("got %v", err)
	}
	for _, in := range []kaizen.TaskEventInput{
		{TaskID: "", Kind: "start"},
		{TaskID: "s", Kind: "explode"},
		{TaskID: "s", Kind: "prompt", Timestamp: "2099-01-01T00:00:00Z"},
		{TaskID: "s", Kind: "tool", ToolName: "a\nb"},
	} {
		if _, err := b.e.RecordTaskEvent(ctx, in); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("%+v: %v", in, err)
		}
	}
	if l, _ := b.e.ListTasks(ctx, kaizen.TaskQuery{}); l.Total != 0 {
		t.Errorf("invalid events created %d tasks", l.Total)
	}
	if _, err := b.e.GetTask(ctx, "", "s"); kaizen.KindOf(err) != kaizen.KindNotFound {
		t.Errorf("get missing task: %v", err)
	}
}
