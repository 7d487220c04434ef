package mcp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

func init() {
	wantRequired["trace_check"] = []string{"command"}
	wantRequired["trace_record"] = []string{"trace"}
	wantRequired["trace_verify"] = []string{"expectation", "observation"}
	wantRequired["trace_review"] = []string{"bead_id"}
	wantRequired["list_failure_patterns"] = nil
	wantRequired["list_traces"] = nil
}

// exerciseTraceTools calls every failure-learning tool: a trace recorded
// whole teaches a pattern, which the check, the verdict and the lists show.
func exerciseTraceTools(t *testing.T, b *testBundle) {
	t.Helper()
	at := func(s int) string { return time.Date(2026, 1, 2, 9, 0, s, 0, time.UTC).Format(time.RFC3339) }
	fail := "Traceback (most recent call last):\n  File \"app/load.py\", line 3, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'"
	attempt := func(i int) map[string]any {
		return map[string]any{"index": i, "timestamp": at(i), "context": map[string]any{"command": "python app/load.py"}, "error": fail}
	}
	var rec kaizen.RecordTraceResult
	text := b.ok("trace_record", map[string]any{"trace": map[string]any{"task_id": "tr-task", "attempts": []map[string]any{
		attempt(1), attempt(2), {"index": 3, "timestamp": at(3), "context": map[string]any{"command": "python app/load.py"},
			"success": true, "fix_applied": "pip install pyyaml", "fix_source": "self_correction"}}}}, &rec)
	if len(rec.Learned) != 1 || !strings.Contains(text, "Learned failure pattern") {
		t.Errorf("trace_record: %s", text)
	}
	var chk kaizen.TraceCheckResult
	text = b.ok("trace_check", map[string]any{"command": "python app/load.py", "session_id": "mcp-s"}, &chk)
	if len(chk.Warnings) != 1 || !strings.Contains(text, "pyyaml") || !strings.Contains(text, "not instructions") {
		t.Errorf("trace_check: %s", text)
	}
	var v kaizen.TraceVerdict
	text = b.ok("trace_verify", map[string]any{"command": "python app/load.py", "expectation": map[string]any{"exit_code": 0},
		"observation": map[string]any{"exit_code": 1, "output": fail}}, &v)
	if v.Action != "correct" || len(v.Fixes) != 1 || !strings.Contains(text, "pyyaml") {
		t.Errorf("trace_verify: %s", text)
	}
	var rev struct {
		Traces int `json:"traces"`
	}
	b.ok("trace_review", map[string]any{"bead_id": "tr-task"}, &rev)
	if rev.Traces != 1 {
		t.Errorf("trace_review: %+v", rev)
	}
	var pats kaizen.FailurePatternList
	b.ok("list_failure_patterns", map[string]any{"command_family": "python app/load.py"}, &pats)
	var trs kaizen.TraceList
	b.ok("list_traces", map[string]any{"bead_id": "tr-task"}, &trs)
	if pats.Total != 1 || trs.Total != 1 {
		t.Errorf("lists: %d patterns, %d traces", pats.Total, trs.Total)
	}
}

func TestTraceTools(t *testing.T) {
	t.Parallel()
	b := setup(t)
	exerciseTraceTools(t, b)
	if msg := b.fail("trace_check", map[string]any{"command": ""}); !strings.Contains(msg, "command") {
		t.Errorf("empty command: %s", msg)
	}
	if msg := b.fail("trace_review", map[string]any{"bead_id": "nothing"}); !strings.Contains(msg, "not_found") {
		t.Errorf("review without traces: %s", msg)
	}
}
