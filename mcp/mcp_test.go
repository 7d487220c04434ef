package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/mcp"
)

// seedAntiPattern is the seed's example: 2 successes and 5 failures of
// "Split by file type".
const seedAntiPattern = "AVOID: Split by file type. Failed 5/7 times (71% failure rate)"

// wantRequired is the required input of every tool; a tool
// missing here fails TestToolSchemas.
var wantRequired = map[string][]string{
	"gc":                nil,
	"plan_guidance":     nil,
	"record_outcome":    {"bead_id", "success"},
	"list_outcomes":     nil,
	"get_outcome":       {"id"},
	"observe_pattern":   {"pattern", "success"},
	"list_patterns":     nil,
	"get_pattern":       {"pattern"},
	"explain_pattern":   {"pattern"},
	"promote_pattern":   {"pattern"},
	"deprecate_pattern": {"pattern", "reason"},
	"reset_pattern":     {"pattern"},
	"criterion_weights": nil,
	"explain_criterion": {"criterion"},
	"extract_patterns":  {"description"},
	"record_error":      {"bead_id", "message"},
	"resolve_error":     {"id"},
	"error_context":     {"bead_id"},
	"error_stats":       {"bead_id"},
	"list_errors":       nil,
	"explore_start":     {"session_id"},
	"explore_event":     {"session_id", "events"},
	"explore_state":     {"session_id"},
	// the experience system (experience_test.go)
	"capture":            {"bead_id", "turns"},
	"extract_signals":    {"bead_id"},
	"list_signals":       nil,
	"extract_experience": {"bead_id"},
	"get_experience":     {"bead_id"},
	"list_experiences":   nil,
	"extraction_request": {"bead_id"},
	"extraction_submit":  {"bead_id", "result"},
	"list_heuristics":    nil,
	"get_heuristic":      {"heuristic_id"},
	"heuristic_feedback": {"heuristic_id", "verdict"},
	"heuristic_action":   {"heuristic_id", "action"},
	"recall":             {"query"},
	"list_recalls":       nil,
	"list_skills":        nil,
	"get_skill":          {"skill"},
	"generate_skill":     {"bead_id"},
	"set_skill_status":   {"skill", "status"},
}

func TestToolDefinitions(t *testing.T) {
	t.Parallel()
	for _, p := range mcp.DefinitionProblems() {
		t.Error(p)
	}
}

// A task tracked by the client's hooks needs no duration: the outcome
// takes it from the task.
func TestOutcomeOfATrackedTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, kind := range []string{"start", "prompt"} {
		if _, err := b.engine.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "session-1", Kind: kind, Text: "add OAuth"}); err != nil {
			t.Fatal(err)
		}
	}
	var res kaizen.OutcomeResult
	b.ok("record_outcome", map[string]any{"bead_id": "session-1", "success": true, "patterns": []string{"Split by feature"}}, &res)
	if res.Task == nil || res.Outcome.DurationMs < 0 || res.Outcome.RetryCount != 0 {
		t.Errorf("outcome %+v, task %+v", res.Outcome, res.Task)
	}
}

func listTools(t *testing.T, cs *mcpsdk.ClientSession) map[string]*mcpsdk.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcpsdk.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}

func inputSchema(t *testing.T, tool *mcpsdk.Tool) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	remarshal(t, tool.InputSchema, &s)
	return &s
}

