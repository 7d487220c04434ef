package viewer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// inferredSession feeds a hook session that ends without a reported
// outcome and closes it as the hooks do at the session's end: kaizen
// records its outcome, inferred from the session's signals.
func inferredSession(t *testing.T, b *testBundle, id string) {
	t.Helper()
	ctx := context.Background()
	for _, ev := range []kaizen.TaskEventInput{
		{Kind: "start", Text: "Rename the config loader"},
		{Kind: "prompt", Text: "Rename the config loader and update its callers"},
		{Kind: "tool", ToolName: "Edit"},
		{Kind: "tool", ToolName: "Bash"},
	} {
		ev.TaskID, ev.Source = id, "claude"
		if _, err := b.engine.RecordTaskEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
		b.clock.Set(b.clock.Now().Add(2 * time.Minute))
	}
	res, err := b.engine.CloseTask(ctx, kaizen.CloseTaskInput{TaskID: id, Reason: "session_end"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome == nil || !res.Outcome.Outcome.Inferred {
		t.Fatalf("closing %s recorded no inferred outcome: %+v", id, res)
	}
}

// TestTasksInferredOutcome: a hook session closed without a reported
// outcome is listed with its inferred outcome, marked so (with what it was
// inferred from), on the tasks list, its page and the outcomes page.
func TestTasksInferredOutcome(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock)
	inferredSession(t, b, "claude-b41d02")
	r := b.must(b.get("/tasks"), http.StatusOK)
	contains(t, "tasks", r.body, `href="/tasks/claude-b41d02?project=proj">claude-b41d02</a>`, "Rename the config loader",
		`<span class="muted known-inferred" title="inferred from: `, ">inferred</span>")
	contains(t, "inferred filter", b.must(b.get("/tasks?status=closed"), http.StatusOK).body, "claude-b41d02")
	contains(t, "task page", b.must(b.get("/tasks/claude-b41d02"), http.StatusOK).body, ">inferred</span>")
	contains(t, "outcomes", b.must(b.get("/outcomes"), http.StatusOK).body, "claude-b41d02", ">inferred</span>")
}
