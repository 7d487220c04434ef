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

func init() { register(patternCommand) }

func patternCommand(a *app) *cobra.Command {
	return group("pattern", "Inspect and manage decomposition patterns and their maturity",
		patternListCommand(a), patternShowCommand(a), patternObserveCommand(a),
		patternPromoteCommand(a), patternDeprecateCommand(a), patternResetCommand(a),
		patternExplainCommand(a))
}

func patternListCommand(a *app) *cobra.Command {
	var (
		q           kaizen.PatternQuery
		kind, state string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List patterns and anti-patterns with their maturity",
		Example: `  kaizen pattern list
  kaizen pattern list --kind anti_pattern
  kaizen pattern list --state proven --search "file type"`,
		Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "patterns", "ID\tSTATE\tSUCCESS\tFAILURE\tHELPFUL\tHARMFUL\tMULTIPLIER\tCONTENT",
			func(ctx context.Context, e *kaizen.Engine) (listed[kaizen.PatternInfo], error) {
				q.Kind, q.State = learning.PatternKind(kind), learning.MaturityState(state)
				l, err := e.ListPatterns(ctx, q)
				if err != nil {
					return listed[kaizen.PatternInfo]{}, err
				}
				return listed[kaizen.PatternInfo]{l, l.Items, l.Total}, nil
			}, func(p kaizen.PatternInfo) string {
				helpful, harmful, mult := "-", "-", "-" // anti-patterns carry no maturity of their own
				if p.Kind != learning.KindAntiPattern {
					m := p.Maturity
					helpful, harmful, mult = fmt.Sprintf("%.2f", m.DecayedHelpful), fmt.Sprintf("%.2f", m.DecayedHarmful), fmt.Sprintf("%.1f", m.Multiplier)
				}
				return fmt.Sprintf("%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s", p.ID, patternState(p), p.SuccessCount, p.FailureCount,
					helpful, harmful, mult, patternContent(p))
			}),
	}
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "", "only this kind: pattern or anti_pattern")
	f.StringVar(&state, "state", "", "only this maturity state: candidate, established, proven or deprecated")
	f.StringVar(&q.Tag, "tag", "", "only patterns with this tag")
	f.StringVar(&q.Search, "search", "", "only patterns whose content contains this text")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

// patternState is the state column: the maturity state, or "anti-pattern".
func patternState(p kaizen.PatternInfo) string {
	if p.Kind == learning.KindAntiPattern {
		return "anti-pattern"
	}
	s := string(p.Maturity.State)
	if p.Maturity.Manual {
		s += " (manual)"
	}
	if p.AntiPatternID != "" {
		s += " (inverted)"
	}
	return s
}

// patternContent is the content column: the content and the maturity label.
func patternContent(p kaizen.PatternInfo) string {
	if p.Kind == learning.KindAntiPattern {
		return oneLine(p.Content)
	}
	return oneLine(p.Content) + " " + p.Label
}

func patternShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show PATTERN",
		Short: "Show a pattern, by id or content, with its evidence",
		Example: `  kaizen pattern show pattern-01jf3x9k2m7q8r4t5v6w7x8y9z
  kaizen pattern show "Split by file type"`,
		Args: exactArgs(1, "one pattern id or content (quote content with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			d, err := e.GetPattern(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(d, func(w io.Writer) error { return printPatternDetail(w, d) })
		},
	}
}