func TestToolSchemas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tools := listTools(t, b.session)
	if got, want := len(tools), len(mcp.ToolNames()); got != want {
		t.Errorf("tools/list has %d tools, ToolNames %d", got, want)
	}
	for name := range wantRequired {
		if tools[name] == nil {
			t.Errorf("tool %s is missing", name)
		}
	}
	for name, tool := range tools {
		t.Run(name, func(t *testing.T) {
			want, ok := wantRequired[name]
			if !ok {
				t.Fatalf("tool %s has no entry in wantRequired", name)
			}
			if len(tool.Description) < 80 || tool.Title == "" || tool.Annotations == nil {
				t.Errorf("description %q, title %q, annotations %v: describe the tool for an LLM", tool.Description, tool.Title, tool.Annotations)
			}
			s := inputSchema(t, tool)
			if s.Type != "object" {
				t.Fatalf("input type %q", s.Type)
			}
			if diff := cmp.Diff(want, s.Required); diff != "" && !(len(want) == 0 && len(s.Required) == 0) {
				t.Errorf("required (-want +got):\n%s", diff)
			}
			for pname, p := range s.Properties {
				if len(p.Description) < 10 {
					t.Errorf("property %s has no useful description: %q", pname, p.Description)
				}
				if p.Type == "" {
					t.Errorf("property %s has no single type (%v)", pname, p.Types)
				}
				if p.Type == "integer" && (p.Minimum == nil || *p.Minimum < 0) {
					t.Errorf("integer property %s has no minimum >= 0", pname)
				}
			}
			if name != "extract_patterns" && name != "gc" && s.Properties["project"] == nil { // gc spans every project
				t.Errorf("no project property")
			}
			if _, ok := s.Properties["task_id"]; ok {
				t.Errorf("the task_id alias is advertised; the seed's name is bead_id")
			}
			var out jsonschema.Schema
			remarshal(t, tool.OutputSchema, &out)
			if out.Type != "object" || len(out.Properties) == 0 {
				t.Errorf("output schema %+v is not an object with properties", out)
			}
			readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
			writes := strings.HasPrefix(name, "record_") || slices.Contains([]string{"observe_pattern", "promote_pattern",
				"deprecate_pattern", "reset_pattern", "resolve_error", "explore_start", "explore_event", "forget", "edit_heuristic",
				"trace_check", "trace_record", "trace_review", "gc"}, name) ||
				slices.Contains(experienceWriters, name) || slices.Contains(teamWriters, name)
			if readOnly == writes {
				t.Errorf("readOnlyHint %v for a tool that writes: %v", readOnly, writes)
			}
		})
	}

	// The seed's field names, types and constraints.
	ro := inputSchema(t, tools["record_outcome"])
	for _, f := range []string{"bead_id", "duration_ms", "error_count", "retry_count", "success", "files_touched",
		"strategy", "failure_mode", "failure_details", "patterns", "criteria", "timestamp", "description", "project"} {
		if ro.Properties[f] == nil {
			t.Errorf("record_outcome has no %s", f)
		}
	}
	types := map[string]string{"bead_id": "string", "duration_ms": "integer", "error_count": "integer",
		"retry_count": "integer", "success": "boolean", "files_touched": "array", "patterns": "array", "criteria": "array"}
	for f, typ := range types {
		if got := ro.Properties[f].Type; got != typ {
			t.Errorf("record_outcome.%s has type %q, want %q", f, got, typ)
		}
	}
	if ro.Properties["timestamp"].Format != "date-time" {
		t.Errorf("timestamp format %q", ro.Properties["timestamp"].Format)
	}
	enums := []struct {
		tool, field string
		want        []string
	}{
		{"record_outcome", "failure_mode", []string{"validation", "timeout", "conflict", "tool_failure", "context_overflow",
			"dependency_blocked", "user_cancelled", "unknown"}},
		{"record_error", "error_type", []string{"validation", "timeout", "conflict", "tool_failure", "unknown"}},
		{"list_errors", "error_type", []string{"validation", "timeout", "conflict", "tool_failure", "unknown"}},
		{"list_patterns", "kind", []string{"pattern", "anti_pattern"}},
		{"list_patterns", "state", []string{"candidate", "established", "proven", "deprecated"}},
	}
	for _, e := range enums {
		var got []string
		for _, v := range inputSchema(t, tools[e.tool]).Properties[e.field].Enum {
			got = append(got, v.(string))
		}
		if diff := cmp.Diff(e.want, got); diff != "" {
			t.Errorf("%s.%s enum (-want +got):\n%s", e.tool, e.field, diff)
		}
	}
	for _, name := range []string{"record_error", "plan_guidance", "list_errors", "error_context", "error_stats", "list_outcomes"} {
		if inputSchema(t, tools[name]).Properties["bead_id"] == nil {
			t.Errorf("%s has no bead_id", name)
		}
	}
}

