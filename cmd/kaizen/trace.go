package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/trace"
)

func init() {
	register(traceCommand)
	register(reviewCommand)
}

func traceCommand(a *app) *cobra.Command {
	return group("trace", "Failure learning: execution traces, failure patterns and the check before a command",
		traceListCommand(a), traceShowCommand(a), traceRecordCommand(a), traceCheckCommand(a),
		tracePatternsCommand(a), traceSkillsCommand(a))
}

func reviewCommand(a *app) *cobra.Command {
	return group("review", "Reviews of execution traces: task-end, daily and weekly",
		reviewRunCommand(a), reviewTaskCommand(a), reviewReportCommand(a), reviewListCommand(a))
}

// safe makes untrusted text (tool output, agent text) one inert terminal
// line: control characters (escape sequences included) are dropped,
// whitespace runs become one space, and the text is cut to n runes.
func safe(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

func traceListCommand(a *app) *cobra.Command {
	var q kaizen.TraceQuery
	cmd := &cobra.Command{
		Use: "list", Short: "List execution traces, newest first", Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "traces", "TRACE\tSKILL\tATTEMPTS\tSTATUS\tTASK\tCREATED",
			func(ctx context.Context, e *kaizen.Engine) (listed[kaizen.ExecutionTrace], error) {
				l, err := e.ListTraces(ctx, q)
				if err != nil {
					return listed[kaizen.ExecutionTrace]{}, err
				}
				return listed[kaizen.ExecutionTrace]{l, l.Items, l.Total}, nil
			}, func(t kaizen.ExecutionTrace) string {
				return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s", t.ID, safe(t.SkillID, 40), len(t.Attempts), t.Status(),
					safe(t.TaskID, 40), t.CreatedAt.Format(time.RFC3339))
			}),
	}
	f := cmd.Flags()
	f.StringVar(&q.SkillID, "skill", "", "only this skill's traces (cmd:<command family> for commands)")
	f.StringVar(&q.TaskID, "task", "", "only this task's traces")
	f.StringVar(&q.SessionID, "session", "", "only this session's traces")
	f.StringVar(&q.Status, "status", "", "only open, succeeded or failed traces")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func traceShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "show TRACE", Short: "Show a trace: its attempts as a timeline with errors and fixes", Args: exactArgs(1, "a trace id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			t, err := e.GetTrace(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(t, func(w io.Writer) error { return printTrace(w, t) })
		},
	}
}

func printTrace(w io.Writer, t *kaizen.ExecutionTrace) error {
	fmt.Fprintf(w, "Trace %s of %s: %d attempt(s), %s, %s\n", t.ID, safe(t.SkillID, 80), len(t.Attempts), t.Status(),
		time.Duration(t.DurationMS)*time.Millisecond)
	optional(w, "task", safe(t.TaskID, 80))
	optional(w, "session", safe(t.SessionID, 80))
	for _, at := range t.Attempts {
		mark := "✗"
		if at.Success {
			mark = "✓"
		}
		fmt.Fprintf(w, "\n%s attempt %d at %s", mark, at.Index, at.Timestamp.Format(time.RFC3339))
		if cmd := at.Context[trace.ContextCommand]; cmd != "" {
			fmt.Fprintf(w, ": %s", safe(cmd, 200))
		}
		fmt.Fprintln(w)
		if at.FixApplied != "" {
			fmt.Fprintf(w, "  fix (%s): %s\n", at.FixSource, safe(at.FixApplied, 300))
		}
		if at.Error != "" {
			fmt.Fprintf(w, "  error (%s): %s\n", safe(at.ErrorType, 60), safe(at.Error, 300))
		}
		if len(at.WarnedPatterns) > 0 {
			fmt.Fprintf(w, "  warned before: %s\n", safe(strings.Join(at.WarnedPatterns, ", "), 200))
		}
	}
	return nil
}

