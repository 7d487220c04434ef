package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

func init() { register(exploreCommand) }

func exploreCommand(a *app) *cobra.Command {
	return group("explore", "Exploration tracking: phases, budgets, nudges and exit for agent sessions",
		exploreEnableCommand(a, true), exploreEnableCommand(a, false), exploreSettingsCommand(a),
		exploreStartCommand(a), exploreEventCommand(a), exploreStateCommand(a), exploreListCommand(a),
		exploreReplayCommand(a))
}

// strategyFlags are the strategy options shared by enable, start and replay.
type strategyFlags struct{ name, file, budgetFile string }

func (s *strategyFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.name, "strategy", "", "built-in strategy: "+strings.Join(explore.BuiltinStrategies(), ", "))
	f.StringVar(&s.file, "strategy-file", "", "custom strategy in TOML (see docs/explore.md)")
	f.StringVar(&s.budgetFile, "budget-file", "", "budget in TOML, instead of the strategy pipeline's default")
}

func (s *strategyFlags) settings() (kaizen.ExploreSettings, error) {
	out := kaizen.ExploreSettings{Strategy: s.name}
	if s.name != "" && s.file != "" {
		return out, usageError{fmt.Errorf("give --strategy or --strategy-file, not both")}
	}
	read := func(path string) (string, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", usageError{fmt.Errorf("cannot read %s: %w", path, err)}
		}
		return string(data), nil
	}
	var err error
	if s.file != "" {
		if out.StrategyTOML, err = read(s.file); err != nil {
			return out, err
		}
	}
	if s.budgetFile != "" {
		if out.BudgetTOML, err = read(s.budgetFile); err != nil {
			return out, err
		}
	}
	return out, nil
}

func exploreEnableCommand(a *app, enable bool) *cobra.Command {
	var sf strategyFlags
	use, short := "enable", "Track the exploration of this project's agent sessions (client hooks feed them)"
	if !enable {
		use, short = "disable", "Stop tracking exploration in this project"
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Args: noArgs,
		Example: "  kaizen explore enable --strategy analyst\n  kaizen explore enable --strategy-file my-strategy.toml",
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			in, err := sf.settings()
			if err != nil {
				return err
			}
			cur, err := e.GetExploreSettings(cmd.Context(), "")
			if err != nil {
				return err
			}
			switch {
			case !enable: // keep the configured strategy for a later enable
				in = *cur
			case sf.name == "" && sf.file == "":
				// No strategy given: keep the configured one, and its budget
				// unless a new one is given. (A new strategy drops the old
				// budget, which belongs to the old strategy's pipeline.)
				in.Strategy, in.StrategyTOML = cur.Strategy, cur.StrategyTOML
				if sf.budgetFile == "" {
					in.BudgetTOML = cur.BudgetTOML
				}
			}
			in.Enabled = enable
			res, err := e.SetExploreSettings(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printExploreSettings(w, res) })
		},
	}
	if enable {
		sf.add(cmd)
	}
	return cmd
}

func printExploreSettings(w io.Writer, s *kaizen.ExploreSettings) error {
	state := "disabled"
	if s.Enabled {
		state = "enabled"
	}
	strategy := s.Strategy
	if strategy == "" {
		strategy = kaizen.DefaultExploreStrategy + " (default)"
	}
	custom := ""
	if s.StrategyTOML != "" {
		custom = ", custom definition"
	}
	if s.BudgetTOML != "" {
		custom += ", custom budget"
	}
	_, err := fmt.Fprintf(w, "Exploration tracking %s for project %s (strategy %s%s)\n", state, s.Project, strategy, custom)
	return err
}

func exploreSettingsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "settings", Short: "Show the project's exploration settings", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.GetExploreSettings(cmd.Context(), "")
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printExploreSettings(w, res) })
		},
	}
}

func exploreStartCommand(a *app) *cobra.Command {
	var sf strategyFlags
	cmd := &cobra.Command{
		Use: "start SESSION", Short: "Start an exploration session (idempotent)", Args: exactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			s, err := sf.settings()
			if err != nil {
				return err
			}
			res, err := e.ExploreStart(cmd.Context(), kaizen.ExploreStartInput{SessionID: args[0], Strategy: s.Strategy,
				StrategyTOML: s.StrategyTOML, BudgetTOML: s.BudgetTOML})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { return printExploreInfo(w, res) })
		},
	}
	sf.add(cmd)
	return cmd
}