// The seed's inversion example end to end: two successes then five
// failures of "Split by file type" turn it into the anti-pattern the seed
// quotes, visible in list_patterns and plan_guidance.
func TestSeedInversion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, success := range []bool{true, true, false, false, false, false, false} {
		var res kaizen.OutcomeResult
		b.ok("record_outcome", outcome("bd-"+string(rune('a'+i)), success, "Split by file type"), &res)
		if res.Outcome.Project != "test" {
			t.Fatalf("project %q", res.Outcome.Project)
		}
	}
	var list kaizen.PatternList
	text := b.ok("list_patterns", map[string]any{"kind": "anti_pattern"}, &list)
	if list.Total != 1 || len(list.Items) != 1 {
		t.Fatalf("anti-patterns: %+v", list)
	}
	a := list.Items[0]
	if a.Content != seedAntiPattern || a.Kind != learning.KindAntiPattern || !a.IsNegative ||
		a.SuccessCount != 2 || a.FailureCount != 5 || !strings.HasPrefix(a.ID, "anti-pattern-") {
		t.Errorf("anti-pattern %+v", a)
	}
	if !strings.Contains(text, seedAntiPattern) {
		t.Errorf("list text lacks the anti-pattern:\n%s", text)
	}

	var g learning.Guidance
	md := b.ok("plan_guidance", map[string]any{"task": "Add OAuth: split by file type, one file per subtask"}, &g)
	if !strings.Contains(md, "- "+seedAntiPattern) || !strings.Contains(md, "Your plan uses an anti-pattern: "+seedAntiPattern) {
		t.Errorf("guidance markdown:\n%s", md)
	}
	if len(g.AntiPatterns) != 1 || g.AntiPatterns[0].Content != seedAntiPattern || !g.AntiPatterns[0].Mentioned {
		t.Errorf("guidance anti-patterns %+v", g.AntiPatterns)
	}
	if md != g.Markdown() {
		t.Errorf("the text is not the guidance's markdown")
	}
}

