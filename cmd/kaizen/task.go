package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
)

// Tracked tasks: the sessions client hooks report (kaizen hook), with what
// an outcome recorded for them takes from them.

func init() { register(taskCommand) }

func taskCommand(a *app) *cobra.Command {
	return group("task", "Inspect the tasks client hooks track (sessions of Claude Code, Codex, Cursor, opencode)",
		taskListCommand(a), taskShowCommand(a), taskCloseCommand(a))
}

func taskCloseCommand(a *app) *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "close [BEAD_ID] [--idle DURATION]",
		Short: "End a tracked task and record its inferred outcome (what SessionEnd and the idle timeout do)",
		Long: `End a tracked task as if its session had ended: unless an outcome was
recorded for it, kaizen records one from what it saw (duration, errors,
retries, files, the strategies of its prompts and plan as patterns) with
success inferred from its signals, marked inferred. With --idle, close every
open task of the project without activity for that long.`,
		Example: "  kaizen task close claude-9f0c1e52-6a8e-4c55-b1d2-2f0a6d3c7e11\n  kaizen task close --idle 1h",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (idle > 0) {
				return usageError{fmt.Errorf("give a task id or --idle, not both")}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			if idle > 0 {
				res, err := e.CloseIdleTasks(cmd.Context(), kaizen.CloseIdleInput{Project: a.project, IdleMs: idle.Milliseconds()})
				if err != nil {
					return err
				}
				return a.print(res, func(w io.Writer) error {
					fmt.Fprintf(w, "Closed %d idle task(s)\n", len(res.Closed))
					for _, c := range res.Closed {
						printClosed(w, c)
					}
					return nil
				})
			}
			res, err := e.CloseTask(cmd.Context(), kaizen.CloseTaskInput{Project: a.project, TaskID: args[0], Reason: "cli"})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { printClosed(w, *res); return nil })
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", 0, "close every open task idle for longer than this")
	return cmd
}

func printClosed(w io.Writer, c kaizen.CloseTaskResult) {
	switch {
	case c.Outcome != nil && c.Outcome.Outcome.Inferred:
		o := c.Outcome.Outcome
		fmt.Fprintf(w, "%s: outcome %s, success %v (inferred: %s)\n", c.Task.ID, o.ID, o.Success, o.Inference)
	case c.Outcome != nil:
		fmt.Fprintf(w, "%s: outcome %s kept\n", c.Task.ID, c.Outcome.Outcome.ID)
	default:
		fmt.Fprintf(w, "%s: closed, no outcome recorded (%s)\n", c.Task.ID, c.Skipped)
	}
}

func taskListCommand(a *app) *cobra.Command {
	var q kaizen.TaskQuery
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List tracked tasks, most recently active first",
		Example: "  kaizen task list --open",
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "tasks", "BEAD_ID\tSOURCE\tSTATE\tDURATION\tPROMPTS\tTOOL CALLS\tFAILURES\tRETRIES\tERRORS\tLAST ACTIVITY",
			func(ctx context.Context, e *kaizen.Engine) (listed[kaizen.TaskInfo], error) {
				l, err := e.ListTasks(ctx, q)
				if err != nil {
					return listed[kaizen.TaskInfo]{}, err
				}
				return listed[kaizen.TaskInfo]{l, l.Items, l.Total}, nil
			}, func(t kaizen.TaskInfo) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s", t.ID, orDash(t.Source), taskState(t),
					time.Duration(t.DurationMs)*time.Millisecond, t.Prompts, t.ToolCalls, t.ToolFailures,
					t.RetryCount, t.ErrorCount, t.LastActivityAt.Format(time.RFC3339))
			}),
	}
	cmd.Flags().BoolVar(&q.OpenOnly, "open", false, "only tasks without an outcome yet")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func taskShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "show BEAD_ID",
		Short:   "Show a tracked task and what its outcome would take from it",
		Example: "  kaizen task show claude-9f0c1e52-6a8e-4c55-b1d2-2f0a6d3c7e11",
		Args:    exactArgs(1, "the task id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			t, err := e.GetTask(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(t, func(w io.Writer) error {
				tw := table(w)
				fmt.Fprintf(tw, "bead_id:\t%s\n", t.ID)
				fmt.Fprintf(tw, "project:\t%s\n", t.Project)
				optional(tw, "source", t.Source)
				optional(tw, "description", oneLine(t.Description))
				fmt.Fprintf(tw, "state:\t%s\n", taskState(*t))
				fmt.Fprintf(tw, "started_at:\t%s\n", t.StartedAt.Format(time.RFC3339))
				fmt.Fprintf(tw, "last_activity_at:\t%s\n", t.LastActivityAt.Format(time.RFC3339))
				fmt.Fprintf(tw, "duration_ms:\t%d (%s)\n", t.DurationMs, time.Duration(t.DurationMs)*time.Millisecond)
				fmt.Fprintf(tw, "prompts:\t%d\n", t.Prompts)
				fmt.Fprintf(tw, "tool_calls:\t%d (%d failed)\n", t.ToolCalls, t.ToolFailures)
				fmt.Fprintf(tw, "retry_count:\t%d\n", t.RetryCount)
				fmt.Fprintf(tw, "error_count:\t%d (%d unresolved)\n", t.ErrorCount, t.OpenErrors)
				if x := t.Exploration; x != nil {
					exit := x.Exit
					if exit == "" {
						exit = "running"
					}
					fmt.Fprintf(tw, "exploration:\t%s, phase %s, %d rounds, %d tool calls, new information %.0f%%, %s\n",
						x.Strategy, x.Phase, x.Rounds, x.ToolCalls, 100*x.NewInfoRate, exit)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if t.EndedAt == nil {
					_, err := fmt.Fprintf(w, "\nRecord its outcome with: kaizen outcome record --task %s --success (or --success=false)\n", t.ID)
					return err
				}
				return nil
			})
		},
	}
}

func taskState(t kaizen.TaskInfo) string {
	if t.EndedAt != nil {
		return "ended " + t.EndedAt.Format(time.RFC3339)
	}
	return "open"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