func printPatternDetail(w io.Writer, d *kaizen.PatternDetail) error {
	m := d.Maturity
	t := table(w)
	fmt.Fprintf(t, "id:\t%s\n", d.ID)
	fmt.Fprintf(t, "content:\t%s\n", oneLine(d.Content))
	fmt.Fprintf(t, "kind:\t%s\n", d.Kind)
	if d.Kind == learning.KindAntiPattern {
		fmt.Fprintf(t, "source:\t%s\n", d.SourceID)
		fmt.Fprintf(t, "reason:\t%s\n", d.Reason)
	} else {
		manual := ""
		if m.Manual {
			manual = fmt.Sprintf(" (set manually; from feedback alone: %s)", m.ComputedState)
		}
		fmt.Fprintf(t, "state:\t%s%s %s\n", m.State, manual, d.Label)
		optional(t, "manual reason", d.ManualReason)
		fmt.Fprintf(t, "multiplier:\t%.1f\n", m.Multiplier)
		fmt.Fprintf(t, "decayed helpful/harmful:\t%.3f / %.3f (harmful ratio %.3f)\n", m.DecayedHelpful, m.DecayedHarmful, m.HarmfulRatio)
		fmt.Fprintf(t, "feedback events:\t%d helpful, %d harmful, %d neutral\n", m.HelpfulCount, m.HarmfulCount, m.NeutralCount)
	}
	fmt.Fprintf(t, "observations:\t%d succeeded, %d failed (success rate 95%% CI %.2f–%.2f)\n",
		d.SuccessCount, d.FailureCount, d.SuccessCI95[0], d.SuccessCI95[1])
	if d.AntiPattern != nil {
		fmt.Fprintf(t, "anti-pattern:\t%s: %s\n", d.AntiPattern.ID, oneLine(d.AntiPattern.Content))
	}
	fmt.Fprintf(t, "tags:\t%s\n", strings.Join(d.Tags, ", "))
	fmt.Fprintf(t, "example tasks:\t%s\n", strings.Join(d.ExampleTasks, ", "))
	fmt.Fprintf(t, "generation:\t%d\n", d.Generation)
	fmt.Fprintf(t, "created:\t%s\n", d.CreatedAt.Format(time.RFC3339))
	fmt.Fprintf(t, "updated:\t%s\n", d.UpdatedAt.Format(time.RFC3339))
	if err := t.Flush(); err != nil {
		return err
	}
	if len(d.RecentObservations) > 0 {
		fmt.Fprintln(w, "\nRecent observations:")
		t := table(w)
		for _, o := range d.RecentObservations {
			res := "failure"
			if o.Success {
				res = "success"
			}
			fmt.Fprintf(t, "  %s\t%s (%s)\t%s\n", o.Timestamp.Format(time.RFC3339), res, o.Type, o.TaskID)
		}
		return t.Flush()
	}
	return nil
}