// Every registered tool is called end to end on a real engine, and the
// metrics hook sees every call. A new tool fails this test until the
// scenario calls it.
func TestEveryToolEndToEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, func(so *setupOpts) { so.sqlite = true })

	// Errors met while working on bd-43.
	var e1, e2 learning.ErrorEntry
	b.ok("record_error", map[string]any{"bead_id": "bd-43", "error_type": "validation", "message": "Type error in src/auth.ts",
		"tool_name": "tsc", "context": "after adding OAuth types", "stack_trace": "at auth.ts:12"}, &e1)
	b.ok("record_error", map[string]any{"bead_id": "bd-43", "error_type": "timeout", "message": "tests timed out",
		"timestamp": "2025-01-31T12:00:00Z"}, &e2)
	if e1.ID == "" || e1.Type != learning.ErrValidation || e1.TaskID != "bd-43" {
		t.Fatalf("error %+v", e1)
	}
	var ctxRes kaizen.ErrorContextResult
	md := b.ok("error_context", map[string]any{"bead_id": "bd-43"}, &ctxRes)
	for _, want := range []string{"## Previous Errors", "### validation (1 error)", "**Type error in src/auth.ts**",
		"  - Tool: tsc", "**Action Required**"} {
		if !strings.Contains(md, want) {
			t.Errorf("error context lacks %q:\n%s", want, md)
		}
	}
	if len(ctxRes.Errors) != 2 {
		t.Errorf("context errors %+v", ctxRes.Errors)
	}
	var resolved learning.ErrorEntry
	b.ok("resolve_error", map[string]any{"id": e2.ID}, &resolved)
	if !resolved.Resolved || resolved.ResolvedAt == nil {
		t.Errorf("resolved %+v", resolved)
	}
	var stats struct {
		TaskID string `json:"bead_id"`
		learning.ErrorStats
	}
	text := b.ok("error_stats", map[string]any{"bead_id": "bd-43"}, &stats)
	if stats.Total != 2 || stats.Unresolved != 1 || stats.ByType[learning.ErrValidation] != 1 || stats.TaskID != "bd-43" {
		t.Errorf("stats %+v", stats)
	}
	if text != "Task bd-43: 2 errors, 1 unresolved; by type: validation 1, timeout 1." {
		t.Errorf("stats text %q", text)
	}
	var errs kaizen.ErrorList
	b.ok("list_errors", map[string]any{"bead_id": "bd-43", "unresolved_only": true}, &errs)
	if errs.Total != 1 || errs.Items[0].ID != e1.ID {
		t.Errorf("unresolved errors %+v", errs)
	}
	b.ok("error_context", map[string]any{"bead_id": "bd-43", "include_resolved": true}, &ctxRes)
	if !strings.Contains(ctxRes.Markdown, "(resolved)") {
		t.Errorf("resolved errors are not listed:\n%s", ctxRes.Markdown)
	}

	// Plan, then record the outcome; error_count comes from the accumulator.
	var ex struct {
		Strategies []learning.Extracted `json:"strategies"`
		Labels     []string             `json:"labels"`
	}
	b.ok("extract_patterns", map[string]any{"description": "按文件类型拆分,每个子任务一个文件"}, &ex)
	if diff := cmp.Diff([]string{"按文件类型拆分", "每个子任务一个文件"}, ex.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	var g learning.Guidance
	md = b.ok("plan_guidance", map[string]any{"task": "split by feature", "bead_id": "bd-43", "limit": 5}, &g)
	if len(g.OpenErrors) != 1 || !strings.Contains(md, "Type error in src/auth.ts") {
		t.Errorf("guidance lacks the open error: %+v\n%s", g.OpenErrors, md)
	}
	var res kaizen.OutcomeResult
	text = b.ok("record_outcome", map[string]any{"bead_id": "bd-43", "duration_ms": 240000, "retry_count": 1, "success": true,
		"files_touched": []string{"src/auth.ts"}, "strategy": "Split by feature", "patterns": []string{"Handle shared types first"},
		"criteria": []string{"type_safe", "readable"}, "description": "tests alongside implementation"}, &res)
	o := res.Outcome
	if o.ErrorCount != 2 || o.ErrorCountSource != "accumulator" || o.RetryCount != 1 || len(res.Patterns) != 3 ||
		len(res.Feedback) != 2 || o.Project != "test" {
		t.Errorf("outcome %+v, %d pattern updates, %d feedback events", o, len(res.Patterns), len(res.Feedback))
	}
	if !strings.Contains(text, "Recorded outcome "+o.ID+" for task bd-43") || !strings.Contains(text, "Split by feature") {
		t.Errorf("outcome text:\n%s", text)
	}
	var outcomes kaizen.OutcomeList
	b.ok("list_outcomes", map[string]any{"bead_id": "bd-43"}, &outcomes)
	if outcomes.Total != 1 || outcomes.Items[0].ID != o.ID {
		t.Errorf("outcomes %+v", outcomes)
	}
	var got learning.Outcome
	b.ok("get_outcome", map[string]any{"id": o.ID}, &got)
	if got.ID != o.ID || got.DurationMs != 240000 {
		t.Errorf("get_outcome %+v", got)
	}

	// Patterns: observe, inspect, explain, change by hand.
	var obs kaizen.ObservationResult
	b.ok("observe_pattern", map[string]any{"pattern": "Split by feature", "success": true, "bead_id": "bd-44",
		"tags": []string{"auth"}}, &obs)
	if obs.Pattern.SuccessCount != 2 || obs.Update.Created {
		t.Errorf("observation %+v", obs)
	}
	var detail kaizen.PatternDetail
	b.ok("get_pattern", map[string]any{"pattern": obs.Pattern.ID}, &detail)
	if detail.ID != obs.Pattern.ID || len(detail.RecentObservations) != 2 {
		t.Errorf("detail %+v", detail)
	}
	var x learning.PatternExplanation
	text = b.ok("explain_pattern", map[string]any{"pattern": "Split by feature"}, &x)
	if x.Pattern.ID != obs.Pattern.ID || len(x.Why) == 0 || !strings.Contains(text, x.Why[0]) {
		t.Errorf("explanation %+v\n%s", x, text)
	}
	var m kaizen.ManualResult
	b.ok("promote_pattern", map[string]any{"pattern": "Split by feature", "reason": "validated by review"}, &m)
	if m.Pattern.Maturity.State != learning.Proven || !m.Pattern.Maturity.Manual {
		t.Errorf("promoted %+v", m.Pattern.Maturity)
	}
	b.ok("deprecate_pattern", map[string]any{"pattern": "Handle shared types first", "reason": "our types are generated"}, &m)
	if m.Pattern.Maturity.State != learning.Deprecated {
		t.Errorf("deprecated %+v", m.Pattern.Maturity)
	}
	b.ok("reset_pattern", map[string]any{"pattern": "Handle shared types first"}, &m)
	if m.Pattern.Maturity.Manual || m.Pattern.SuccessCount != 0 {
		t.Errorf("reset %+v", m.Pattern)
	}
	var list kaizen.PatternList
	b.ok("list_patterns", map[string]any{"state": "proven", "limit": 10}, &list)
	if list.Total != 1 || list.Items[0].Content != "Split by feature" {
		t.Errorf("proven patterns %+v", list)
	}

	// Criteria.
	var crit struct {
		Items []learning.CriterionWeight `json:"items"`
		Total int                        `json:"total"`
	}
	b.ok("criterion_weights", map[string]any{}, &crit)
	if crit.Total != 2 || crit.Items[0].Criterion != "readable" {
		t.Errorf("criteria %+v", crit)
	}
	var cx learning.CriterionExplanation
	b.ok("explain_criterion", map[string]any{"criterion": "type_safe"}, &cx)
	if cx.Weight.Criterion != "type_safe" || len(cx.Why) == 0 {
		t.Errorf("criterion explanation %+v", cx)
	}

	// An exploration session.
	var xs kaizen.ExploreInfo
	b.ok("explore_start", map[string]any{"session_id": "x-1"}, &xs)
	var xr kaizen.ExploreEventResult
	b.ok("explore_event", exploreRound("x-1", "Read", map[string]any{"path": "src/auth.ts"}), &xr)
	b.ok("explore_state", map[string]any{"session_id": "x-1"}, &xs)
	if xs.Iteration != 1 || xs.Metrics.TotalToolCalls != 1 || xs.Strategy != kaizen.DefaultExploreStrategy {
		t.Errorf("exploration %+v", xs)
	}

	// The experience system, through the agent-as-extractor flow.
	exerciseExperienceTools(t, b)
	exerciseDataTools(t, b)
	exerciseTraceTools(t, b)
	exerciseTeamTools(t, b)

	// The hook saw every tool succeed at least once, with a duration.
	succeeded := map[string]bool{}
	for _, c := range b.calls.snapshot() {
		if c.err == nil {
			succeeded[c.tool] = true
		}
		if c.d <= 0 {
			t.Errorf("%s: duration %v", c.tool, c.d)
		}
	}
	for _, name := range mcp.ToolNames() {
		if !succeeded[name] {
			t.Errorf("tool %s was not called successfully by this test", name)
		}
	}
}

