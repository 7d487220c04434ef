package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

func init() { register(outcomeCommand) }

func outcomeCommand(a *app) *cobra.Command {
	return group("outcome", "Record and inspect task outcomes",
		outcomeRecordCommand(a), outcomeListCommand(a), outcomeShowCommand(a))
}

// outcomeFieldFlags are the flags that set a field of the outcome; they
// cannot be combined with --input.
var outcomeFieldFlags = []string{
	"bead-id", "duration-ms", "duration", "error-count", "retry-count", "success", "files",
	"strategy", "failure-mode", "failure-details", "timestamp", "pattern", "criterion", "description",
}

func outcomeRecordCommand(a *app) *cobra.Command {
	var (
		in                           kaizen.OutcomeInput
		input                        string
		durationMs                   int64
		duration                     time.Duration
		errorCount, retryCount       int
		success                      bool
		files, criteria, patternRefs []string
	)
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Score a finished task and learn from it",
		Long: `Record the outcome of a finished task: kaizen scores it (helpful, neutral or
harmful), stores one feedback event per criterion, and records an
observation of every pattern the task used, inverting patterns that fail
too often into anti-patterns.

Give the fields as flags, or as one JSON object with the seed's field names
(bead_id, duration_ms, error_count, retry_count, success, files_touched,
strategy, failure_mode, failure_details, timestamp, patterns, criteria,
description) with --input FILE, or --input - for standard input.

When --error-count is omitted, the number of errors recorded for the task
with 'kaizen error record' is used.`,
		Example: `  kaizen outcome record --bead-id bd-123.1 --duration 3m --success --files src/auth.ts --strategy "Split by file type"
  kaizen outcome record --bead-id bd-123.2 --duration-ms 2400000 --retry-count 2 --success=false --failure-details "type error"
  echo '{"bead_id":"bd-123.1","duration_ms":180000,"success":true}' | kaizen outcome record --input -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if input != "" {
				if name := firstChanged(f, outcomeFieldFlags); name != "" {
					return usageError{fmt.Errorf("--%s cannot be combined with --input: put the field in the JSON object", name)}
				}
				var err error
				if in, err = readJSONInput(a, input, kaizen.ParseOutcomeInput); err != nil {
					return err
				}
			} else {
				if !f.Changed("success") {
					return usageError{fmt.Errorf("--success is required: --success for a task that succeeded, --success=false for one that failed")}
				}
				in.Success = &success
				switch {
				case f.Changed("duration-ms") && f.Changed("duration"):
					return usageError{fmt.Errorf("give --duration-ms or --duration, not both")}
				case f.Changed("duration-ms"):
					in.DurationMs = &durationMs
				case f.Changed("duration"):
					ms := duration.Milliseconds()
					in.DurationMs = &ms
				}
				if f.Changed("error-count") {
					in.ErrorCount = &errorCount
				}
				if f.Changed("retry-count") {
					in.RetryCount = &retryCount
				}
				in.FilesTouched, in.Criteria, in.Patterns = files, criteria, patternRefs
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.RecordOutcome(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printOutcomeResult(w, res) })
		},
	}
	f := cmd.Flags()
	beadIDFlag(cmd, &in.TaskID, "the task (bead) the outcome is for")
	f.Int64Var(&durationMs, "duration-ms", 0, "time from start to completion in milliseconds")
	f.DurationVar(&duration, "duration", 0, "time from start to completion as a Go duration (3m20s), instead of --duration-ms")
	f.IntVar(&errorCount, "error-count", 0, "errors met (default: the errors recorded for the task)")
	f.IntVar(&retryCount, "retry-count", 0, "retry attempts")
	f.BoolVar(&success, "success", false, "the task succeeded (required: --success or --success=false)")
	f.StringSliceVar(&files, "files", nil, "files touched (repeatable, or comma-separated)")
	f.StringVar(&in.Strategy, "strategy", "", "decomposition strategy used (counts as a pattern used)")
	f.StringVar(&in.FailureMode, "failure-mode", "", "failure classification when --success=false ("+joinModes()+")")
	f.StringVar(&in.FailureDetails, "failure-details", "", "error context of a failure (classifies the failure mode when none is given)")
	f.StringVar(&in.Timestamp, "timestamp", "", "when the task finished, RFC 3339 (default now)")
	f.StringArrayVar(&patternRefs, "pattern", nil, "pattern used, by id or content (repeatable)")
	f.StringSliceVar(&criteria, "criterion", nil, "criterion judged (repeatable; default type_safe, no_bugs, patterns, readable)")
	f.StringVar(&in.Description, "description", "", "decomposition description; strategies found in it count as patterns used")
	f.StringVar(&in.Task, "task-description", "", "what the task was (default: a tracked task's first prompt); plan guidance learns from similar tasks")
	f.StringArrayVar(&in.Tags, "tag", nil, "what kind of task it was, e.g. migration or bugfix (repeatable)")
	f.StringVar(&input, "input", "", "read the outcome as a JSON object from FILE, or - for standard input")
	return cmd
}

func joinModes() string {
	s := make([]string, len(learning.FailureModes))
	for i, m := range learning.FailureModes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func printOutcomeResult(w io.Writer, res *kaizen.OutcomeResult) error {
	o := res.Outcome
	sc := o.Score
	switch {
	case res.Unchanged:
		fmt.Fprintf(w, "Task %s already has outcome %s (project %s): nothing recorded\n\n", o.TaskID, o.ID, o.Project)
	case res.Replaced != "":
		fmt.Fprintf(w, "Recorded outcome %s of task %s (project %s), replacing the inferred outcome %s\n\n", o.ID, o.TaskID, o.Project, res.Replaced)
	default:
		fmt.Fprintf(w, "Recorded outcome %s of task %s (project %s)\n\n", o.ID, o.TaskID, o.Project)
	}
	if o.Inferred {
		fmt.Fprintf(w, "inferred by kaizen: %s\n\n", o.Inference)
	}
	t := table(w)
	fmt.Fprintf(t, "score:\t%.2f %s\n", sc.Raw, strings.ToUpper(string(sc.Type)))
	fmt.Fprintf(t, "reasoning:\t%s\n", sc.Reasoning)
	fmt.Fprintf(t, "signals:\tsuccess %.1f, duration %.1f, errors %.1f, retries %.1f\n", sc.Success, sc.Duration, sc.Errors, sc.Retries)
	src := "given"
	if o.ErrorCountSource == "accumulator" {
		src = "from the error accumulator"
	}
	fmt.Fprintf(t, "error_count:\t%d (%s)\n", o.ErrorCount, src)
	fmt.Fprintf(t, "duration:\t%s, %d retries\n", time.Duration(o.DurationMs)*time.Millisecond, o.RetryCount)
	if tk := res.Task; tk != nil {
		fmt.Fprintf(t, "tracked task:\t%d prompts, %d tool calls (%d failed), %s; the outcome's duration and retries come from it unless given\n",
			tk.Prompts, tk.ToolCalls, tk.ToolFailures, time.Duration(tk.DurationMs)*time.Millisecond)
	}
	if o.FailureMode != "" {
		fmt.Fprintf(t, "failure_mode:\t%s\n", o.FailureMode)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(res.Weighted) > 0 {
		fmt.Fprintf(w, "\nCriteria (stored %d feedback events):\n", len(res.Feedback))
		t := table(w)
		fmt.Fprintln(t, "  CRITERION\tWEIGHT\tWEIGHTED SCORE")
		for _, ws := range res.Weighted {
			fmt.Fprintf(t, "  %s\t%.2f\t%.2f\n", ws.Criterion, ws.Weight, ws.Weighted)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(res.Patterns) > 0 {
		fmt.Fprintln(w, "\nPattern updates:")
		t := table(w)
		fmt.Fprintln(t, "  PATTERN\tOBSERVED\tSTATE\tSUCCESS/FAILURE\tMULTIPLIER\tCONTENT")
		for _, u := range res.Patterns {
			obs := "failure"
			if u.Success {
				obs = "success"
			}
			content := oneLine(u.Content)
			if u.Created {
				content += " (new)"
			}
			fmt.Fprintf(t, "  %s\t%s (%s)\t%s\t%d/%d\t%.1f\t%s\n", u.ID, obs, u.FeedbackType,
				stateChange(u.StateBefore, u.StateAfter), u.SuccessCount, u.FailureCount, u.Multiplier, content)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	for _, inv := range res.Inversions {
		fmt.Fprintf(w, "\n!! INVERTED %s into anti-pattern %s: %s\n!! %s\n",
			inv.Original.ID, inv.Inverted.ID, inv.Reason, inv.Inverted.Content)
	}
	for _, u := range res.Patterns {
		if u.AntiPattern != nil && !u.AntiPattern.New {
			fmt.Fprintf(w, "\n!! %s remains an anti-pattern: %s\n", u.ID, u.AntiPattern.Content)
		}
	}
	return nil
}

func stateChange(before, after learning.MaturityState) string {
	if before == after {
		return string(after)
	}
	return string(before) + " → " + string(after)
}

func outcomeListCommand(a *app) *cobra.Command {
	var q kaizen.OutcomeQuery
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List recorded outcomes, newest first",
		Example: `  kaizen outcome list --bead-id bd-123.1 --limit 10`,
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "outcomes", "ID\tBEAD_ID\tSUCCESS\tDURATION\tERRORS\tRETRIES\tSCORE\tTYPE\tTIMESTAMP",
			func(ctx context.Context, e *kaizen.Engine) (listed[learning.Outcome], error) {
				l, err := e.ListOutcomes(ctx, q)
				if err != nil {
					return listed[learning.Outcome]{}, err
				}
				return listed[learning.Outcome]{l, l.Items, l.Total}, nil
			}, func(o learning.Outcome) string {
				return fmt.Sprintf("%s\t%s\t%t\t%s\t%d\t%d\t%.2f\t%s\t%s", o.ID, o.TaskID, o.Success,
					time.Duration(o.DurationMs)*time.Millisecond, o.ErrorCount, o.RetryCount,
					o.Score.Raw, o.Score.Type, o.Timestamp.Format(time.RFC3339))
			}),
	}
	beadIDFlag(cmd, &q.TaskID, "only outcomes of this task")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func outcomeShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "show ID",
		Short:   "Show one outcome with its score",
		Example: `  kaizen outcome show out-01jf3x9k2m7q8r4t5v6w7x8y9z`,
		Args:    exactArgs(1, "the outcome id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			o, err := e.GetOutcome(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(o, func(w io.Writer) error {
				t := table(w)
				fmt.Fprintf(t, "id:\t%s\n", o.ID)
				fmt.Fprintf(t, "project:\t%s\n", o.Project)
				fmt.Fprintf(t, "bead_id:\t%s\n", o.TaskID)
				fmt.Fprintf(t, "success:\t%t\n", o.Success)
				fmt.Fprintf(t, "duration_ms:\t%d (%s)\n", o.DurationMs, time.Duration(o.DurationMs)*time.Millisecond)
				fmt.Fprintf(t, "error_count:\t%d (%s)\n", o.ErrorCount, o.ErrorCountSource)
				fmt.Fprintf(t, "retry_count:\t%d\n", o.RetryCount)
				fmt.Fprintf(t, "files_touched:\t%s\n", strings.Join(o.FilesTouched, ", "))
				optional(t, "strategy", o.Strategy)
				optional(t, "failure_mode", string(o.FailureMode))
				optional(t, "failure_details", oneLine(o.FailureDetails))
				fmt.Fprintf(t, "patterns:\t%s\n", strings.Join(o.Patterns, ", "))
				fmt.Fprintf(t, "criteria:\t%s\n", strings.Join(o.Criteria, ", "))
				fmt.Fprintf(t, "score:\t%.2f %s\n", o.Score.Raw, o.Score.Type)
				fmt.Fprintf(t, "reasoning:\t%s\n", o.Score.Reasoning)
				fmt.Fprintf(t, "timestamp:\t%s\n", o.Timestamp.Format(time.RFC3339Nano))
				fmt.Fprintf(t, "recorded_at:\t%s\n", o.RecordedAt.Format(time.RFC3339Nano))
				return t.Flush()
			})
		},
	}
}

// Helpers shared by the command files.

// group returns a parent command for subcommands. Run without a
// subcommand, or with an unknown one, it is a usage error.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q (one of: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))}
			}
			return usageError{fmt.Errorf("%q needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", "))}
		},
	}
	c.AddCommand(subs...)
	return c
}

// exactArgs requires n non-blank positional arguments; anything else is a
// usage error (cobra's own validators return errors that map to exit 1).
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s expects %s, got %d arguments%s", cmd.CommandPath(), what, len(args), boolHint(args))}
		}
		for _, s := range args {
			if strings.TrimSpace(s) == "" {
				return usageError{fmt.Errorf("%s expects %s, got a blank argument", cmd.CommandPath(), what)}
			}
		}
		return nil
	}
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q%s", cmd.CommandPath(), args[0], boolHint(args))}
	}
	return nil
}

// boolHint explains the common mistake `--success false`.
func boolHint(args []string) string {
	for _, s := range args {
		if s == "true" || s == "false" {
			return " (write a boolean flag as --flag=" + s + ")"
		}
	}
	return ""
}

// beadIDFlag defines --bead-id (alias --task) on cmd.
func beadIDFlag(cmd *cobra.Command, v *string, usage string) {
	cmd.Flags().StringVar(v, "bead-id", "", usage+" (alias --task)")
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "task" {
			name = "bead-id"
		}
		return pflag.NormalizedName(name)
	})
}

// pageFlags defines --limit and --offset.
func pageFlags(cmd *cobra.Command, limit, offset *int) {
	cmd.Flags().IntVar(limit, "limit", 50, "maximum number of items (1-1000)")
	cmd.Flags().IntVar(offset, "offset", 0, "items to skip")
}

// checkPage applies the REST API's bounds to --limit and --offset, so both
// surfaces reject the same pages (the engine would clamp them silently).
func checkPage(limit, offset int) error {
	if limit < 1 || limit > 1000 {
		return usageError{fmt.Errorf("--limit must be between 1 and 1000, got %d", limit)}
	}
	if offset < 0 {
		return usageError{fmt.Errorf("--offset must be >= 0, got %d", offset)}
	}
	return nil
}

// firstChanged returns the first of names set on the command line, or "".
func firstChanged(f *pflag.FlagSet, names []string) string {
	for _, n := range names {
		if f.Changed(n) {
			return n
		}
	}
	return ""
}

// readJSONInput parses the JSON object in the file named by path, or in
// standard input for "-".
func readJSONInput[T any](a *app, path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	r, closeFn, err := openInput(a, path)
	if err != nil {
		return zero, err
	}
	defer closeFn()
	return parse(r)
}

// openInput opens the file named by path, or standard input for "-".
func openInput(a *app, path string) (io.Reader, func(), error) {
	if path == "-" {
		return a.stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("cannot read input: %w", err)}
	}
	return f, func() { f.Close() }, nil
}

// printList prints a page of items as a table with a header line and a
// count, or a short note when the page is empty.
// listed is a list command's result: what --json prints, its items and
// the total count.
type listed[T any] struct {
	result any
	items  []T
	total  int64
}

// runList is the RunE of a list command: it checks the page flags, calls
// list on the engine, and prints the result as JSON, or as a table with a
// row per item under header.
func runList[T any](a *app, limit, offset *int, noun, header string,
	list func(context.Context, *kaizen.Engine) (listed[T], error), row func(T) string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := checkPage(*limit, *offset); err != nil {
			return err
		}
		e, err := a.open(cmd.Context())
		if err != nil {
			return err
		}
		res, err := list(cmd.Context(), e)
		if err != nil {
			return err
		}
		return a.print(res.result, func(w io.Writer) error {
			return printList(w, noun, header, res.items, res.total, row)
		})
	}
}

func printList[T any](w io.Writer, noun, header string, items []T, total int64, row func(T) string) error {
	if len(items) == 0 {
		_, err := fmt.Fprintf(w, "No %s (%d in total).\n", noun, total)
		return err
	}
	t := table(w)
	fmt.Fprintln(t, header)
	for _, it := range items {
		fmt.Fprintln(t, row(it))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d of %d %s\n", len(items), total, noun)
	return err
}

// table returns a writer aligning tab-separated columns.
func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// optional writes a "key:\tvalue" line when value is set.
func optional(w io.Writer, key, value string) {
	if value != "" {
		fmt.Fprintf(w, "%s:\t%s\n", key, value)
	}
}

// oneLine collapses whitespace so free text stays on one table row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// formatTime formats an optional time.
func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
