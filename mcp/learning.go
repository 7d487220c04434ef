package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// The learning system's tools (seed 000): outcomes, patterns and their
// maturity, anti-patterns, criteria, strategy extraction, the error
// accumulator and plan guidance. Each calls one engine method.

func init() { registerTools(learningTools) }

// Inputs of the engine methods that take positional arguments.
type (
	projectInput struct {
		Project string `json:"project,omitempty"`
	}
	patternInput struct {
		Project string `json:"project,omitempty"`
		Pattern string `json:"pattern"`
	}
	criterionInput struct {
		Project   string `json:"project,omitempty"`
		Criterion string `json:"criterion"`
	}
	idInput struct {
		Project string `json:"project,omitempty"`
		ID      string `json:"id"`
	}
	taskInput struct {
		Project string `json:"project,omitempty"`
		TaskID  string `json:"bead_id"`
	}
	errorContextInput struct {
		Project         string `json:"project,omitempty"`
		TaskID          string `json:"bead_id"`
		IncludeResolved bool   `json:"include_resolved,omitempty"`
	}
	extractInput struct {
		Description string `json:"description"`
	}
)

// Results that are not a single engine type (structured content must be
// an object).
type (
	extraction struct {
		// Strategies found, in the seed's fixed order.
		Strategies []learning.Extracted `json:"strategies"`
		// Labels are the strategies' labels in the language they were
		// found in: the pattern names to pass to record_outcome.
		Labels []string `json:"labels"`
	}
	errorStats struct {
		TaskID string `json:"bead_id"`
		learning.ErrorStats
	}
)

// deref turns an engine result pointer into the value to return.
func deref[T any](p *T, err error) (T, error) {
	if err != nil || p == nil {
		var zero T
		return zero, err
	}
	return *p, nil
}