// Bad input is a tool result with isError, naming the field and a hint; it
// is never a protocol error and changes nothing.
func TestInvalidInputIsAToolError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.ok("record_outcome", outcome("bd-1", true, "Split by feature"), nil)
	tests := []struct {
		name  string
		tool  string
		args  any
		wants []string
	}{
		{"negative duration", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": -5, "success": true},
			[]string{`field "duration_ms"`, "must be >= 0, got -5", "Hint:"}},
		{"negative retries", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5, "retry_count": -1, "success": true},
			[]string{`field "retry_count"`, "must be >= 0"}},
		{"negative errors", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5, "error_count": -3, "success": false},
			[]string{`field "error_count"`}},
		{"fractional duration", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 1.5, "success": true},
			[]string{`field "duration_ms"`, "want an integer"}},
		{"duration as text", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": "4m", "success": true},
			[]string{`field "duration_ms"`, "got JSON string"}},
		{"missing bead_id", "record_outcome", map[string]any{"duration_ms": 5, "success": true},
			[]string{`field "bead_id"`, "required"}},
		{"missing duration of an untracked task", "record_outcome", map[string]any{"bead_id": "bd-2", "success": true},
			[]string{`field "duration_ms"`, "is required"}},
		{"missing success", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5},
			[]string{`field "success"`, "is required"}},
		{"no arguments", "record_outcome", nil, []string{`field "bead_id"`}},
		{"bad timestamp", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5, "success": true, "timestamp": "yesterday"},
			[]string{`field "timestamp"`, "not an RFC 3339 time", "Hint: e.g. 2025-01-31T12:00:00Z"}},
		{"future timestamp", "record_error", map[string]any{"bead_id": "bd-2", "message": "x", "timestamp": "2999-01-01T00:00:00Z"},
			[]string{`field "timestamp"`, "in the future"}},
		{"unknown failure mode", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5, "success": false, "failure_mode": "gremlins"},
			[]string{`field "failure_mode"`, "unknown mode", "Hint: one of"}},
		{"failure mode on success", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5, "success": true, "failure_mode": "timeout"},
			[]string{`field "failure_mode"`}},
		{"unknown property", "record_outcome", map[string]any{"bead_id": "bd-2", "duration_ms": 5, "success": true, "durationMs": 5},
			[]string{`field "durationMs"`, "not a property of this tool"}},
		{"arguments not an object", "record_outcome", []any{1, 2}, []string{"arguments must be a JSON object"}},
		{"unknown pattern id", "get_pattern", map[string]any{"pattern": "pattern-doesnotexist"},
			[]string{"(not_found)", `field "pattern"`, `no pattern "pattern-doesnotexist"`, "list_patterns"}},
		{"unknown pattern content", "explain_pattern", map[string]any{"pattern": "Never heard of it"}, []string{"(not_found)"}},
		{"missing pattern", "promote_pattern", map[string]any{}, []string{`field "pattern"`, "required"}},
		{"deprecate without reason", "deprecate_pattern", map[string]any{"pattern": "Split by feature"},
			[]string{`field "reason"`, "is required"}},
		{"observe without success", "observe_pattern", map[string]any{"pattern": "Split by feature"}, []string{`field "success"`}},
		{"unknown error type", "record_error", map[string]any{"bead_id": "bd-2", "error_type": "oops", "message": "x"},
			[]string{`field "error_type"`, "Hint: one of"}},
		{"blank error message", "record_error", map[string]any{"bead_id": "bd-2", "message": "  "}, []string{`field "message"`}},
		{"unknown error id", "resolve_error", map[string]any{"id": "err-nope"}, []string{"(not_found)", `field "id"`}},
		{"unknown outcome id", "get_outcome", map[string]any{"id": "out-nope"}, []string{"(not_found)", `field "id"`}},
		{"unknown criterion", "explain_criterion", map[string]any{"criterion": "speed"}, []string{"(not_found)", `field "criterion"`}},
		{"limit too large", "list_patterns", map[string]any{"limit": 5000}, []string{`field "limit"`}},
		{"negative offset", "list_errors", map[string]any{"offset": -1}, []string{`field "offset"`}},
		{"unknown kind", "list_patterns", map[string]any{"kind": "heuristic"}, []string{`field "kind"`}},
		{"unknown state", "list_patterns", map[string]any{"state": "legendary"}, []string{`field "state"`}},
		{"plan limit", "plan_guidance", map[string]any{"limit": -1}, []string{`field "limit"`}},
		{"empty description", "extract_patterns", map[string]any{"description": ""}, []string{`field "description"`}},
		{"missing task", "error_stats", map[string]any{}, []string{`field "bead_id"`}},
		{"project with a slash", "list_outcomes", map[string]any{"project": "a/b"}, []string{`field "project"`}},
		{"control character", "record_error", map[string]any{"bead_id": "bd-2", "message": "a\x00b"}, []string{`field "message"`, "control character"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := b.fail(tt.tool, tt.args)
			for _, w := range tt.wants {
				if !strings.Contains(text, w) {
					t.Errorf("%s: error text lacks %q:\n%s", tt.tool, w, text)
				}
			}
			if !strings.Contains(text, "Hint:") {
				t.Errorf("no hint:\n%s", text)
			}
		})
	}
	// Nothing was recorded by the rejected calls.
	var outcomes kaizen.OutcomeList
	b.ok("list_outcomes", map[string]any{}, &outcomes)
	var errs kaizen.ErrorList
	b.ok("list_errors", map[string]any{}, &errs)
	if outcomes.Total != 1 || errs.Total != 0 {
		t.Errorf("rejected calls changed state: %d outcomes, %d errors", outcomes.Total, errs.Total)
	}
	// The hook reports the rejected calls as invalid input.
	invalid := 0
	for _, c := range b.calls.snapshot() {
		if kaizen.KindOf(c.err) == kaizen.KindInvalid {
			invalid++
		}
	}
	if invalid < 20 {
		t.Errorf("the hook saw %d invalid calls", invalid)
	}
}

