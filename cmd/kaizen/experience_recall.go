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
	"github.com/kaizenhq/kaizen/experience"
)

// Recall: what past tasks teach about the current one (heuristics, skills
// and memories), the stored recalls, and re-embedding.

func init() {
	register(recallCommand)
	register(recallsCommand)
	register(reembedCommand)
}

func recallCommand(a *app) *cobra.Command {
	var (
		in    kaizen.RecallInput
		kinds []string
	)
	cmd := &cobra.Command{
		Use:   `recall "<query>" [--task ID] [--kind heuristic,skill,memory] [--dry-run]`,
		Short: "Recall the heuristics, skills and memories that apply to a task",
		Long: `Recall what past tasks teach about the query: heuristics (scored by topic
similarity, trigger match with the task's live signals, and quality),
active skills and memories, within the context budget. Prints the text an
agent would get, then every item considered with its scores, and the
recall id to give with 'kaizen heuristic feedback --recall'. --dry-run
stores nothing. Stored recalls are listed by 'kaizen recalls'.`,
		Example: `  kaizen recall "add a database migration" --task bd-42
  kaizen recall "登录接口限流" --kind heuristic --dry-run`,
		Args: exactArgs(1, "one query (quote it)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Query, in.Kinds = args[0], kinds
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.Recall(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printRecall(w, res) })
		},
	}
	beadIDFlag(cmd, &in.TaskID, "the current task: its recent turns give the live signals, its own turns are not recalled")
	cmd.Flags().StringSliceVar(&kinds, "kind", nil, "only these kinds (comma-separated: heuristic, skill, memory)")
	cmd.Flags().BoolVar(&in.DryRun, "dry-run", false, "score and render without storing the recall")
	return cmd
}

func printRecall(w io.Writer, res *kaizen.RecallResult) error {
	if res.Abstained {
		fmt.Fprintln(w, "Nothing injected: "+res.AbstainReason+".")
	} else if strings.TrimSpace(res.Text) == "" {
		fmt.Fprintln(w, "Nothing to recall passed the filter.")
	} else {
		fmt.Fprintln(w, strings.TrimRight(res.Text, "\n"))
	}
	fmt.Fprintln(w)
	if len(res.LiveSignals) > 0 {
		s := make([]string, len(res.LiveSignals))
		for i, l := range res.LiveSignals {
			s[i] = string(l)
		}
		fmt.Fprintf(w, "live signals: %s\n", strings.Join(s, ", "))
	}
	if len(res.Items) > 0 {
		fmt.Fprintf(w, "Considered (%d):\n", len(res.Items))
		t := table(w)
		fmt.Fprintln(t, "  KIND\tREF\tSCORE\tTOPIC\tTRIGGER\tQUALITY\tINJECTED\tSTATUS\tTITLE")
		for _, it := range res.Items {
			topic, trigger, quality := "-", "-", "-"
			if it.Kind == experience.ItemHeuristic {
				topic, trigger, quality = fmt.Sprintf("%.3f", it.Topic), fmt.Sprintf("%.3f", it.Trigger), fmt.Sprintf("%.2f", it.Quality)
			}
			fmt.Fprintf(t, "  %s\t%s\t%.3f\t%s\t%s\t%s\t%t\t%s\t%s\n", it.Kind, it.RefID, it.Score, topic, trigger, quality,
				it.Injected, orDash(it.Status), clip(oneLine(it.Title), 60))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "Considered: nothing matched.")
	}
	var err error
	switch {
	case res.ID != "":
		_, err = fmt.Fprintf(w, "recall id: %s\n", res.ID)
	case len(res.Items) > 0:
		_, err = fmt.Fprintln(w, "recall id: none (dry run)")
	default:
		_, err = fmt.Fprintln(w, "recall id: none (nothing considered, nothing stored)")
	}
	return err
}

func recallsCommand(a *app) *cobra.Command {
	var q kaizen.RecallQuery
	cmd := &cobra.Command{
		Use:   "recalls [--task ID] [--ref ID]",
		Short: "List stored recalls, newest first",
		Long: `List stored recalls, newest first: when, for which task and query, and
what was considered and injected. --ref keeps the recalls that considered
one heuristic, skill or memory. (A separate command, so that
'kaizen recall list' stays a recall of the query "list".)`,
		Example: "  kaizen recalls --task bd-42\n  kaizen recalls --ref heur-01jf3x9k2m7q8r4t5v6w7x8y9z",
		Args:    noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "recalls", "ID\tBEAD_ID\tCONSIDERED\tINJECTED\tLIVE SIGNALS\tCREATED\tQUERY",
			func(ctx context.Context, e *kaizen.Engine) (listed[experience.RecallEvent], error) {
				l, err := e.ListRecalls(ctx, q)
				if err != nil {
					return listed[experience.RecallEvent]{}, err
				}
				return listed[experience.RecallEvent]{l, l.Items, l.Total}, nil
			}, func(r experience.RecallEvent) string {
				injected := 0
				for _, it := range r.Items {
					if it.Injected {
						injected++
					}
				}
				live := make([]string, len(r.LiveSignals))
				for i, l := range r.LiveSignals {
					live[i] = string(l)
				}
				return fmt.Sprintf("%s\t%s\t%d\t%d\t%s\t%s\t%s", r.ID, orDash(r.TaskID), len(r.Items), injected,
					orDash(strings.Join(live, ",")), r.CreatedAt.UTC().Format(time.RFC3339), clip(oneLine(r.Query), 60))
			}),
	}
	beadIDFlag(cmd, &q.TaskID, "only recalls for this task")
	cmd.Flags().StringVar(&q.RefID, "ref", "", "only recalls that considered this heuristic, skill or memory id")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func reembedCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "reembed [--project P]",
		Short: "Compute the vectors recallable items lack for the configured embedder",
		Long: `Compute the vectors that heuristics, skills and memories lack for the
configured embedder: all of them after a change of embedder (kaizen also
does this on opening when it notices one). Without an explicit --project
every project is re-embedded; with it, only that one. Resumable: an
interrupted run continues where it stopped.`,
		Example: "  kaizen reembed\n  kaizen reembed --project web",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			bar := a.newProgress("re-embedding", -1)
			res, err := e.ReembedWith(cmd.Context(), kaizen.ReembedOptions{Project: a.project, Progress: bar.set})
			bar.done()
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				var parts []string
				total := 0
				for _, k := range slices.Sorted(maps.Keys(res.Items)) {
					parts = append(parts, fmt.Sprintf("%d %s", res.Items[k], k))
					total += res.Items[k]
				}
				detail := ""
				if len(parts) > 0 {
					detail = " (" + strings.Join(parts, ", ") + ")"
				}
				projects := "no project"
				if len(res.Projects) > 0 {
					projects = "project(s) " + strings.Join(res.Projects, ", ")
				}
				_, err := fmt.Fprintf(w, "Re-embedded %d item(s)%s of %s with %s\n", total, detail, projects, res.Embedder)
				return err
			})
		},
	}
}
