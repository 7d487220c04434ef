package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

func init() { register(errorCommand) }

func errorCommand(a *app) *cobra.Command {
	return group("error", "Accumulate the errors met while executing a task",
		errorRecordCommand(a), errorResolveCommand(a), errorContextCommand(a),
		errorStatsCommand(a), errorListCommand(a))
}

func joinTypes() string {
	s := make([]string, len(learning.ErrorTypes))
	for i, t := range learning.ErrorTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// errorFieldFlags set a field of the error; they cannot be combined with --input.
var errorFieldFlags = []string{"bead-id", "type", "message", "stack-trace", "tool", "context", "timestamp"}

func errorRecordCommand(a *app) *cobra.Command {
	var (
		in    kaizen.ErrorInput
		input string
	)
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Record an error met by a task",
		Long: `Record an error met while executing a task. The task's recorded errors
become its error_count when an outcome is recorded without one, and its
retry context ('kaizen error context').

Give the fields as flags, or as one JSON object with the seed's field names
(bead_id, error_type, message, stack_trace, tool_name, context, timestamp)
with --input FILE, or --input - for standard input.`,
		Example: `  kaizen error record --bead-id bd-123.1 --type validation --message "type error in src/auth.ts" --tool typecheck --context "after adding OAuth types"
  echo '{"bead_id":"bd-123.1","error_type":"timeout","message":"tests timed out"}' | kaizen error record --input -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input != "" {
				if name := firstChanged(cmd.Flags(), errorFieldFlags); name != "" {
					return usageError{fmt.Errorf("--%s cannot be combined with --input: put the field in the JSON object", name)}
				}
				var err error
				in, err = readJSONInput(a, input, func(r io.Reader) (kaizen.ErrorInput, error) {
					var v kaizen.ErrorInput
					return v, kaizen.DecodeStrict(r, &v, "parse error")
				})
				if err != nil {
					return err
				}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			entry, err := e.RecordError(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(entry, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Recorded error %s (%s) for task %s: %s\n", entry.ID, entry.Type, entry.TaskID, oneLine(entry.Message))
				return err
			})
		},
	}
	f := cmd.Flags()
	beadIDFlag(cmd, &in.TaskID, "the task (bead) that met the error")
	f.StringVar(&in.Type, "type", "", "error type: "+joinTypes()+" (default unknown)")
	f.StringVar(&in.Message, "message", "", "what went wrong (required)")
	f.StringVar(&in.StackTrace, "stack-trace", "", "stack trace")
	f.StringVar(&in.ToolName, "tool", "", "the tool whose call failed")
	f.StringVar(&in.Context, "context", "", "what was being done")
	f.StringVar(&in.Timestamp, "timestamp", "", "when it happened, RFC 3339 (default now)")
	f.StringVar(&input, "input", "", "read the error as a JSON object from FILE, or - for standard input")
	return cmd
}

func errorResolveCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "resolve ID",
		Short:   "Mark an error resolved (it leaves the retry context)",
		Example: `  kaizen error resolve err-01jf3x9k2m7q8r4t5v6w7x8y9z`,
		Args:    exactArgs(1, "one error id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			entry, err := e.ResolveError(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(entry, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "Resolved error %s of task %s at %s\n", entry.ID, entry.TaskID, formatTime(entry.ResolvedAt))
				return err
			})
		},
	}
}

func errorContextCommand(a *app) *cobra.Command {
	var (
		taskID          string
		includeResolved bool
	)
	cmd := &cobra.Command{
		Use:   "context --bead-id ID",
		Short: "Print a task's errors as markdown for a retry prompt",
		Example: `  kaizen error context --bead-id bd-123.1
  kaizen error context --bead-id bd-123.1 --include-resolved`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ErrorContext(cmd.Context(), "", taskID, includeResolved)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if res.Markdown == "" {
					// Keep stdout empty so it can be pasted into a prompt as is.
					_, err := fmt.Fprintf(a.stderr, "No errors to report for task %s.\n", taskID)
					return err
				}
				_, err := io.WriteString(w, res.Markdown)
				return err
			})
		},
	}
	beadIDFlag(cmd, &taskID, "the task (bead) (required)")
	cmd.Flags().BoolVar(&includeResolved, "include-resolved", false, "include resolved errors")
	return cmd
}

func errorStatsCommand(a *app) *cobra.Command {
	var taskID string
	cmd := &cobra.Command{
		Use:     "stats --bead-id ID",
		Short:   "Count a task's errors (total, unresolved, by type)",
		Example: `  kaizen error stats --bead-id bd-123.1`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			s, err := e.ErrorStats(cmd.Context(), "", taskID)
			if err != nil {
				return err
			}
			return a.print(s, func(w io.Writer) error {
				fmt.Fprintf(w, "task %s: %d errors, %d unresolved\n", taskID, s.Total, s.Unresolved)
				t := table(w)
				for _, k := range slices.Sorted(maps.Keys(s.ByType)) {
					fmt.Fprintf(t, "  %s\t%d\n", k, s.ByType[k])
				}
				return t.Flush()
			})
		},
	}
	beadIDFlag(cmd, &taskID, "the task (bead) (required)")
	return cmd
}

func errorListCommand(a *app) *cobra.Command {
	var q kaizen.ErrorQuery
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List recorded errors, newest first",
		Example: `  kaizen error list --unresolved
  kaizen error list --bead-id bd-123.1 --type validation`,
		Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "errors", "ID\tBEAD_ID\tTYPE\tRESOLVED\tTIMESTAMP\tMESSAGE",
			func(ctx context.Context, e *kaizen.Engine) (listed[learning.ErrorEntry], error) {
				l, err := e.ListErrors(ctx, q)
				if err != nil {
					return listed[learning.ErrorEntry]{}, err
				}
				return listed[learning.ErrorEntry]{l, l.Items, l.Total}, nil
			}, func(x learning.ErrorEntry) string {
				return fmt.Sprintf("%s\t%s\t%s\t%t\t%s\t%s", x.ID, x.TaskID, x.Type, x.Resolved,
					x.Timestamp.Format(time.RFC3339), oneLine(x.Message))
			}),
	}
	f := cmd.Flags()
	beadIDFlag(cmd, &q.TaskID, "only errors of this task")
	f.BoolVar(&q.UnresolvedOnly, "unresolved", false, "only unresolved errors")
	f.StringVar(&q.Type, "type", "", "only errors of this type ("+joinTypes()+")")
	f.StringVar(&q.Search, "search", "", "only errors whose text contains this")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}