func TestUnknownToolIsAProtocolError(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.session.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "no_such_tool"})
	if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("err = %v", err)
	}
}

// A closed store (the daemon shutting down) is an isError result with a
// retry hint, not a crash.
func TestClosedStore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.engine.Close()
	text := b.fail("list_patterns", map[string]any{})
	if !strings.Contains(text, "store is closed") || !strings.Contains(text, "retry") {
		t.Errorf("text %q", text)
	}
}

func TestProjectResolution(t *testing.T) {
	t.Parallel()
	projectOf := func(t *testing.T, b *testBundle, args map[string]any) string {
		t.Helper()
		var res kaizen.OutcomeResult
		b.ok("record_outcome", args, &res)
		return res.Outcome.Project
	}

	// Clients on protocol 2026-07-28 give their roots by answering an input
	// request (multi round-trip); older ones answer roots/list.
	for _, protocol := range []string{"", "2025-11-25", "2025-06-18"} {
		name := "roots latest protocol"
		if protocol != "" {
			name = "roots " + protocol
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "webapp")
			b := setup(t, func(so *setupOpts) {
				so.roots = []string{root, filepath.Join(t.TempDir(), "second")}
				so.protocol = protocol
			})
			if got := b.session.InitializeResult(); protocol != "" && got.ProtocolVersion != protocol {
				t.Fatalf("negotiated %q", got.ProtocolVersion)
			}
			if p := projectOf(t, b, outcome("bd-1", true)); p != "webapp" {
				t.Errorf("project %q, want the first root's name", p)
			}
			if p := projectOf(t, b, map[string]any{"project": "explicit", "bead_id": "bd-2", "duration_ms": 1, "success": true}); p != "explicit" {
				t.Errorf("the argument does not win: %q", p)
			}
			// The client changes its roots: the next calls follow.
			b.client.RemoveRoots(fileURI(root))
			testkit.Eventually(t, "the notification", func() bool {
				var res kaizen.OutcomeList
				b.ok("list_outcomes", map[string]any{}, &res)
				return res.Total == 0 // now in project "second"
			})
			if p := projectOf(t, b, outcome("bd-3", true)); p != "second" {
				t.Errorf("after the roots changed: %q", p)
			}
			// Each successful call is reported once, not once per round trip.
			n := 0
			for _, c := range b.calls.snapshot() {
				if c.tool == "record_outcome" {
					n++
				}
			}
			if n != 3 {
				t.Errorf("the hook saw %d record_outcome calls, want 3", n)
			}
		})
	}

	t.Run("git root of a root", func(t *testing.T) {
		t.Parallel()
		repo := filepath.Join(t.TempDir(), "monorepo")
		sub := filepath.Join(repo, "services", "api")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		b := setup(t, func(so *setupOpts) { so.roots = []string{sub} })
		if p := projectOf(t, b, outcome("bd-1", true)); p != "monorepo" {
			t.Errorf("project %q, want the git root's name", p)
		}
	})

	t.Run("explicit option wins over roots", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(so *setupOpts) {
			so.roots = []string{filepath.Join(t.TempDir(), "webapp")}
			so.opts.Project = "configured"
		})
		if p := projectOf(t, b, outcome("bd-1", true)); p != "configured" {
			t.Errorf("project %q", p)
		}
	})

	t.Run("no roots capability", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(so *setupOpts) { so.noRoots = true })
		if p := projectOf(t, b, outcome("bd-1", true)); p != "test" {
			t.Errorf("project %q, want the engine default", p)
		}
	})

	t.Run("empty roots", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if p := projectOf(t, b, outcome("bd-1", true)); p != "test" {
			t.Errorf("project %q, want the engine default", p)
		}
	})

	t.Run("projects are isolated", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := range 5 {
			b.ok("record_outcome", map[string]any{"project": "a", "bead_id": fmt.Sprint("bd-", i), "duration_ms": 1, "success": false,
				"patterns": []string{"Split by file type"}}, nil)
		}
		var list kaizen.PatternList
		b.ok("list_patterns", map[string]any{"project": "b"}, &list)
		if list.Total != 0 {
			t.Errorf("project b sees %d patterns of project a", list.Total)
		}
		b.ok("list_patterns", map[string]any{"project": "a", "kind": "anti_pattern"}, &list)
		if list.Total != 1 {
			t.Errorf("project a has %d anti-patterns", list.Total)
		}
	})
}