func traceRecordCommand(a *app) *cobra.Command {
	var input string
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Record a whole execution trace (JSON: skill_id, task_id, attempts)",
		Example: `  echo '{"skill_id":"skill:import","attempts":[{"error":"UnicodeDecodeError: ..."},
    {"success":true,"fix_applied":"open with encoding=utf-8"}]}' | kaizen trace record`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, closeFn, err := openInput(a, input)
			if err != nil {
				return err
			}
			defer closeFn()
			var t kaizen.ExecutionTrace
			dec := json.NewDecoder(io.LimitReader(r, 8<<20))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&t); err != nil {
				return usageError{fmt.Errorf("the trace is not valid JSON: %w", err)}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.RecordTrace(cmd.Context(), kaizen.RecordTraceInput{Trace: t})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if err := printTrace(w, &res.Trace); err != nil {
					return err
				}
				for _, p := range res.Learned {
					fmt.Fprintf(w, "\nLearned failure pattern %s (seen %d×): %s\n  fix: %s\n", p.ID, p.Frequency,
						safe(p.Condition, 200), safe(p.SuggestedFix, 200))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&input, "input", "-", "trace file (JSON), or - for standard input")
	return cmd
}

func traceCheckCommand(a *app) *cobra.Command {
	var in kaizen.TraceCheckInput
	var cwd string
	cmd := &cobra.Command{
		Use:     "check -- COMMAND...",
		Short:   "Check a command before running it: known failure patterns and their fix (never blocks)",
		Example: "  kaizen trace check -- go test ./...\n  kaizen trace check --session s1 --cwd . -- npm run build",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Command = strings.Join(args, " ")
			if cwd == "" {
				cwd, _ = os.Getwd()
			}
			if cwd != "" {
				in.Context = map[string]string{trace.ContextCwd: cwd}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.CheckCommand(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if len(res.Warnings) == 0 {
					_, err := fmt.Fprintln(w, "No known failure pattern matches this command.")
					return err
				}
				for _, wn := range res.Warnings {
					fmt.Fprintf(w, "Known failure %s (confidence %.2f): %s\n  fix: %s\n", wn.PatternID, wn.Confidence,
						safe(wn.Condition, 300), safe(wn.Fix, 300))
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.SessionID, "session", "", "session id: warnings are limited per session")
	f.StringVar(&in.SkillID, "skill", "", "skill id (default: the command's family)")
	f.StringVar(&cwd, "cwd", "", "directory the command runs in (default: the current directory)")
	return cmd
}

func tracePatternsCommand(a *app) *cobra.Command {
	var q kaizen.FailurePatternQuery
	cmd := &cobra.Command{
		Use: "patterns", Short: "List failure patterns, most frequent first", Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "failure patterns", "PATTERN\tSKILL\tERROR\tSEEN\tLAST\tWEIGHT\tFIX",
			func(ctx context.Context, e *kaizen.Engine) (listed[kaizen.FailurePattern], error) {
				l, err := e.ListFailurePatterns(ctx, q)
				if err != nil {
					return listed[kaizen.FailurePattern]{}, err
				}
				return listed[kaizen.FailurePattern]{l, l.Items, l.Total}, nil
			}, func(p kaizen.FailurePattern) string {
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%.2f\t%s", p.ID, safe(p.SkillID, 30), safe(p.ErrorType, 30), p.Frequency,
					p.LastOccurred.Format("2006-01-02"), p.Weight, safe(p.SuggestedFix, 60))
			}),
	}
	cmd.Flags().StringVar(&q.SkillID, "skill", "", "only this skill's patterns")
	cmd.Flags().StringVar(&q.Family, "family", "", "only this command family's patterns (e.g. \"go test\")")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func traceSkillsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "skills", Short: "Success rate per skill, and the skills that need a person", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ListTraceSkills(cmd.Context(), "")
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				return printList(w, "skills", "SKILL\tTRACES\tSUCCESS\tRECOVERED\tGAVE UP\tNEEDS A PERSON", res.Items,
					int64(len(res.Items)), func(s trace.SkillStats) string {
						needs := ""
						if s.NeedsPerson {
							needs = "yes: " + safe(s.Reason, 80)
						}
						return fmt.Sprintf("%s\t%d\t%.0f%%\t%d\t%d\t%s", safe(s.SkillID, 40), s.Traces, 100*s.SuccessRate,
							s.Recovered, s.GaveUp, needs)
					})
			})
		},
	}
}

