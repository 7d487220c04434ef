package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"

	"github.com/kaizenhq/kaizen/learning"
)

func init() {
	register(planCommand)
	register(extractCommand)
}

func planCommand(a *app) *cobra.Command {
	var in learning.GuidanceRequest
	cmd := &cobra.Command{
		Use:   `plan ["<task description>"]`,
		Short: "Print learned guidance for planning a task",
		Long: `Print the guidance kaizen has learned for planning a task, as markdown for a
planning prompt (or as structured JSON with --json): the strategies
recommended for this task, ranked from the outcomes of similar past tasks
(by the task description and --tag) with their estimated success rates and
intervals, one worth exploring and those to avoid here; the patterns with
their seed maturity (base score × multiplier) and evidence, the
anti-patterns, warnings when the description uses an anti-pattern or a
deprecated pattern, criterion weights, and the open errors of the task
(--bead-id). The ranking policy is [learning] ranking (docs/learning.md).`,
		Example: `  kaizen plan "Add OAuth: split by file type, one file per subtask"
  kaizen plan --tag migration "add a discount_code column to the orders table"
  kaizen plan --bead-id bd-123.1 --limit 5 "Retry the auth refactor"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if in.Limit < 0 {
				return usageError{fmt.Errorf("--limit must be >= 0, got %d", in.Limit)}
			}
			in.Task = strings.Join(args, " ")
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			g, err := e.PlanGuidance(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(g, func(w io.Writer) error {
				_, err := io.WriteString(w, g.Markdown())
				return err
			})
		},
	}
	beadIDFlag(cmd, &in.TaskID, "include the open errors of this task")
	cmd.Flags().IntVar(&in.Limit, "limit", 10, "maximum number of ranked patterns")
	cmd.Flags().StringArrayVar(&in.Tags, "tag", nil, "what kind of task it is, e.g. migration or bugfix (repeatable)")
	cmd.Flags().StringVar(&in.Kind, "kind", "", "the kind of task (migration, ui, api, refactor, bugfix, performance, data, testing, security, docs, infra, dependency); default: inferred from the task")
	return cmd
}

func extractCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   `extract "<description>"`,
		Short: "Detect the decomposition strategies in a description",
		Long: `Detect which of the twelve known decomposition strategies a description uses
(English or Chinese). Prints one label per line, in the language it was
found in; --json adds the strategy key, both labels and the matched text.`,
		Example: `  kaizen extract "We will split by file type, one file per subtask"
  kaizen extract "我们将按文件类型拆分,每个子任务一个文件"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			found, err := kaizen.ExtractPatterns(strings.Join(args, " ")) // needs no database
			if err != nil {
				return err
			}
			return a.print(found, func(w io.Writer) error {
				if len(found) == 0 {
					_, err := fmt.Fprintln(a.stderr, "No known strategy found.")
					return err
				}
				for _, l := range learning.Labels(found) {
					if _, err := fmt.Fprintln(w, l); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}
