package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/store"
)

// Background jobs: the durable queue the daemon runs (experience
// extraction today; reviews, leases and timers of other subsystems).

func init() { register(jobsCommand) }

func jobsCommand(a *app) *cobra.Command {
	return group("jobs", "Inspect and run background jobs (kaizen serve runs them on its own)",
		jobsListCommand(a), jobsRunCommand(a))
}

func jobsListCommand(a *app) *cobra.Command {
	var q kaizen.JobQuery
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List background jobs, newest first",
		Example: "  kaizen jobs list --state failed",
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "jobs", "ID\tKIND\tSTATE\tRUN AT\tATTEMPTS\tLAST ERROR",
			func(ctx context.Context, e *kaizen.Engine) (listed[store.Job], error) {
				l, err := e.ListJobs(ctx, q)
				if err != nil {
					return listed[store.Job]{}, err
				}
				return listed[store.Job]{l, l.Items, l.Total}, nil
			}, func(j store.Job) string {
				return fmt.Sprintf("%s\t%s\t%s\t%s\t%d/%d\t%s", j.ID, j.Kind, j.State, j.RunAt.Format(time.RFC3339),
					j.Attempts, j.MaxAttempts, orDash(oneLine(j.LastError)))
			}),
	}
	cmd.Flags().StringVar(&q.Kind, "kind", "", "only jobs of this kind (e.g. experience.extract)")
	cmd.Flags().StringVar(&q.State, "state", "", "only jobs in this state: available, running, completed or failed")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func jobsRunCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run the background jobs that are due now, once",
		Long: `Run every background job that is due now (and this period's scheduled
jobs), then exit: for a machine where no 'kaizen serve' runs them, e.g.
from cron. A daemon runs them on its own.`,
		Example: "  kaizen jobs run",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.RunDueJobs(cmd.Context())
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Ran %d job(s)\n", res.Ran)
				for _, k := range slices.Sorted(maps.Keys(res.Stats.Kinds)) {
					s := res.Stats.Kinds[k]
					fmt.Fprintf(w, "  %s: %d completed, %d to retry, %d failed\n", k, s.Completed, s.Retried, s.Failed)
				}
				return nil
			})
		},
	}
}
