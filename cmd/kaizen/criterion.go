package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen/learning"
)

func init() { register(criterionCommand) }

func criterionCommand(a *app) *cobra.Command {
	return group("criterion", "Inspect evaluation criteria and their decayed weights",
		criterionListCommand(a), criterionExplainCommand(a))
}

func criterionListCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List criteria with their weights",
		Example: `  kaizen criterion list`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			ws, err := e.ListCriteria(cmd.Context(), "")
			if err != nil {
				return err
			}
			return a.print(ws, func(w io.Writer) error {
				if len(ws.Items) == 0 {
					_, err := fmt.Fprintln(w, "No criteria yet: they appear with the first recorded outcome.")
					return err
				}
				t := table(w)
				fmt.Fprintln(t, "CRITERION\tWEIGHT\tDECAYED HELPFUL\tDECAYED HARMFUL\tHELPFUL\tHARMFUL\tNEUTRAL\tDEPRECATED\tLAST VALIDATED")
				for _, c := range ws.Items {
					fmt.Fprintf(t, "%s\t%.2f\t%.3f\t%.3f\t%d\t%d\t%d\t%t\t%s\n", c.Criterion, c.Weight, c.HelpfulSum, c.HarmfulSum,
						c.HelpfulCount, c.HarmfulCount, c.NeutralCount, c.Deprecated, formatTime(c.LastValidated))
				}
				return t.Flush()
			})
		},
	}
}

func criterionExplainCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "explain NAME",
		Short:   "Explain why a criterion has its weight",
		Example: `  kaizen criterion explain type_safe`,
		Args:    exactArgs(1, "one criterion name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			x, err := e.ExplainCriterion(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(x, func(w io.Writer) error { return printCriterionExplanation(w, x) })
		},
	}
}

func printCriterionExplanation(w io.Writer, x *learning.CriterionExplanation) error {
	c := x.Weight
	fmt.Fprintf(w, "%s: weight %.3f (raw %.3f)\n\nWhy:\n", c.Criterion, c.Weight, c.RawWeight)
	for _, s := range x.Why {
		fmt.Fprintf(w, "- %s\n", s)
	}
	fmt.Fprintln(w, "\nNumbers:")
	t := table(w)
	fmt.Fprintf(t, "  decayed helpful\t%.3f\n", c.HelpfulSum)
	fmt.Fprintf(t, "  decayed harmful\t%.3f\n", c.HarmfulSum)
	fmt.Fprintf(t, "  events\t%d helpful, %d harmful, %d neutral\n", c.HelpfulCount, c.HarmfulCount, c.NeutralCount)
	fmt.Fprintf(t, "  harmful ratio\t%.3f\n", c.HarmfulRatio)
	fmt.Fprintf(t, "  deprecated\t%t\n", c.Deprecated)
	fmt.Fprintf(t, "  last validated\t%s\n", formatTime(c.LastValidated))
	fmt.Fprintf(t, "  evaluated at\t%s\n", formatTime(&c.At))
	if err := t.Flush(); err != nil {
		return err
	}
	return printThresholds(w, x.Thresholds)
}