// A client that declares roots but never answers roots/list costs one
// timeout per session, then the default project. The timeout is long
// enough that a loaded machine still writes the request before it ends
// (with 50 ms the server could give up before the client saw anything);
// the test waits for the client to have seen it, never for a duration.
func TestRootsTimeout(t *testing.T) {
	t.Parallel()
	e := openEngine(t, setupOpts{})
	srv := mcp.NewServer(e, mcp.Options{RootsTimeout: 3 * time.Second})
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "silent", Version: "1"}, nil)
	ct, st := mcpsdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// A middleware that swallows roots/list on the client side.
	var asked atomic.Int32
	client.AddReceivingMiddleware(func(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
		return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
			if method == "roots/list" {
				asked.Add(1)
				select {
				case <-ctx.Done():
				case <-time.After(testkit.Patience):
				}
				return nil, errors.New("not answering")
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(ctx, ct, &mcpsdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 3 {
		res := callTool(t, cs, "record_outcome", outcome("bd-1", true))
		var out kaizen.OutcomeResult
		checkOK(t, nil, "record_outcome", res, &out)
		if out.Outcome.Project != "test" {
			t.Errorf("call %d: project %q", i, out.Outcome.Project)
		}
	}
	testkit.Eventually(t, "the client to see roots/list", func() bool { return asked.Load() >= 1 })
	if n := asked.Load(); n != 1 {
		t.Errorf("roots were asked %d times, want once per session (then the default project)", n)
	}
}

// Arbitrary arguments never crash the server nor turn into protocol
// errors.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `[]`, `"x"`, `{"bead_id":"b","duration_ms":1e30,"success":true}`,
		`{"bead_id":"b","duration_ms":5,"success":true,"timestamp":"2025-02-30T00:00:00Z"}`,
		`{"bead_id":"\u0000","duration_ms":-1}`, `{"pattern":"` + strings.Repeat("x", 2000) + `"}`,
		`{"limit":1e400}`, `{"project":""}`, `{"task":"按文件类型拆分"}`} {
		for _, name := range []string{"record_outcome", "observe_pattern", "plan_guidance", "list_patterns", "record_error"} {
			f.Add(name, s)
		}
	}
	e := openEngineF(f)
	srv := mcp.NewServer(e, mcp.Options{})
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "fuzz", Version: "1"}, &mcpsdk.ClientOptions{Capabilities: &mcpsdk.ClientCapabilities{}})
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer cs.Close()
	names := mcp.ToolNames()
	f.Fuzz(func(t *testing.T, name, args string) {
		if !slices.Contains(names, name) || !json.Valid([]byte(args)) {
			return
		}
		res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s(%s): protocol error %v", name, args, err)
		}
		if len(res.Content) == 0 {
			t.Fatalf("%s(%s): no content", name, args)
		}
		if tc, ok := res.Content[0].(*mcpsdk.TextContent); ok && strings.Contains(tc.Text, "internal error") {
			t.Fatalf("%s(%s): %s", name, args, tc.Text)
		}
	})
}

func openEngineF(f *testing.F) *kaizen.Engine {
	cfg := kaizen.DefaultConfig()
	cfg.Home = f.TempDir()
	cfg.DB = "memory"
	cfg.Project = "fuzz"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	return e
}
