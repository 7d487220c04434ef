package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Heuristics: the deduplicated lessons of task experiences, with their
// lifecycle (candidate → active → refined → stale → archived).

func init() { register(heuristicCommand) }

func heuristicCommand(a *app) *cobra.Command {
	return group("heuristic", "Inspect, judge and retire the heuristics learned from task experiences",
		heuristicListCommand(a), heuristicShowCommand(a), heuristicFeedbackCommand(a),
		heuristicActionCommand(a, "archive", "Archive a heuristic: it is neither recalled nor merged into",
			"  kaizen heuristic archive heur-01jf… --reason \"the team dropped this tool\""),
		heuristicActionCommand(a, "outdated", "Mark a heuristic outdated (its tools or environment changed): it becomes stale",
			"  kaizen heuristic outdated heur-01jf… --reason \"migrated from npm to pnpm\""),
		heuristicActionCommand(a, "supersede", "Mark a heuristic superseded by another one: it becomes stale",
			"  kaizen heuristic supersede heur-01jf… --by heur-01jg…"),
		heuristicActionCommand(a, "restore", "Restore a stale or archived heuristic (candidate, or active when it qualifies)",
			"  kaizen heuristic restore heur-01jf…"),
		heuristicEditCommand(a))
}

func joinHeuristicStatuses() string {
	s := make([]string, len(experience.HeuristicStatuses))
	for i, v := range experience.HeuristicStatuses {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

func heuristicListCommand(a *app) *cobra.Command {
	var q kaizen.HeuristicQuery
	cmd := &cobra.Command{
		Use:   "list [--status S1,S2] [--kind K] [--search Q]",
		Short: "List heuristics, most recently updated first",
		Example: `  kaizen heuristic list --status candidate,active
  kaizen heuristic list --kind avoid --search migration`,
		Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "heuristics", "ID\tKIND\tSTATUS\tSUPPORT\tEVIDENCE\tHELPFUL\tMISLEADING\tRECALLS\tRULE",
			func(ctx context.Context, e *kaizen.Engine) (listed[experience.Heuristic], error) {
				l, err := e.ListHeuristics(ctx, q)
				if err != nil {
					return listed[experience.Heuristic]{}, err
				}
				return listed[experience.Heuristic]{l, l.Items, l.Total}, nil
			}, func(h experience.Heuristic) string {
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s", h.ID, h.Kind, h.Status, h.SupportTasks,
					h.EvidenceCount, h.HelpfulCount, h.MisleadingCount, h.RecallCount, clip(oneLine(h.Rule), 70))
			}),
	}
	f := cmd.Flags()
	f.StringSliceVar(&q.Status, "status", nil, "only heuristics in these states (comma-separated: "+joinHeuristicStatuses()+")")
	f.StringVar(&q.Kind, "kind", "", "only heuristics of this kind (avoid, prefer, verify, clarify)")
	f.StringVar(&q.Search, "search", "", "only heuristics whose text contains this")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func heuristicShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "show ID",
		Short:   "Show a heuristic: evidence, supporting tasks, feedback, recalls and quality weight",
		Example: "  kaizen heuristic show heur-01jf3x9k2m7q8r4t5v6w7x8y9z",
		Args:    exactArgs(1, "one heuristic id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			d, err := e.GetHeuristic(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(d, func(w io.Writer) error { return printHeuristicDetail(w, d) })
		},
	}
}

// printHeuristic prints a heuristic's fields; extra adds rows to the table.
func printHeuristic(w io.Writer, h experience.Heuristic, extra func(io.Writer)) error {
	t := table(w)
	fmt.Fprintf(t, "id:\t%s\n", h.ID)
	fmt.Fprintf(t, "project:\t%s\n", h.Project)
	fmt.Fprintf(t, "kind:\t%s\n", h.Kind)
	fmt.Fprintf(t, "trigger:\t%s\n", oneLine(h.Trigger))
	fmt.Fprintf(t, "rule:\t%s\n", oneLine(h.Rule))
	optional(t, "why", oneLine(h.Why))
	fmt.Fprintf(t, "status:\t%s\n", h.Status)
	optional(t, "status_reason", oneLine(h.StatusReason))
	optional(t, "superseded_by", h.SupersededBy)
	fmt.Fprintf(t, "support:\t%d task(s), %d evidence record(s)\n", h.SupportTasks, h.EvidenceCount)
	fmt.Fprintf(t, "feedback:\t%d helpful, %d misleading (streak %d)\n", h.HelpfulCount, h.MisleadingCount, h.MisleadingStreak)
	fmt.Fprintf(t, "recalls:\t%d (last %s)\n", h.RecallCount, formatTime(h.LastRecalledAt))
	optional(t, "source_task", h.SourceTaskID)
	fmt.Fprintf(t, "updated_at:\t%s\n", h.UpdatedAt.UTC().Format(time.RFC3339))
	if extra != nil {
		extra(t)
	}
	return t.Flush()
}

