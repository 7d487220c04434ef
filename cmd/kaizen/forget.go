package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
)

// The data a user owns: `kaizen forget` deletes records, `kaizen heuristic
// edit` corrects a heuristic; `kaizen learned` and `kaizen projects` read
// what was learned lately and which projects hold data.

func init() {
	register(forgetCommand)
	register(learnedCommand)
	register(projectsCommand)
}

func forgetCommand(a *app) *cobra.Command {
	one := func(kind, short, example string, do func(*kaizen.Engine) func(context.Context, kaizen.ForgetInput) (*kaizen.ForgetResult, error)) *cobra.Command {
		return &cobra.Command{
			Use: kind + " ID", Short: short, Example: example, Args: exactArgs(1, "one "+kind+" id"),
			RunE: func(cmd *cobra.Command, args []string) error {
				e, err := a.open(cmd.Context())
				if err != nil {
					return err
				}
				res, err := do(e)(cmd.Context(), kaizen.ForgetInput{ID: args[0]})
				if err != nil {
					return err
				}
				return a.print(res, func(w io.Writer) error {
					_, err := fmt.Fprintf(w, "Forgot %s %s (recall indexes: %s; %d signal(s) removed, %d recall(s), %d skill(s), %d heuristic(s) changed).\n",
						res.Kind, res.ID, yesNo(res.Unindexed, "removed", "not indexed"), res.Signals, res.Recalls, res.Skills, res.Heuristics)
					return err
				})
			},
		}
	}
	outcome := &cobra.Command{
		Use:   "outcome ID",
		Short: "Delete an outcome and recompute what it taught (pattern counts and maturity, inversions, criterion weights)",
		Example: `  kaizen forget outcome out-01jf3x…
  kaizen outcome list --task bd-42   # to find the id`,
		Args: exactArgs(1, "one outcome id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.DeleteOutcome(cmd.Context(), kaizen.ForgetInput{ID: args[0]})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Deleted outcome %s of task %s; %d pattern observation(s) removed.\n", res.Outcome.ID, res.Outcome.TaskID, res.Observations)
				for _, p := range res.Patterns {
					fmt.Fprintf(w, "  pattern %s %q: %d succeeded, %d failed, %s\n", p.ID, p.Content, p.SuccessCount, p.FailureCount, p.Maturity.State)
				}
				for _, id := range res.PatternsRemoved {
					fmt.Fprintf(w, "  pattern %s removed: only this outcome had used it\n", id)
				}
				for _, id := range res.AntiPatternsRemoved {
					fmt.Fprintf(w, "  anti-pattern %s removed: the inversion no longer holds\n", id)
				}
				for _, c := range res.Criteria {
					fmt.Fprintf(w, "  criterion %s: weight %.2f\n", c.Criterion, c.Weight)
				}
				if res.TaskReopened {
					fmt.Fprintf(w, "  task %s is open again\n", res.Outcome.TaskID)
				}
				return nil
			})
		},
	}
	return group("forget", "Delete what kaizen recorded: outcomes, turns, memories, heuristics, skills", outcome,
		one("turn", "Delete a captured turn: its text leaves recall, the signals quoting it and later exports",
			"  kaizen forget turn turn-3f…", func(e *kaizen.Engine) func(context.Context, kaizen.ForgetInput) (*kaizen.ForgetResult, error) {
				return e.DeleteTurn
			}),
		one("memory", "Take a captured turn out of recall, keeping the turn",
			"  kaizen forget memory turn-3f…", func(e *kaizen.Engine) func(context.Context, kaizen.ForgetInput) (*kaizen.ForgetResult, error) {
				return e.ForgetMemory
			}),
		one("heuristic", "Delete a heuristic: it leaves recall, the skills that adopted it and later exports",
			"  kaizen forget heuristic heur-01jf…", func(e *kaizen.Engine) func(context.Context, kaizen.ForgetInput) (*kaizen.ForgetResult, error) {
				return e.DeleteHeuristic
			}),
		one("skill", "Delete a skill (id or name) with its versions and SKILL.md file",
			"  kaizen forget skill deploy-checklist", func(e *kaizen.Engine) func(context.Context, kaizen.ForgetInput) (*kaizen.ForgetResult, error) {
				return e.DeleteSkill
			}))
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// heuristicEditCommand is `kaizen heuristic edit`.
func heuristicEditCommand(a *app) *cobra.Command {
	var in kaizen.HeuristicEditInput
	cmd := &cobra.Command{
		Use:     "edit ID [--trigger T] [--rule R] [--why W]",
		Short:   "Correct a heuristic's text; recall follows the new text",
		Example: `  kaizen heuristic edit heur-01jf… --rule "Change the template, then run make generate."`,
		Args:    exactArgs(1, "one heuristic id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			in.HeuristicID = args[0]
			res, err := e.EditHeuristic(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				h := res.Heuristic
				_, err := fmt.Fprintf(w, "Heuristic %s edited.\n  trigger: %s\n  rule:    %s\n  why:     %s\n", h.ID, h.Trigger, h.Rule, oneLine(h.Why))
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Trigger, "trigger", "", "the new trigger")
	f.StringVar(&in.Rule, "rule", "", "the new rule")
	f.StringVar(&in.Why, "why", "", "the new reason")
	return cmd
}

func learnedCommand(a *app) *cobra.Command {
	var q kaizen.LearnedQuery
	cmd := &cobra.Command{
		Use:   "learned [--days N | --since T]",
		Short: "What kaizen learned lately: new proven patterns and anti-patterns, heuristics, skills, the success trend",
		Example: `  kaizen learned
  kaizen learned --days 30
  kaizen learned --since 2025-01-31T00:00:00Z --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			l, err := e.Learned(cmd.Context(), q)
			if err != nil {
				return err
			}
			return a.print(l, func(w io.Writer) error { return printLearned(w, l) })
		},
	}
	cmd.Flags().IntVar(&q.Days, "days", 0, "the last N days (default 7)")
	cmd.Flags().StringVar(&q.Since, "since", "", "since this RFC 3339 time")
	return cmd
}

func printLearned(w io.Writer, l *kaizen.Learned) error {
	c, p := l.Trend.Current, l.Trend.Previous
	fmt.Fprintf(w, "Project %s, %s → %s: %d outcome(s), %d task(s).\n", l.Project, l.Since.Format(time.DateTime), l.Until.Format(time.DateTime), l.Outcomes, l.Tasks)
	fmt.Fprintf(w, "Success: %s; the period before: %s.\n", rateText(c), rateText(p))
	section := func(title string, n int) bool {
		if n > 0 {
			fmt.Fprintf(w, "\n%s (%d):\n", title, n)
		}
		return n > 0
	}
	if section("Newly proven patterns", len(l.NewProven)) {
		for _, x := range l.NewProven {
			fmt.Fprintf(w, "  %s %q: %s → %s, %d observation(s) in the period; tasks %s\n", x.ID, x.Content, x.From, x.To, x.EvidenceTotal, tasksOf(x.Evidence))
		}
	}
	if section("New anti-patterns", len(l.NewAntiPatterns)) {
		for _, x := range l.NewAntiPatterns {
			fmt.Fprintf(w, "  %s %q (%s); failed tasks %s\n", x.ID, x.Content, x.Reason, tasksOf(x.Failures))
		}
	}
	if section("Newly deprecated patterns", len(l.NewDeprecated)) {
		for _, x := range l.NewDeprecated {
			fmt.Fprintf(w, "  %s %q: %s → %s\n", x.ID, x.Content, x.From, x.To)
		}
	}
	for _, hs := range []struct {
		title string
		items []kaizen.HeuristicLearned
	}{{"Heuristics created", l.HeuristicsCreated}, {"Heuristics promoted", l.HeuristicsPromoted}, {"Heuristics gone stale", l.HeuristicsStale}} {
		if section(hs.title, len(hs.items)) {
			for _, h := range hs.items {
				fmt.Fprintf(w, "  %s [%s, %s] %s\n", h.ID, h.Kind, h.Status, clip(oneLine(h.Rule), 90))
			}
		}
	}
	if section("Skills activated", len(l.SkillsActivated)) {
		for _, s := range l.SkillsActivated {
			fmt.Fprintf(w, "  %s v%d: %s\n", s.Name, s.Version, clip(oneLine(s.Description), 90))
		}
	}
	if l.Empty() {
		fmt.Fprintln(w, "\nNothing new was learned in this period.")
	}
	return nil
}

func rateText(r kaizen.RateInterval) string {
	if r.Total == 0 {
		return "no outcomes"
	}
	return fmt.Sprintf("%d/%d (%.0f%%, 95%% interval %.0f–%.0f%%)", r.Succeeded, r.Total, r.Rate*100, r.Low*100, r.High*100)
}

func tasksOf(obs []kaizen.LearnedObservation) string {
	ids := make([]string, 0, len(obs))
	for _, o := range obs {
		ids = append(ids, o.TaskID)
	}
	return strings.Join(ids, ", ")
}

func projectsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "projects",
		Short:   "List the projects holding data, with their counts and last activity",
		Example: "  kaizen projects --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			ps, err := e.ProjectSummaries(cmd.Context(), kaizen.ProjectQuery{Counts: true})
			if err != nil {
				return err
			}
			return a.print(map[string]any{"projects": ps}, func(w io.Writer) error {
				if len(ps) == 0 {
					_, err := fmt.Fprintln(w, "No project holds data yet. Connect an agent with `kaizen setup <client>` (claude, codex, opencode, cursor).")
					return err
				}
				t := table(w)
				fmt.Fprintln(t, "PROJECT\tLAST ACTIVITY\tOUTCOMES\tPATTERNS\tTASKS\tHEURISTICS\tTURNS\tERRORS")
				for _, p := range ps {
					last := "–"
					if !p.LastActivity.IsZero() {
						last = p.LastActivity.Format(time.DateTime)
					}
					fmt.Fprintf(t, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", p.Project, last, p.Outcomes, p.Patterns, p.Tasks, p.Heuristics, p.Turns, p.Errors)
				}
				return t.Flush()
			})
		},
	}
}