func reviewRunCommand(a *app) *cobra.Command {
	var in kaizen.ScheduledReviewInput
	var end string
	cmd := &cobra.Command{
		Use: "run", Short: "Run the daily or weekly review of the period that just ended (once per period)", Args: noArgs,
		Example: "  kaizen review run --kind weekly\n  kaizen review run --kind daily --end 2026-03-02T00:00:00Z",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if end != "" {
				t, err := time.Parse(time.RFC3339, end)
				if err != nil {
					return usageError{fmt.Errorf("--end: %w", err)}
				}
				in.End = t
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.RunTraceReview(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if !res.Created {
					fmt.Fprintf(w, "(this period was reviewed already: review %s)\n\n", res.Review.ID)
				}
				_, err := io.WriteString(w, res.Review.Report)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&in.Kind, "kind", "daily", "daily or weekly")
	cmd.Flags().StringVar(&end, "end", "", "end of the reviewed period, RFC 3339 (default: the start of today, or of this week)")
	return cmd
}

func reviewTaskCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "task TASK", Short: "Run a task's end review now (failure patterns from its recovered chains)", Args: exactArgs(1, "a task id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ReviewTask(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Reviewed %d trace(s) of task %s: %d failure pattern(s) created or updated.\n", res.Traces,
					safe(res.TaskID, 80), len(res.Review.Patterns))
				for _, c := range res.Review.Patterns {
					fmt.Fprintf(w, "- %s (seen %d×): %s\n  fix: %s\n", c.Pattern.ID, c.Pattern.Frequency, safe(c.Pattern.Condition, 200),
						safe(c.Pattern.SuggestedFix, 200))
				}
				for _, s := range res.Review.Skills {
					if s.NeedsPerson {
						fmt.Fprintf(w, "Skill %s needs a person: %s\n", safe(s.SkillID, 80), safe(s.Reason, 200))
					}
				}
				return nil
			})
		},
	}
}

func reviewReportCommand(a *app) *cobra.Command {
	var kind string
	cmd := &cobra.Command{
		Use: "report [REVIEW]", Short: "Print a review's markdown report (default: the latest of --kind)", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			var rev *kaizen.TraceReview
			if len(args) == 1 {
				if rev, err = e.GetTraceReview(cmd.Context(), "", args[0]); err != nil {
					return err
				}
			} else {
				l, err := e.ListTraceReviews(cmd.Context(), kaizen.TraceReviewQuery{Kind: kind, Limit: 1})
				if err != nil {
					return err
				}
				if len(l.Items) == 0 {
					return &kaizen.Error{Op: "review report", Kind: kaizen.KindNotFound, Message: "no " + kind + " review yet",
						Hint: "run one with `kaizen review run --kind " + kind + "`"}
				}
				rev = &l.Items[0]
			}
			return a.print(rev, func(w io.Writer) error {
				_, err := io.WriteString(w, rev.Report)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "daily", "daily or weekly (without a review id)")
	return cmd
}

func reviewListCommand(a *app) *cobra.Command {
	var q kaizen.TraceReviewQuery
	cmd := &cobra.Command{
		Use: "list", Short: "List reviews, newest first", Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "reviews", "REVIEW\tKIND\tPERIOD START\tPERIOD END\tCREATED",
			func(ctx context.Context, e *kaizen.Engine) (listed[kaizen.TraceReview], error) {
				l, err := e.ListTraceReviews(ctx, q)
				if err != nil {
					return listed[kaizen.TraceReview]{}, err
				}
				return listed[kaizen.TraceReview]{l, l.Items, l.Total}, nil
			}, func(r kaizen.TraceReview) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.ID, r.Kind, r.PeriodStart.Format(time.RFC3339),
					r.PeriodEnd.Format(time.RFC3339), r.CreatedAt.Format(time.RFC3339))
			}),
	}
	cmd.Flags().StringVar(&q.Kind, "kind", "", "only task, daily or weekly reviews")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}
