package main

import (
	"fmt"
	"io"

	"github.com/kaizenhq/kaizen"
	"github.com/spf13/cobra"
)

// `kaizen curve` prints the learning curve: how the success rate moved as
// outcomes accumulated, and when the guidance changed (the viewer's
// /learning page, GET /api/v1/learning-curve).

func init() { register(curveCommand) }

func curveCommand(a *app) *cobra.Command {
	var q kaizen.CurveQuery
	cmd := &cobra.Command{
		Use:   "curve [--window N] [--points N]",
		Short: "The learning curve: the rolling success rate over the outcomes, and when patterns became proven, anti-patterns or recovered",
		Example: `  kaizen curve
  kaizen curve --window 50 --points 20
  kaizen curve --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			c, err := e.LearningCurve(cmd.Context(), q)
			if err != nil {
				return err
			}
			return a.print(c, func(w io.Writer) error { return printCurve(w, c) })
		},
	}
	cmd.Flags().IntVar(&q.Window, "window", 0, fmt.Sprintf("the outcomes each rolling rate covers (1–%d, default %d)", kaizen.MaxCurveWindow, kaizen.DefaultCurveWindow))
	cmd.Flags().IntVar(&q.Points, "points", 12, "how many evenly spaced points to print (2–2000), besides those where the guidance changed")
	return cmd
}

func printCurve(w io.Writer, c *kaizen.LearningCurve) error {
	if c.Outcomes == 0 {
		fmt.Fprintf(w, "Project %s has no outcomes yet: the curve starts with the first recorded outcome.\n", c.Project)
		return nil
	}
	fmt.Fprintf(w, "Project %s: %d outcome(s); success of the last %d: first %s, now %s.\n", c.Project, c.Outcomes+c.Skipped, c.Window,
		rateText(c.First), rateText(c.Last))
	if c.Skipped > 0 {
		fmt.Fprintf(w, "The curve covers the newest %d outcomes.\n", c.Outcomes)
	}
	fmt.Fprintf(w, "\n%8s  %-16s  %-34s  %s\n", "outcome", "finished", fmt.Sprintf("last %d", c.Window), "cumulative")
	for _, p := range c.Points {
		fmt.Fprintf(w, "%8s  %-16s  %-34s  %s\n", fmt.Sprintf("#%d", p.Outcome), p.At.UTC().Format("2006-01-02 15:04"), rateText(p.Rolling),
			fmt.Sprintf("%d/%d (%.0f%%)", p.Cumulative.Succeeded, p.Cumulative.Total, p.Cumulative.Rate*100))
	}
	if c.ChangesTotal == 0 {
		fmt.Fprintln(w, "\nThe guidance has not changed yet.")
		return nil
	}
	fmt.Fprintf(w, "\nChanges of the guidance (%d):\n", c.ChangesTotal)
	for _, ch := range c.Changes {
		manual := ""
		if ch.Manual {
			manual = " by hand"
		}
		still := ""
		if !ch.Current {
			still = "; no longer so"
		}
		fmt.Fprintf(w, "  #%d %s %s %q %s%s (%s%s)", ch.Outcome, ch.At.UTC().Format("2006-01-02 15:04"), ch.PatternID, ch.Content, ch.Kind, manual, ch.Detail, still)
		if ch.TaskID != "" {
			fmt.Fprintf(w, " task %s", ch.TaskID)
		}
		fmt.Fprintln(w)
	}
	return nil
}