func patternObserveCommand(a *app) *cobra.Command {
	var (
		in      kaizen.ObserveInput
		success bool
	)
	cmd := &cobra.Command{
		Use:   "observe PATTERN",
		Short: "Record one success or failure of a pattern (created when new)",
		Example: `  kaizen pattern observe "Split by file type" --success=false --bead-id bd-123.1
  kaizen pattern observe pattern-01jf3x9k2m7q8r4t5v6w7x8y9z --success --tag auth`,
		Args: exactArgs(1, "one pattern id or content (quote content with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("success") {
				return usageError{fmt.Errorf("--success is required: --success for a use that worked, --success=false for one that failed")}
			}
			in.Pattern, in.Success = args[0], &success
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ObservePattern(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				u := res.Update
				verb := "Observed"
				if u.Created {
					verb = "Created and observed"
				}
				obs := "failure"
				if u.Success {
					obs = "success"
				}
				fmt.Fprintf(w, "%s %s: %s\n", verb, u.ID, oneLine(u.Content))
				t := table(w)
				fmt.Fprintf(t, "observed:\t%s (%s feedback)\n", obs, u.FeedbackType)
				fmt.Fprintf(t, "counts:\t%d succeeded, %d failed\n", u.SuccessCount, u.FailureCount)
				fmt.Fprintf(t, "state:\t%s (multiplier %.1f)\n", stateChange(u.StateBefore, u.StateAfter), u.Multiplier)
				if err := t.Flush(); err != nil {
					return err
				}
				switch {
				case res.Inversion != nil:
					fmt.Fprintf(w, "\n!! INVERTED %s into anti-pattern %s: %s\n!! %s\n",
						u.ID, res.Inversion.Inverted.ID, res.Inversion.Reason, res.Inversion.Inverted.Content)
				case res.Pattern.AntiPatternID != "":
					if d, err := e.GetPattern(cmd.Context(), res.Pattern.Project, res.Pattern.AntiPatternID); err == nil {
						fmt.Fprintf(w, "\n!! %s remains an anti-pattern: %s\n", u.ID, d.Content)
					}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&success, "success", false, "the use worked (required: --success or --success=false)")
	beadIDFlag(cmd, &in.TaskID, "the task (bead) that used the pattern")
	f.StringVar(&in.Timestamp, "timestamp", "", "when it was used, RFC 3339 (default now)")
	f.StringSliceVar(&in.Tags, "tag", nil, "tag for a newly created pattern (repeatable)")
	return cmd
}

func patternPromoteCommand(a *app) *cobra.Command {
	var in kaizen.ManualInput
	cmd := &cobra.Command{
		Use:   "promote PATTERN",
		Short: "Mark a pattern proven by external validation",
		Long: `Mark a pattern proven by external validation (multiplier 1.5). A deprecated
pattern cannot be promoted (exit code 4): reset it first.`,
		Example: `  kaizen pattern promote "Split by feature" --reason "validated in the Q3 review"`,
		Args:    exactArgs(1, "one pattern id or content (quote content with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Pattern = args[0]
			return a.manual(cmd, "Promoted", in, (*kaizen.Engine).PromotePattern)
		},
	}
	cmd.Flags().StringVar(&in.Reason, "reason", "", "why the pattern is proven")
	return cmd
}

func patternDeprecateCommand(a *app) *cobra.Command {
	var in kaizen.ManualInput
	cmd := &cobra.Command{
		Use:     "deprecate PATTERN --reason TEXT",
		Short:   "Exclude a pattern from guidance (multiplier 0), with a reason",
		Example: `  kaizen pattern deprecate "One file per subtask" --reason "causes file conflicts in 80% of cases"`,
		Args:    exactArgs(1, "one pattern id or content (quote content with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Pattern = args[0]
			return a.manual(cmd, "Deprecated", in, (*kaizen.Engine).DeprecatePattern)
		},
	}
	cmd.Flags().StringVar(&in.Reason, "reason", "", "why the pattern must not be used (required)")
	return cmd
}

func patternResetCommand(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "reset PATTERN",
		Short: "Start a pattern's evaluation over",
		Long: `Start a pattern's evaluation over: the manual state is cleared, evidence
recorded before now no longer counts, and its anti-pattern is removed.
History stays stored.`,
		Example: `  kaizen pattern reset "One file per subtask" --reason "the build system changed"`,
		Args:    exactArgs(1, "one pattern id or content (quote content with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.manual(cmd, "Reset", kaizen.ManualInput{Pattern: args[0], Reason: reason}, (*kaizen.Engine).ResetPattern)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the evidence is discarded (kept in the result's notes)")
	return cmd
}

// manual runs a manual state change and prints the pattern after it.
func (a *app) manual(cmd *cobra.Command, verb string, in kaizen.ManualInput,
	do func(*kaizen.Engine, context.Context, kaizen.ManualInput) (*kaizen.ManualResult, error)) error {
	e, err := a.open(cmd.Context())
	if err != nil {
		return err
	}
	res, err := do(e, cmd.Context(), in)
	if err != nil {
		return err
	}
	return a.print(res, func(w io.Writer) error {
		p := res.Pattern
		fmt.Fprintf(w, "%s %s: %s\n", verb, p.ID, oneLine(p.Content))
		fmt.Fprintf(w, "state: %s (multiplier %.1f) %s\n", patternState(p), p.Maturity.Multiplier, p.Label)
		for _, n := range res.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		return nil
	})
}

func patternExplainCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "explain PATTERN",
		Short: "Explain why a pattern is in its state and whether it was inverted",
		Example: `  kaizen pattern explain "Split by file type"
  kaizen --now 2025-06-01T00:00:00Z pattern explain pattern-01jf3x9k2m7q8r4t5v6w7x8y9z`,
		Args: exactArgs(1, "one pattern id or content (quote content with spaces)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			x, err := e.ExplainPattern(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(x, func(w io.Writer) error {
				p, m := x.Pattern, x.Maturity
				fmt.Fprintf(w, "%s: %s\n", p.ID, oneLine(p.Content))
				fmt.Fprintf(w, "state: %s (from feedback: %s, multiplier %.1f)\n\n", m.State, m.ComputedState, m.Multiplier)
				fmt.Fprintln(w, "Why:")
				for _, s := range x.Why {
					fmt.Fprintf(w, "- %s\n", s)
				}
				fmt.Fprintln(w, "\nNumbers:")
				t := table(w)
				fmt.Fprintf(t, "  decayed helpful\t%.3f\n", m.DecayedHelpful)
				fmt.Fprintf(t, "  decayed harmful\t%.3f\n", m.DecayedHarmful)
				fmt.Fprintf(t, "  decayed total\t%.3f\n", m.DecayedTotal)
				fmt.Fprintf(t, "  harmful ratio\t%.3f\n", m.HarmfulRatio)
				fmt.Fprintf(t, "  feedback events\t%d helpful, %d harmful, %d neutral\n", m.HelpfulCount, m.HarmfulCount, m.NeutralCount)
				fmt.Fprintf(t, "  observations\t%d succeeded, %d failed (failure ratio %.3f)\n", p.SuccessCount, p.FailureCount, x.FailureRatio)
				fmt.Fprintf(t, "  inverted\t%t\n", x.Inverted)
				fmt.Fprintf(t, "  evaluated at\t%s\n", m.At.Format(time.RFC3339))
				if err := t.Flush(); err != nil {
					return err
				}
				return printThresholds(w, x.Thresholds)
			})
		},
	}
}

// printThresholds lists thresholds sorted by name.
func printThresholds(w io.Writer, th map[string]float64) error {
	fmt.Fprintln(w, "\nThresholds:")
	t := table(w)
	for _, k := range slices.Sorted(maps.Keys(th)) {
		fmt.Fprintf(t, "  %s\t%g\n", k, th[k])
	}
	return t.Flush()
}
