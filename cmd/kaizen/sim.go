package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/sim"
)

func init() { register(simCommand) }

// simList is one built-in world in `kaizen sim --list`.
type simList struct {
	Name        string  `json:"name"`
	Tasks       int     `json:"tasks"`
	K           int     `json:"strategies_per_task"`
	Combine     string  `json:"combine"`
	Strategies  int     `json:"strategies"`
	Families    int     `json:"families"`
	Drifts      []int   `json:"drifts"`
	Noise       float64 `json:"noise"`
	Description string  `json:"description"`
}

func simCommand(a *app) *cobra.Command {
	var (
		seeds, tasks, parallel int
		firstSeed              uint64
		policies, chart, store string
		list, timing           bool
	)
	cmd := &cobra.Command{
		Use:   "sim [WORLD]",
		Short: "Measure how well kaizen's guidance plans, against baselines, in simulated worlds",
		Long: `Run simulated agents in a world where decomposition strategies have hidden,
task-dependent and drifting success rates, and compare planning policies on
the same tasks and the same random draws:

  random          uniform choice of strategies
  oracle          knows the hidden rates: the best strategies for the task's family
  bandit          Beta-Bernoulli Thompson sampling, one posterior per strategy
  bandit-family   the same, one posterior per task family
  informed        a REFERENCE learner, not a product policy: told the task's
                  family and each chosen strategy's own success (drawn from
                  the hidden rate), Thompson sampling per (family, strategy);
                  shows what learning alone can reach with more information
                  than any agent has
  informed-discounted, informed-pooled, informed-ucb
                  the same feedback: a strategy's counts discounted by 0.97
                  at each of its observations (follows drifts); priors
                  centred on the other families' results; UCB1 instead of
                  sampling
  informed-full   REFERENCE: observes every strategy's own success at each
                  task (full information), takes the best posterior means
  informed-full-discounted
                  the same, counts discounted by 0.97 per observation
  kaizen          the real engine (throwaway store, simulated clock): plans with
                  PlanGuidance, uses the best-ranked strategies that are not
                  anti-patterns, records every outcome with RecordOutcome
  kaizen:KEY=VALUE[+KEY=VALUE…]
                  kaizen with [learning] keys changed, e.g.
                  kaizen:anti_pattern.min_observations=5

WORLD is a built-in world (see --list), a world file (.toml), or gen:SEED for
a world generated from a seed (a world nobody tuned for). Default:
task-dependent.

The report gives success overall and by phase (split at the drifts) and by
window, the share of the oracle's success, the cumulative expected regret and
the tasks needed to recover after each drift (to the oracle's level, and to
the policy's own level: per seed, pooled over seeds, and on skill above random
choice), as the mean over seeds with the range; --chart writes an SVG of the rolling expected success per policy.
kaizen.toml, --home and --db are not used: every kaizen run gets a fresh
store with the default configuration. See docs/sim.md.`,
		Example: `  kaizen sim --list
  kaizen sim task-dependent
  kaizen sim drifting --seeds 3 --tasks 500 --chart drifting.svg
  kaizen sim my-world.toml --policies random,oracle,kaizen --json
  kaizen sim gen:42 --policies oracle,bandit-family,kaizen,kaizen:anti_pattern.min_observations=10`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("%s takes at most one world, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if len(args) > 0 {
					return usageError{errors.New("--list takes no world")}
				}
				return simPrintList(a)
			}
			switch {
			case seeds < 1 || seeds > 1000:
				return usageError{fmt.Errorf("--seeds must be between 1 and 1000, got %d", seeds)}
			case tasks < 0 || tasks > sim.MaxTasks:
				return usageError{fmt.Errorf("--tasks must be between 1 and %d, got %d", sim.MaxTasks, tasks)}
			case parallel < 0:
				return usageError{fmt.Errorf("--parallel must be >= 0, got %d", parallel)}
			case !slices.Contains(sim.Stores, store):
				return usageError{fmt.Errorf("--store %q: want %s", store, strings.Join(sim.Stores, " or "))}
			}
			ref := "task-dependent"
			if len(args) == 1 {
				ref = args[0]
			}
			w, err := simWorld(ref)
			if err != nil {
				return err
			}
			if tasks > 0 && tasks != w.Tasks {
				if w, err = w.WithTasks(tasks); err != nil {
					return simInvalid(err)
				}
			}
			specs, err := sim.ParsePolicies(policies, sim.KaizenOptions{Store: store})
			if err != nil {
				return simInvalid(err)
			}
			opts := sim.Options{Policies: specs, Parallel: parallel}
			for i := range seeds {
				opts.Seeds = append(opts.Seeds, firstSeed+uint64(i))
			}
			if !a.json {
				fmt.Fprintf(a.stderr, "kaizen sim: world %s, %d tasks × %d seeds × %d policies…\n", w.Name, w.Tasks, seeds, len(specs))
			}
			bar := a.newProgress("runs", seeds*len(specs))
			opts.Progress = bar.lines(seeds * len(specs))
			rep, err := sim.Run(cmd.Context(), w, opts)
			bar.done()
			if err != nil {
				return err
			}
			if chart != "" {
				var buf bytes.Buffer
				if err := sim.WriteSVG(&buf, rep); err != nil {
					return err
				}
				if err := os.WriteFile(chart, buf.Bytes(), 0o644); err != nil {
					return &kaizen.Error{Op: "sim", Kind: kaizen.KindInvalid, Field: "chart", Message: err.Error(), Err: err}
				}
			}
			t := rep.Timing
			if !timing {
				rep.Timing = nil
			}
			return a.print(rep, func(out io.Writer) error {
				if err := sim.WriteTable(out, rep); err != nil {
					return err
				}
				if chart != "" {
					fmt.Fprintf(a.stderr, "chart written to %s\n", chart)
				}
				simPrintTiming(a.stderr, t)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&list, "list", false, "list the built-in worlds")
	f.IntVar(&seeds, "seeds", 3, "number of seeds (task sequences and draws) to average over")
	f.Uint64Var(&firstSeed, "seed", 1, "first seed; the run uses seeds seed, seed+1, …")
	f.IntVar(&tasks, "tasks", 0, "number of tasks (default: the world's)")
	f.StringVar(&policies, "policies", sim.DefaultPolicies, "comma-separated policies to compare")
	f.StringVar(&chart, "chart", "", "write an SVG chart of the rolling expected success to this file")
	f.StringVar(&store, "store", "memory", "store of the kaizen policies: memory, or sqlite (a file in a temporary directory, durable commits)")
	f.IntVar(&parallel, "parallel", 0, "runs (seed × policy) at once (default: the number of CPUs)")
	f.BoolVar(&timing, "timing", false, "include where the time went in the --json output")
	return cmd
}

// simWorld resolves a world reference: gen:SEED, a built-in name, or a file.
func simWorld(ref string) (*sim.World, error) {
	w, ok, err := sim.Resolve(ref)
	if err != nil {
		return nil, simInvalid(err)
	}
	if ok {
		return w, nil
	}
	data, err := os.ReadFile(ref)
	if err != nil {
		hint := "give a built-in world (kaizen sim --list), a .toml file, or gen:SEED"
		if errors.Is(err, os.ErrNotExist) {
			return nil, &kaizen.Error{Op: "sim", Kind: kaizen.KindInvalid, Field: "world",
				Message: fmt.Sprintf("%q is neither a built-in world nor a file", ref), Hint: hint}
		}
		return nil, &kaizen.Error{Op: "sim", Kind: kaizen.KindInvalid, Field: "world", Message: err.Error(), Hint: hint, Err: err}
	}
	w, err = sim.ParseWorld(ref, data)
	if err != nil {
		return nil, simInvalid(err)
	}
	return w, nil
}

// simInvalid turns the simulator's validation errors into invalid-input
// errors (exit code 2).
func simInvalid(err error) error {
	var we *sim.WorldError
	var pe *sim.PolicyError
	switch {
	case errors.As(err, &we):
		msg := we.Message
		if we.Source != "" {
			msg += " (world " + we.Source + ")"
		}
		return &kaizen.Error{Op: "sim", Kind: kaizen.KindInvalid, Field: we.Key, Message: msg, Err: err,
			Hint: "see docs/sim.md for the world format"}
	case errors.As(err, &pe):
		return &kaizen.Error{Op: "sim", Kind: kaizen.KindInvalid, Field: "policies", Message: err.Error(), Err: err}
	}
	return err
}

func simPrintList(a *app) error {
	var out []simList
	for _, name := range sim.BuiltinNames() {
		w, err := sim.Builtin(name)
		if err != nil {
			return err
		}
		out = append(out, simList{Name: w.Name, Tasks: w.Tasks, K: w.K, Combine: string(w.Combine),
			Strategies: len(w.Strategies), Families: len(w.Families), Drifts: w.DriftTasks(), Noise: w.Noise,
			Description: w.Description})
	}
	return a.print(out, func(wr io.Writer) error {
		t := tabwriter.NewWriter(wr, 0, 0, 2, ' ', 0)
		fmt.Fprintln(t, "WORLD\tTASKS\tK\tCOMBINE\tFAMILIES\tDRIFT AT\tNOISE")
		for _, l := range out {
			drift := "-"
			if len(l.Drifts) > 0 {
				drift = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(l.Drifts)), ","), "[]")
			}
			fmt.Fprintf(t, "%s\t%d\t%d\t%s\t%d\t%s\t%.2f\n", l.Name, l.Tasks, l.K, l.Combine, l.Families, drift, l.Noise)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		for _, l := range out {
			fmt.Fprintf(wr, "\n%s: %s\n", l.Name, l.Description)
		}
		return nil
	})
}

// simPrintTiming reports where the time went, on stderr.
func simPrintTiming(w io.Writer, t *sim.Timing) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "\ntime: %.2fs wall, %d runs at once; per policy (summed over seeds):", t.WallSeconds, t.Parallel)
	names := make([]string, 0, len(t.Policies))
	for k := range t.Policies {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(w, " %s %.2fs", k, t.Policies[k])
	}
	if len(t.Engine) > 0 {
		fmt.Fprintf(w, "; kaizen policies: plan guidance %.2fs, record outcome %.2fs, reading guidance %.2fs, engine open and close %.2fs",
			t.Engine["plan_guidance"], t.Engine["record_outcome"], t.Engine["read_guidance"], t.Engine["open_close"])
	}
	fmt.Fprintln(w)
}