func exploreEventCommand(a *app) *cobra.Command {
	var input string
	var autoStart bool
	cmd := &cobra.Command{
		Use:   "event SESSION",
		Short: "Feed events (JSON lines, the replay schema) to a session; prints the nudge to give the agent",
		Long: `Feed events to an exploration session: one JSON object per line, in the
replay schema of docs/explore.md (tick, rollback, tool_call, end_round, thought,
text, force_terminal). Prints the nudge the agent should get now, if any.`,
		Example: `  printf '{"type":"tick"}\n{"type":"tool_call","name":"Grep","args":{"pattern":"auth"}}\n{"type":"end_round"}\n' |
    kaizen explore event sess-1 --input -`,
		Args: exactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, closeFn, err := openInput(a, input)
			if err != nil {
				return err
			}
			defer closeFn()
			events, err := explore.ParseEvents(r)
			if err != nil {
				return usageError{err}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ExploreEvent(cmd.Context(), kaizen.ExploreEventInput{SessionID: args[0], Events: events, AutoStart: autoStart})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if res.Nudge != nil {
					fmt.Fprintf(w, "nudge (%s): %s\n\n", res.Nudge.Kind, res.Nudge.Text)
				}
				return printExploreInfo(w, &res.Session)
			})
		},
	}
	cmd.Flags().StringVar(&input, "input", "-", "events file (JSON lines), or - for standard input")
	cmd.Flags().BoolVar(&autoStart, "auto-start", false, "start the session with the project's settings if it does not exist")
	return cmd
}

func exploreStateCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "state SESSION", Short: "Show a session: phase, metrics and per-round timeline", Args: exactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ExploreState(cmd.Context(), "", args[0])
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if err := printExploreInfo(w, res); err != nil {
					return err
				}
				fmt.Fprintln(w)
				return explore.RenderTimeline(w, *res.Timeline)
			})
		},
	}
}

func exploreListCommand(a *app) *cobra.Command {
	var q kaizen.ExploreQuery
	cmd := &cobra.Command{
		Use: "list", Short: "List exploration sessions, most recently updated first", Args: noArgs,
		RunE: runList(a, &q.Limit, &q.Offset, "sessions", "SESSION\tSTRATEGY\tPHASE\tROUNDS\tTOOL CALLS\tEXIT\tUPDATED",
			func(ctx context.Context, e *kaizen.Engine) (listed[kaizen.ExploreInfo], error) {
				l, err := e.ListExploreSessions(ctx, q)
				if err != nil {
					return listed[kaizen.ExploreInfo]{}, err
				}
				return listed[kaizen.ExploreInfo]{l, l.Items, l.Total}, nil
			}, func(s kaizen.ExploreInfo) string {
				exit := s.Exit
				if !s.Done {
					exit = "(running)"
				}
				return fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%s\t%s", s.SessionID, s.Strategy, s.Phase, s.Iteration,
					s.Metrics.TotalToolCalls, exit, s.UpdatedAt.Format(time.RFC3339))
			}),
	}
	cmd.Flags().BoolVar(&q.ActiveOnly, "active", false, "only sessions that have not ended")
	pageFlags(cmd, &q.Limit, &q.Offset)
	return cmd
}

func exploreReplayCommand(a *app) *cobra.Command {
	var sf strategyFlags
	cmd := &cobra.Command{
		Use:   "replay FILE.jsonl",
		Short: "Run a recorded agent log through a strategy: phase timeline, nudges and exit",
		Long: `Replay a recorded agent log (JSON lines, the schema of docs/explore.md) through a
strategy and budget, and print the per-round timeline: phases, tool calls, new
information, nudges, transitions and the exit. Nothing is stored: use it to tune
strategies and budgets. FILE may be - for standard input.`,
		Example: "  kaizen explore replay session.jsonl --strategy analyst --budget-file tight.toml",
		Args:    exactArgs(1, "a log file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, closeFn, err := openInput(a, args[0])
			if err != nil {
				return err
			}
			defer closeFn()
			events, err := explore.ParseEvents(r)
			if err != nil {
				return usageError{err}
			}
			s, err := sf.settings()
			if err != nil {
				return err
			}
			tl, err := kaizen.ExploreReplay(s, events)
			if err != nil {
				return err
			}
			return a.print(tl, func(w io.Writer) error { return explore.RenderTimeline(w, *tl) })
		},
	}
	sf.add(cmd)
	return cmd
}

func printExploreInfo(w io.Writer, s *kaizen.ExploreInfo) error {
	t := table(w)
	fmt.Fprintf(t, "session:\t%s (project %s)\n", s.SessionID, s.Project)
	fmt.Fprintf(t, "strategy:\t%s\n", s.Strategy)
	fmt.Fprintf(t, "phase:\t%s (round %d)\n", s.Phase, s.Iteration)
	m := s.Metrics
	fmt.Fprintf(t, "tool calls:\t%d (new information in %.0f%% of rounds)\n", m.TotalToolCalls, m.NewInfoRate*100)
	fmt.Fprintf(t, "files, patterns, queries:\t%d, %d, %d\n", m.UniqueFiles, m.UniquePatterns, m.UniqueQueries)
	if s.Done {
		fmt.Fprintf(t, "ended:\t%s\n", s.Exit)
	} else if m.GracefulExit {
		fmt.Fprintf(t, "ending:\tgraceful exit in progress\n")
	}
	return t.Flush()
}