func printHeuristicDetail(w io.Writer, d *kaizen.HeuristicDetail) error {
	recallable := "not recalled in this status"
	if d.Recallable {
		recallable = "recalled"
	}
	err := printHeuristic(w, d.Heuristic, func(t io.Writer) {
		fmt.Fprintf(t, "quality_weight:\t%.2f (%s)\n", d.Quality, recallable)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSupporting tasks (%d): %s\n", len(d.SupportTasks), strings.Join(d.SupportTasks, ", "))
	if len(d.Evidence) > 0 {
		fmt.Fprintf(w, "\nEvidence (%d):\n", len(d.Evidence))
		t := table(w)
		fmt.Fprintln(t, "  ACTION\tBEAD_ID\tSIMILARITY\tCREATED\tTEXT")
		for _, ev := range d.Evidence {
			fmt.Fprintf(t, "  %s\t%s\t%.2f\t%s\t%s\n", ev.Action, orDash(ev.TaskID), ev.Similarity,
				ev.CreatedAt.UTC().Format(time.RFC3339), clip(oneLine(ev.Text), 80))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(d.Feedback) > 0 {
		fmt.Fprintf(w, "\nFeedback (%d):\n", len(d.Feedback))
		t := table(w)
		fmt.Fprintln(t, "  VERDICT\tRECALL\tBEAD_ID\tSOURCE\tCREATED\tNOTE")
		for _, f := range d.Feedback {
			fmt.Fprintf(t, "  %s\t%s\t%s\t%s\t%s\t%s\n", f.Verdict, orDash(f.RecallID), orDash(f.TaskID), orDash(f.Source),
				f.CreatedAt.UTC().Format(time.RFC3339), clip(oneLine(f.Note), 60))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(d.Recalls) > 0 {
		fmt.Fprintf(w, "\nRecent recalls (%d):\n", len(d.Recalls))
		t := table(w)
		fmt.Fprintln(t, "  RECALL\tBEAD_ID\tINJECTED\tSCORE\tCREATED\tQUERY")
		for _, r := range d.Recalls {
			injected, score := false, 0.0
			for _, it := range r.Items {
				if it.RefID == d.Heuristic.ID {
					injected, score = it.Injected, it.Score
				}
			}
			fmt.Fprintf(t, "  %s\t%s\t%t\t%.3f\t%s\t%s\n", r.ID, orDash(r.TaskID), injected, score,
				r.CreatedAt.UTC().Format(time.RFC3339), clip(oneLine(r.Query), 60))
		}
		return t.Flush()
	}
	return nil
}

func heuristicFeedbackCommand(a *app) *cobra.Command {
	var in kaizen.HeuristicFeedbackInput
	cmd := &cobra.Command{
		Use:   "feedback ID helpful|misleading [--recall R] [--task T] [--note N]",
		Short: "Judge a recalled heuristic: helpful revalidates it, misleading on consecutive recalls makes it stale",
		Example: `  kaizen heuristic feedback heur-01jf… helpful --recall recall-01jg…
  kaizen heuristic feedback heur-01jf… misleading --note "the flag was removed in v3"`,
		Args: exactArgs(2, "a heuristic id and a verdict (helpful or misleading)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.HeuristicID, in.Verdict = args[0], args[1]
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.HeuristicFeedback(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				return printHeuristicAction(w, fmt.Sprintf("Recorded %s feedback %s on", strings.ToLower(in.Verdict), res.FeedbackID), res)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.RecallID, "recall", "", "the recall that showed the heuristic (recommended)")
	beadIDFlag(cmd, &in.TaskID, "the task the heuristic was used in (default: the recall's)")
	f.StringVar(&in.Note, "note", "", "why")
	f.StringVar(&in.Source, "source", "cli", "who judged")
	return cmd
}

func printHeuristicAction(w io.Writer, what string, res *kaizen.HeuristicActionResult) error {
	h := res.Heuristic
	fmt.Fprintf(w, "%s heuristic %s: %s\n", what, h.ID, clip(oneLine(h.Rule), 80))
	if tr := res.Transition; tr != nil && tr.From != tr.To {
		_, err := fmt.Fprintf(w, "status: %s → %s (%s)\n", tr.From, tr.To, oneLine(tr.Reason))
		return err
	}
	_, err := fmt.Fprintf(w, "status: %s\n", h.Status)
	return err
}

// heuristicActionCommand is archive, outdated, supersede or restore.
func heuristicActionCommand(a *app, action, short, example string) *cobra.Command {
	in := kaizen.HeuristicActionInput{Action: action}
	use := "ID"
	switch action {
	case "archive", "outdated":
		use = "ID --reason R"
	case "supersede":
		use = "ID --by OTHER [--reason R]"
	case "restore":
		use = "ID [--reason R]"
	}
	cmd := &cobra.Command{
		Use:     action + " " + use,
		Short:   short,
		Example: example,
		Args:    exactArgs(1, "one heuristic id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.HeuristicID = args[0]
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.HeuristicAction(cmd.Context(), in)
			if err != nil {
				return err
			}
			verb := map[string]string{"archive": "Archived", "outdated": "Marked outdated", "supersede": "Superseded",
				"restore": "Restored"}[action]
			return a.print(res, func(w io.Writer) error { return printHeuristicAction(w, verb, res) })
		},
	}
	reason := "why (optional)"
	if action == "archive" || action == "outdated" {
		reason = "why (required)"
	}
	cmd.Flags().StringVar(&in.Reason, "reason", "", reason)
	if action == "supersede" {
		cmd.Flags().StringVar(&in.By, "by", "", "the heuristic that replaces this one (required)")
	}
	return cmd
}