func enumOf[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

var (
	errorTypes   = enumOf(learning.ErrorTypes)
	failureModes = enumOf(learning.FailureModes)
	states       = []string{string(learning.Candidate), string(learning.Established), string(learning.Proven), string(learning.Deprecated)}
	kinds        = []string{string(learning.KindPattern), string(learning.KindAntiPattern)}
)

// maxDurationMs is the engine's upper bound of duration_ms (one year).
const maxDurationMs = float64(kaizen.MaxDurationMs)

const maxCount = kaizen.MaxCount

func learningTools() []*toolDef {
	return []*toolDef{
		define(toolDef{
			name:  "plan_guidance",
			title: "Plan guidance from past outcomes",
			description: "Call this before you plan or decompose a task. It returns what this project has learned: " +
				"decomposition patterns ranked by evidence (proven first, with success rates), anti-patterns to avoid with their failure rates, " +
				"warnings when the approach you describe in `task` uses an anti-pattern or a deprecated pattern, criterion weights, " +
				"a recommendation for this task ranked from the outcomes of similar past tasks (`recommended`, `avoid`, `similar_tasks`), " +
				"and the unresolved errors of `bead_id`. The text is markdown to put into your planning context; " +
				"it is evidence from past outcomes to weigh, not an instruction. The structured result has every number behind the ranking.",
			effect: readOnly,
			fields: map[string]field{
				"task": {desc: "The task, or better your planned decomposition, in a few sentences (English or Chinese). " +
					"Strategies it mentions are flagged, and a warning is raised when one of them is an anti-pattern."},
				"bead_id": {desc: "Id of the task being planned; its unresolved errors (recorded with record_error) are included. Optional."},
				"limit":   intField("Maximum number of ranked patterns, excluded patterns and anti-patterns each (default 10, at most 1000).", 0, 1000),
				"tags": {desc: "What kind of task this is, e.g. [\"migration\", \"frontend\"]: strategies are ranked from past " +
					"outcomes of tasks with the same tags or a similar description (at most 20 tags)."},
				"kind": {desc: "The kind of task: migration, ui, api, refactor, bugfix, performance, data, testing, security, docs, " +
					"infra or dependency. Optional: by default it is inferred from `task`; past tasks of the same kind count as similar."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.PlanInput) (learning.Guidance, error) {
			return deref(e.PlanGuidance(ctx, in))
		}, func(g learning.Guidance) string { return g.Markdown() }),

		define(toolDef{
			name:  "record_outcome",
			title: "Record a task outcome",
			description: "Call this once when a task ends, whether it succeeded or failed. kaizen scores the outcome from its duration, " +
				"error count, retries and success (helpful, neutral or harmful), updates the weight of each evaluation criterion, and records " +
				"a success or failure for every decomposition pattern the task used; a pattern that keeps failing is turned into an anti-pattern " +
				"that plan_guidance warns about. Name the strategies you used in `patterns` (labels from plan_guidance or extract_patterns), " +
				"in `strategy`, or describe the decomposition in `description`: without them there is nothing to learn about strategies. " +
				"Omit `error_count` to use the errors recorded with record_error for the task. " +
				"Returns the score and its reasoning, each pattern's new counts and maturity, and the anti-patterns this outcome created.",
			effect: additive,
			// inferred is kaizen's own marker for the outcomes it infers
			hidden: []string{"task_id", "inferred"},
			fields: map[string]field{
				"bead_id": {desc: "Id of the finished task (the beads issue id, or any stable id of your task). " +
					"Errors recorded with record_error under the same id are counted when error_count is omitted.", required: true},
				"duration_ms": intField("Time from the start to the end of the task, in milliseconds. By default under 300000 "+
					"(5 minutes) scores as fast and over 1800000 (30 minutes) as slow. Required unless kaizen tracks the task "+
					"(through the client's hooks): then omit it to use the tracked duration.", 0, maxDurationMs),
				"error_count": intField("Number of errors met during the task. Omit it to use the number of errors recorded "+
					"with record_error for this bead_id.", 0, maxCount),
				"retry_count": intField("Number of retries the task needed (0 if it worked the first time). Omit it for a task "+
					"kaizen tracks to use the tracked retries (else 0).", 0, maxCount),
				"success":       {desc: "Whether the task achieved its goal.", required: true},
				"files_touched": {desc: "Paths of the files the task changed."},
				"strategy":      {desc: "The decomposition strategy used, e.g. \"Split by feature\"; it is recorded as a pattern the task used."},
				"failure_mode": {desc: "Why the task failed; only with success=false. Omit it to let kaizen classify failure_details.",
					enum: failureModes},
				"failure_details": {desc: "What went wrong, in a sentence or two (for a failed task)."},
				"timestamp":       {desc: "When the task ended, RFC 3339 (e.g. 2025-01-31T12:00:00Z); default now. Must not be in the future.", format: "date-time"},
				"patterns": {desc: "Decomposition patterns the task used, each by id (pattern-…) or by content " +
					"(e.g. \"Split by file type\", \"Handle shared types first\"). Unknown contents create new patterns. " +
					"Reuse the names from plan_guidance or extract_patterns so that evidence accumulates on the same pattern."},
				"criteria": {desc: "Evaluation criteria this outcome judges (default: type_safe, no_bugs, patterns, readable)."},
				"description": {desc: "How the task was decomposed, in free text (English or Chinese); the standard strategies found in it " +
					"(see extract_patterns) count as patterns used."},
				"task": {desc: "What the task was, in a sentence (its request or issue title); default: the tracked task's first prompt. " +
					"plan_guidance ranks strategies for a new task from the outcomes of similar past tasks."},
				"tags": {desc: "What kind of task it was, e.g. [\"migration\"]; plan_guidance with the same tags uses this outcome " +
					"as evidence for similar tasks (at most 20 tags)."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.OutcomeInput) (kaizen.OutcomeResult, error) {
			return deref(e.RecordOutcome(ctx, in))
		}, outcomeResultText),

		define(toolDef{
			name:  "list_outcomes",
			title: "List recorded outcomes",
			description: "List recorded task outcomes, newest first, optionally for one bead_id, with their scores, durations, errors, " +
				"retries and the patterns used. `total` counts every match; page with limit and offset.",
			effect: readOnly,
			fields: map[string]field{
				"bead_id": {desc: "Only the outcomes of this task. Optional."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.OutcomeQuery) (kaizen.OutcomeList, error) {
			return deref(e.ListOutcomes(ctx, in))
		}, outcomeListText),

		define(toolDef{
			name:        "get_outcome",
			title:       "Show an outcome",
			description: "Show one recorded outcome by its id (out-…, returned by record_outcome and list_outcomes): its signals, score and reasoning, and the patterns it used.",
			effect:      readOnly,
			fields: map[string]field{
				"id": {desc: "The outcome id, e.g. out-01j…", required: true},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in idInput) (learning.Outcome, error) {
			return deref(e.GetOutcome(ctx, in.Project, in.ID))
		}, func(o learning.Outcome) string { return outcomeLine(o) }),

		define(toolDef{
			name:  "observe_pattern",
			title: "Record one pattern observation",
			description: "Record one success or failure of a single decomposition pattern, outside a task outcome (e.g. a reviewer judged " +
				"one strategy). When a task ends, prefer record_outcome: it records every pattern the task used at once and scores the task. " +
				"A new pattern is created from its content. Returns the pattern's counts and maturity and, when this observation inverted it " +
				"(at least 3 observations and 60% failures by default), its anti-pattern.",
			effect: additive,
			fields: map[string]field{
				"pattern": {desc: "The pattern: its id (pattern-…) or its content, e.g. \"Split by file type\"; new content creates the pattern.", required: true},
				"success": {desc: "true when the pattern worked, false when it failed.", required: true},
				"bead_id": {desc: "Id of the task the pattern was used in. Optional; kept as an example task of the pattern."},
				"tags":    {desc: "Tags to give the pattern when it is created."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ObserveInput) (kaizen.ObservationResult, error) {
			return deref(e.ObservePattern(ctx, in))
		}, observationText),

		define(toolDef{
			name:  "list_patterns",
			title: "List patterns and anti-patterns",
			description: "List the project's decomposition patterns and anti-patterns with their maturity (candidate, established, proven, " +
				"deprecated), success and failure counts, and decayed helpful/harmful evidence. Use kind=anti_pattern to see what to avoid " +
				"and state=proven to see what works. `total` counts every match; page with limit and offset.",
			effect: readOnly,
			fields: map[string]field{
				"kind":   {desc: "Only patterns (pattern) or only anti-patterns (anti_pattern).", enum: kinds},
				"state":  {desc: "Only patterns in this maturity state, evaluated now.", enum: states},
				"tag":    {desc: "Only patterns with this tag, e.g. strategy:split-by-feature."},
				"search": {desc: "Only patterns whose content contains this text."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.PatternQuery) (kaizen.PatternList, error) {
			return deref(e.ListPatterns(ctx, in))
		}, patternListText),

		define(toolDef{
			name:  "get_pattern",
			title: "Show a pattern",
			description: "Show everything known about one pattern: counts, maturity, manual state, its anti-pattern when it was inverted, " +
				"and its most recent observations (up to 20).",
			effect: readOnly,
		}, func(ctx context.Context, e *kaizen.Engine, in patternInput) (kaizen.PatternDetail, error) {
			return deref(e.GetPattern(ctx, in.Project, in.Pattern))
		}, patternDetailText),

		define(toolDef{
			name:  "explain_pattern",
			title: "Explain a pattern's state",
			description: "Explain why a pattern is in its maturity state and whether and why it was inverted into an anti-pattern, " +
				"with the numbers and thresholds involved and how many more helpful outcomes would make it proven. " +
				"Useful before promoting, deprecating or resetting a pattern. Given an anti-pattern, explains its source pattern.",
			effect: readOnly,
		}, func(ctx context.Context, e *kaizen.Engine, in patternInput) (learning.PatternExplanation, error) {
			return deref(e.ExplainPattern(ctx, in.Project, in.Pattern))
		}, explanationText),

		define(toolDef{
			name:  "promote_pattern",
			title: "Promote a pattern to proven",
			description: "Mark a pattern proven because it was validated outside kaizen (e.g. a human confirmed the strategy works here): " +
				"guidance then ranks it with the proven multiplier (1.5). The manual state wins over the computed one until reset_pattern. " +
				"Refused for a deprecated pattern: reset it first.",
			effect: idempotent,
			fields: map[string]field{
				"reason": {desc: "Why the pattern is promoted (who validated it, how). Optional but recommended."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ManualInput) (kaizen.ManualResult, error) {
			return deref(e.PromotePattern(ctx, in))
		}, manualText("promoted")),

		define(toolDef{
			name:  "deprecate_pattern",
			title: "Deprecate a pattern",
			description: "Exclude a pattern from guidance (multiplier 0), e.g. because it is known to be wrong for this codebase. " +
				"It stays deprecated until reset_pattern, whatever later outcomes say.",
			effect: idempotent,
			fields: map[string]field{
				"reason": {desc: "Why the pattern must not be used; shown in guidance.", required: true},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ManualInput) (kaizen.ManualResult, error) {
			return deref(e.DeprecatePattern(ctx, in))
		}, manualText("deprecated")),

		define(toolDef{
			name:  "reset_pattern",
			title: "Reset a pattern's evaluation",
			description: "Start a pattern's evaluation over: clears a manual promotion or deprecation, sets its counts and evidence to zero " +
				"and removes its anti-pattern. Past observations stay stored for audit but no longer count. Use it when the code changed " +
				"so much that old evidence about the pattern is misleading.",
			effect: destructive,
		}, func(ctx context.Context, e *kaizen.Engine, in patternInput) (kaizen.ManualResult, error) {
			return deref(e.ResetPattern(ctx, kaizen.ManualInput{Project: in.Project, Pattern: in.Pattern}))
		}, manualText("reset")),

		define(toolDef{
			name:  "criterion_weights",
			title: "Criterion weights",
			description: "List the weight of every evaluation criterion (type_safe, no_bugs, patterns, readable, and any criteria passed " +
				"to record_outcome), learned from outcome feedback with time decay: helpful and harmful evidence, the weight (at least 0.1), " +
				"and whether the criterion is deprecated (weight 0) for being too often harmful.",
			effect: readOnly,
		}, func(ctx context.Context, e *kaizen.Engine, in projectInput) (kaizen.CriterionList, error) {
			l, err := e.ListCriteria(ctx, in.Project)
			if err != nil {
				return kaizen.CriterionList{}, err
			}
			return *l, nil
		}, criterionListText),

		define(toolDef{
			name:        "explain_criterion",
			title:       "Explain a criterion's weight",
			description: "Explain how one criterion's weight was computed: decayed helpful and harmful evidence, whether the floor applies, and whether and why it is deprecated.",
			effect:      readOnly,
			fields: map[string]field{
				"criterion": {desc: "The criterion name, e.g. type_safe (see criterion_weights).", required: true},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in criterionInput) (learning.CriterionExplanation, error) {
			return deref(e.ExplainCriterion(ctx, in.Project, in.Criterion))
		}, criterionExplanationText),

		define(toolDef{
			name:  "extract_patterns",
			title: "Detect strategies in a plan",
			description: "Detect the standard decomposition strategies in a plan or description, in English or Chinese: split by file type, " +
				"component, layer or feature; one file per subtask; handle shared types first; separate API routes; tests alongside the " +
				"implementation or in a separate subtask; maximize parallelization; sequential execution order; respect the dependency chain. " +
				"Pass the returned labels as `patterns` to record_outcome so that outcomes accumulate on consistently named patterns. " +
				"Reads and writes nothing.",
			effect: readOnly,
			fields: map[string]field{
				"description": {desc: "The plan or decomposition description to analyse.", required: true},
			},
		}, func(_ context.Context, e *kaizen.Engine, in extractInput) (extraction, error) {
			ex, err := e.ExtractPatterns(in.Description)
			if err != nil {
				return extraction{}, err
			}
			return extraction{Strategies: ex, Labels: learning.Labels(ex)}, nil
		}, extractionText),

		define(toolDef{
			name:  "record_error",
			title: "Record an error",
			description: "Record an error met while working on a task: a failed build, type error, failing test, tool failure, timeout or " +
				"merge conflict. Errors accumulate per bead_id: error_context turns the unresolved ones into a checklist for the retry, and " +
				"record_outcome counts them when error_count is omitted. Returns the error with its id, for resolve_error.",
			effect: additive,
			fields: map[string]field{
				"bead_id":     {desc: "Id of the task the error belongs to.", required: true},
				"error_type":  {desc: "Kind of error (default unknown).", enum: errorTypes},
				"message":     {desc: "The error message, e.g. \"Type error in src/auth.ts: Property 'token' does not exist\".", required: true},
				"stack_trace": {desc: "Stack trace or compiler output, if any (cut to 100 characters in error_context)."},
				"tool_name":   {desc: "The tool or command that failed, e.g. tsc, go test, Bash."},
				"context":     {desc: "What you were doing when it happened, e.g. \"after adding OAuth types\"."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ErrorInput) (learning.ErrorEntry, error) {
			return deref(e.RecordError(ctx, in))
		}, func(x learning.ErrorEntry) string {
			return fmt.Sprintf("Recorded %s error %s for task %s: %s\nCall resolve_error with id %s once it is fixed; "+
				"error_context shows the task's unresolved errors.", x.Type, x.ID, x.TaskID, oneLine(x.Message), x.ID)
		}),

		define(toolDef{
			name:        "resolve_error",
			title:       "Resolve an error",
			description: "Mark a recorded error as fixed: it leaves the task's retry context (error_context). Resolving an error twice keeps the first resolution time.",
			effect:      idempotent,
			fields: map[string]field{
				"id": {desc: "The error id (err-…), from record_error, error_context or list_errors.", required: true},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in idInput) (learning.ErrorEntry, error) {
			return deref(e.ResolveError(ctx, in.Project, in.ID))
		}, func(x learning.ErrorEntry) string {
			return fmt.Sprintf("Resolved %s error %s of task %s (%s).", x.Type, x.ID, x.TaskID, oneLine(x.Message))
		}),

		define(toolDef{
			name:  "error_context",
			title: "Error context for a retry",
			description: "Call this before retrying a task: returns the task's unresolved errors grouped by type as a markdown " +
				"\"Previous Errors\" block with an action checklist, to put into your context so that the retry does not repeat them.",
			effect: readOnly,
			fields: map[string]field{
				"bead_id":          {desc: "Id of the task.", required: true},
				"include_resolved": {desc: "Also list resolved errors, marked as such (default false)."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in errorContextInput) (kaizen.ErrorContextResult, error) {
			res, err := e.ErrorContext(ctx, in.Project, in.TaskID, in.IncludeResolved)
			if res != nil && res.Errors == nil {
				res.Errors = []learning.ErrorEntry{}
			}
			return deref(res, err)
		}, func(r kaizen.ErrorContextResult) string {
			if r.Markdown == "" {
				return fmt.Sprintf("No unresolved errors recorded for task %s.", r.TaskID)
			}
			return r.Markdown
		}),

		define(toolDef{
			name:  "error_stats",
			title: "Error counts of a task",
			description: "Count a task's recorded errors: total (what record_outcome uses as error_count when it is omitted), " +
				"unresolved, and by type.",
			effect: readOnly,
			fields: map[string]field{
				"bead_id": {desc: "Id of the task.", required: true},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in taskInput) (errorStats, error) {
			s, err := deref(e.ErrorStats(ctx, in.Project, in.TaskID))
			return errorStats{TaskID: in.TaskID, ErrorStats: s}, err
		}, errorStatsText),

		define(toolDef{
			name:  "list_errors",
			title: "List recorded errors",
			description: "List recorded errors, newest first, across tasks or for one bead_id; optionally only unresolved ones, " +
				"one type, or those whose text matches `search`. `total` counts every match; page with limit and offset.",
			effect: readOnly,
			fields: map[string]field{
				"bead_id":         {desc: "Only the errors of this task. Optional."},
				"unresolved_only": {desc: "Only errors not yet resolved (default false)."},
				"error_type":      {desc: "Only errors of this type.", enum: errorTypes},
				"search":          {desc: "Only errors whose message, context or tool contains this text."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ErrorQuery) (kaizen.ErrorList, error) {
			l, err := deref(e.ListErrors(ctx, in))
			if l.Items == nil {
				l.Items = []learning.ErrorEntry{}
			}
			return l, err
		}, errorListText),
	}
}

// --- text renderings: concise, one line per item, agent text collapsed to
// one line so that it cannot break the markdown.

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func stateChange(before, after learning.MaturityState) string {
	if before == after || before == "" {
		return string(after)
	}
	return fmt.Sprintf("%s → %s", before, after)
}

func outcomeResultText(r kaizen.OutcomeResult) string {
	o := r.Outcome
	var b strings.Builder
	fmt.Fprintf(&b, "Recorded outcome %s for task %s (project %s). Score: %s.\n", o.ID, o.TaskID, o.Project, oneLine(o.Score.Reasoning))
	if o.ErrorCountSource == "accumulator" && o.ErrorCount > 0 {
		fmt.Fprintf(&b, "error_count %d was taken from the errors recorded for the task.\n", o.ErrorCount)
	}
	if len(r.Patterns) == 0 {
		b.WriteString("No pattern was named: pass `patterns`, `strategy` or `description` so that kaizen learns which strategies work.\n")
	} else {
		b.WriteString("\nPatterns used:\n")
		for _, u := range r.Patterns {
			created := ""
			if u.Created {
				created = ", new"
			}
			fmt.Fprintf(&b, "- %s (%s%s): %s, %s; maturity %s\n", oneLine(u.Content), u.ID, created,
				plural(u.SuccessCount, "success", "successes"), plural(u.FailureCount, "failure", "failures"),
				stateChange(u.StateBefore, u.StateAfter))
			if a := u.AntiPattern; a != nil && a.New {
				fmt.Fprintf(&b, "  Now an anti-pattern (%s): %s\n", a.ID, oneLine(a.Content))
			}
		}
	}
	return b.String()
}

func outcomeLine(o learning.Outcome) string {
	result := "succeeded"
	if !o.Success {
		result = "failed"
		if o.FailureMode != "" {
			result += " (" + string(o.FailureMode) + ")"
		}
	}
	line := fmt.Sprintf("%s task %s %s: %s, raw score %.2f; %s, %s, %s; at %s", o.ID, o.TaskID, result, o.Score.Type,
		o.Score.Raw, time.Duration(o.DurationMs)*time.Millisecond, plural(int64(o.ErrorCount), "error", "errors"),
		plural(int64(o.RetryCount), "retry", "retries"), o.Timestamp.UTC().Format(time.RFC3339))
	if len(o.Patterns) > 0 {
		line += "; patterns " + strings.Join(o.Patterns, ", ")
	}
	return line
}

func outcomeListText(l kaizen.OutcomeList) string {
	if len(l.Items) == 0 {
		return fmt.Sprintf("No outcomes (total %d).", l.Total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d outcomes, newest first:\n", len(l.Items), l.Total)
	for _, o := range l.Items {
		b.WriteString("- " + outcomeLine(o) + "\n")
	}
	return b.String()
}

func observationText(r kaizen.ObservationResult) string {
	u := r.Update
	what := "failure"
	if u.Success {
		what = "success"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Recorded a %s of %s (%s): %s, %s; maturity %s.\n", what, oneLine(u.Content), u.ID,
		plural(u.SuccessCount, "success", "successes"), plural(u.FailureCount, "failure", "failures"),
		stateChange(u.StateBefore, u.StateAfter))
	if r.Inversion != nil && r.Inversion.New {
		fmt.Fprintf(&b, "It is now an anti-pattern (%s): %s\n", r.Inversion.Inverted.ID, oneLine(r.Inversion.Inverted.Content))
	}
	return b.String()
}

func patternLine(p kaizen.PatternInfo) string {
	return fmt.Sprintf("%s %s (id %s; %s, %s)", oneLine(p.Content), p.Label, p.ID,
		plural(p.SuccessCount, "success", "successes"), plural(p.FailureCount, "failure", "failures"))
}

func patternListText(l kaizen.PatternList) string {
	return listText("patterns", "", l.Items, l.Total, patternLine)
}

// listText is the text of one page of a listing: "n of total <noun><order>:"
// and a line per item, or a sentence saying that nothing matches.
func listText[T any](noun, order string, items []T, total int64, line func(T) string) string {
	if len(items) == 0 {
		return fmt.Sprintf("No %s match (total %d).", noun, total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d %s%s:\n", len(items), total, noun, order)
	for _, it := range items {
		b.WriteString("- " + line(it) + "\n")
	}
	return b.String()
}

func patternDetailText(d kaizen.PatternDetail) string {
	var b strings.Builder
	b.WriteString(patternLine(d.PatternInfo) + "\n")
	if d.Kind != learning.KindAntiPattern {
		m := d.Maturity
		fmt.Fprintf(&b, "Maturity %s (computed %s), multiplier %.1f; decayed helpful %.2f, harmful %.2f.\n",
			m.State, m.ComputedState, m.Multiplier, m.DecayedHelpful, m.DecayedHarmful)
	}
	if d.AntiPattern != nil {
		fmt.Fprintf(&b, "Inverted into anti-pattern %s: %s\n", d.AntiPattern.ID, oneLine(d.AntiPattern.Content))
	}
	if len(d.RecentObservations) > 0 {
		b.WriteString("Recent observations:\n")
		for _, o := range d.RecentObservations {
			what := "failure"
			if o.Success {
				what = "success"
			}
			task := ""
			if o.TaskID != "" {
				task = " in task " + o.TaskID
			}
			fmt.Fprintf(&b, "- %s (%s)%s at %s\n", what, o.Type, task, o.Timestamp.UTC().Format(time.RFC3339))
		}
	}
	return b.String()
}

func explanationText(x learning.PatternExplanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s, multiplier %.1f; %s, %s (failure ratio %.2f).\n", oneLine(x.Pattern.Content), x.Pattern.ID,
		x.Maturity.State, x.Maturity.Multiplier, plural(x.Pattern.SuccessCount, "success", "successes"),
		plural(x.Pattern.FailureCount, "failure", "failures"), x.FailureRatio)
	for _, w := range x.Why {
		b.WriteString("- " + w + "\n")
	}
	return b.String()
}

func manualText(verb string) func(kaizen.ManualResult) string {
	return func(r kaizen.ManualResult) string {
		var b strings.Builder
		fmt.Fprintf(&b, "Pattern %s %s: %s\n", r.Pattern.ID, verb, patternLine(r.Pattern))
		for _, n := range r.Notes {
			b.WriteString("- " + n + "\n")
		}
		return b.String()
	}
}

func criterionListText(l kaizen.CriterionList) string {
	if len(l.Items) == 0 {
		return "No criterion feedback yet: every criterion weighs 1.0 until outcomes are recorded."
	}
	items := slices.Clone(l.Items)
	var b strings.Builder
	fmt.Fprintf(&b, "%d criteria:\n", len(items))
	for _, w := range items {
		note := ""
		if w.Deprecated {
			note = " — deprecated (too often harmful), effective weight 0"
		}
		fmt.Fprintf(&b, "- %s: weight %.2f (decayed helpful %.2f, harmful %.2f; %s, %s, %s)%s\n", w.Criterion, w.Weight,
			w.HelpfulSum, w.HarmfulSum, plural(w.HelpfulCount, "helpful event", "helpful events"),
			plural(w.HarmfulCount, "harmful event", "harmful events"), plural(w.NeutralCount, "neutral event", "neutral events"), note)
	}
	return b.String()
}

func criterionExplanationText(x learning.CriterionExplanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: weight %.2f\n", x.Weight.Criterion, x.Weight.Weight)
	for _, w := range x.Why {
		b.WriteString("- " + w + "\n")
	}
	return b.String()
}

func extractionText(x extraction) string {
	if len(x.Strategies) == 0 {
		return "No standard decomposition strategy found in the description."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %s:\n", plural(int64(len(x.Strategies)), "strategy", "strategies"))
	for i, s := range x.Strategies {
		fmt.Fprintf(&b, "- %s (%s, matched %q)\n", x.Labels[i], s.Key, oneLine(s.Match))
	}
	return b.String()
}

func errorStatsText(s errorStats) string {
	types := make([]string, 0, len(s.ByType))
	for _, t := range learning.ErrorTypes {
		if n := s.ByType[t]; n > 0 {
			types = append(types, fmt.Sprintf("%s %d", t, n))
		}
	}
	text := fmt.Sprintf("Task %s: %s, %d unresolved", s.TaskID, plural(int64(s.Total), "error", "errors"), s.Unresolved)
	if len(types) > 0 {
		text += "; by type: " + strings.Join(types, ", ")
	}
	return text + "."
}

func errorListText(l kaizen.ErrorList) string {
	return listText("errors", ", newest first", l.Items, l.Total, func(x learning.ErrorEntry) string {
		state := "unresolved"
		if x.Resolved {
			state = "resolved"
		}
		tool := ""
		if x.ToolName != "" {
			tool = ", tool " + oneLine(x.ToolName)
		}
		return fmt.Sprintf("%s [%s, %s] task %s: %s (%s%s)", x.ID, x.Type, state, x.TaskID, oneLine(x.Message),
			x.Timestamp.UTC().Format(time.RFC3339), tool)
	})
}
