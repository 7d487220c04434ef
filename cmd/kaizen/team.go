package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

// The team engine (seed 004): kaizen team create|show|list|dissolve,
// kaizen team task add|claim|heartbeat|complete|fail|release|cancel|list|graph,
// kaizen msg send|inbox|ack|tail, kaizen worker run. ("kaizen task" is the
// tracked agent sessions, so a team's tasks live under "kaizen team task".)

func init() {
	register(teamCommand)
	register(msgCommand)
	register(workerCommand)
}

func teamCommand(a *app) *cobra.Command {
	return group("team", "Teams of agents: members and roles, a durable task graph with leases, a message bus",
		teamCreateCommand(a), teamShowCommand(a), teamListCommand(a), teamDissolveCommand(a), teamTaskCommand(a),
		teamRunCommand(a), teamSelectCommand(a))
}

func jsonArg(what, s string) (json.RawMessage, error) {
	if s == "" {
		return nil, nil
	}
	if s[0] == '@' {
		data, err := os.ReadFile(s[1:])
		if err != nil {
			return nil, usageError{fmt.Errorf("cannot read %s: %w", s[1:], err)}
		}
		s = string(data)
	}
	if !json.Valid([]byte(s)) {
		return nil, usageError{fmt.Errorf("--%s is not valid JSON", what)}
	}
	return json.RawMessage(s), nil
}

func teamCreateCommand(a *app) *cobra.Command {
	var members, commands []string
	var file string
	var in kaizen.TeamInput
	cmd := &cobra.Command{
		Use:   "create NAME --member NAME:ROLE[:CAP,CAP] … [--command NAME=CMD …]",
		Short: "Create a team",
		Example: "  kaizen team create web --member lead:coordinator --member ann:executor:go,sql --member tess:tester\n" +
			"  kaizen team create bots --member p:planner --command p='claude -p \"$KAIZEN_TASK_SUBJECT\"'\n" +
			"  kaizen team create web --file team.json",
		Args: exactArgs(1, "a team name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file != "" {
				data, err := os.ReadFile(file)
				if err != nil {
					return usageError{err}
				}
				if err := json.Unmarshal(data, &in); err != nil {
					return usageError{fmt.Errorf("%s: %w", file, err)}
				}
			}
			in.Name, in.Project = args[0], a.project
			cmds := map[string]string{}
			for _, c := range commands {
				name, command, ok := strings.Cut(c, "=")
				if !ok || command == "" {
					return usageError{fmt.Errorf("--command %q: want NAME=COMMAND", c)}
				}
				cmds[name] = command
			}
			for _, m := range members {
				parts := strings.SplitN(m, ":", 3)
				if len(parts) < 2 {
					return usageError{fmt.Errorf("--member %q: want NAME:ROLE[:CAP,CAP]", m)}
				}
				mem := team.Member{Name: parts[0], Role: team.Role(parts[1]), Worker: team.Worker{Kind: team.WorkerAgent}}
				if len(parts) == 3 && parts[2] != "" {
					mem.Capabilities = strings.Split(parts[2], ",")
				}
				if c, ok := cmds[mem.Name]; ok {
					mem.Worker = team.Worker{Kind: team.WorkerCommand, Command: c}
					delete(cmds, mem.Name)
				}
				in.Members = append(in.Members, mem)
			}
			for name := range cmds {
				return usageError{fmt.Errorf("--command names %q, which is no --member", name)}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.CreateTeam(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { printTeam(w, res); return nil })
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&members, "member", nil, "a member NAME:ROLE[:CAP,CAP] (repeat)")
	f.StringArrayVar(&commands, "command", nil, "make member NAME a command worker: NAME=COMMAND (repeat)")
	f.StringVar(&file, "file", "", "the team as JSON (name, members, limits, settings)")
	f.IntVar(&in.Limits.ConcurrentCommandWorkers, "max-command-workers", 0, "concurrent command workers (0: unlimited)")
	f.IntVar(&in.Limits.RunsPerHour, "max-runs-per-hour", 0, "command worker runs per hour (0: unlimited)")
	f.Int64Var(&in.Limits.Tokens, "max-tokens", 0, "tokens the team's workers may spend (0: unlimited)")
	f.Float64Var(&in.Limits.Cost, "max-cost", 0, "cost the team's workers may spend (0: unlimited)")
	f.IntVar(&in.Settings.LeaseSeconds, "lease", 0, "lease length in seconds (default 60)")
	f.IntVar(&in.Settings.VisibilitySeconds, "visibility", 0, "seconds before an unacknowledged message is delivered again (default 30)")
	f.IntVar(&in.Settings.MaxAttempts, "max-attempts", 0, "leases a task gets before an expiry fails it (default 5)")
	return cmd
}

func printTeam(w io.Writer, t *kaizen.TeamInfo) {
	state := "active"
	if t.Dissolved {
		state = "dissolved"
	}
	fmt.Fprintf(w, "Team %s (%s, project %s), %d members\n", t.Name, state, t.Project, len(t.Members))
	for _, m := range t.Members {
		fmt.Fprintf(w, "  %-12s %-12s %-8s %s\n", m.Name, m.Role, m.Worker.Kind, strings.Join(m.Capabilities, ","))
	}
	if len(t.Tasks) > 0 {
		var parts []string
		for _, s := range team.TaskStatuses {
			if n := t.Tasks[s]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", s, n))
			}
		}
		fmt.Fprintf(w, "Tasks: %s\n", strings.Join(parts, ", "))
	}
	if c := t.Coordinator; c != nil {
		fmt.Fprintf(w, "Coordinator: %s (patterns %v)\n", c.State, c.Patterns)
	}
}

func teamShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "show NAME", Short: "Show a team: members, task counts, coordinator", Args: exactArgs(1, "a team name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.GetTeam(cmd.Context(), a.project, args[0])
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { printTeam(w, res); return nil })
		},
	}
}

func teamListCommand(a *app) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use: "list", Short: "List the project's teams", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ListTeamsPage(cmd.Context(), a.project, all)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				for _, t := range res.Items {
					fmt.Fprintf(w, "%s\t%d members\n", t.Name, len(t.Members))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include dissolved teams")
	return cmd
}

func teamDissolveCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "dissolve NAME", Short: "Dissolve a team (its open tasks are cancelled)", Args: exactArgs(1, "a team name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.DissolveTeam(cmd.Context(), a.project, args[0])
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { printTeam(w, res); return nil })
		},
	}
}

func teamTaskCommand(a *app) *cobra.Command {
	return group("task", "A team's task graph: add, claim, heartbeat, complete, fail, list, graph",
		taskAddCommand(a), taskClaimCommand(a), taskHeartbeatCommand(a), taskReportCommand(a, team.StatusCompleted),
		taskReportCommand(a, team.StatusFailed), taskReleaseCommand(a), taskCancelCommand(a), taskTeamListCommand(a), taskGraphCommand(a))
}

func taskAddCommand(a *app) *cobra.Command {
	var t kaizen.TeamTaskInput
	var teamName, meta string
	cmd := &cobra.Command{
		Use: "add --team T SUBJECT", Short: "Add a task to a team's graph (cycles are refused)", Args: exactArgs(1, "a subject"),
		Example: "  kaizen team task add --team web --id impl --role executor --blocked-by plan --gate 'go test ./...' 'Implement login'",
		RunE: func(cmd *cobra.Command, args []string) error {
			t.Subject = args[0]
			var err error
			if t.Metadata, err = jsonArg("metadata", meta); err != nil {
				return err
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.AddTeamTasks(cmd.Context(), kaizen.AddTeamTasksInput{Project: a.project, Team: teamName, Tasks: []kaizen.TeamTaskInput{t}})
			if err != nil {
				return err
			}
			return a.print(res[0], func(w io.Writer) error { printTaskLine(w, res[0]); return nil })
		},
	}
	f := cmd.Flags()
	f.StringVar(&teamName, "team", "", "the team")
	f.StringVar(&t.ID, "id", "", "task id (generated when omitted)")
	f.StringVar(&t.Description, "description", "", "what to do")
	f.StringVar((*string)(&t.Role), "role", "", "role that may claim it")
	f.StringVar(&t.Owner, "owner", "", "member who must do it")
	f.StringSliceVar(&t.Capabilities, "cap", nil, "required capabilities")
	f.StringSliceVar(&t.BlockedBy, "blocked-by", nil, "ids of tasks that must complete first")
	f.StringVar(&t.Gate, "gate", "", "command whose exit status 0 is required to complete")
	f.StringVar(&meta, "metadata", "", "JSON metadata (or @file)")
	return cmd
}

func printTaskLine(w io.Writer, t team.Task) {
	fmt.Fprintf(w, "%-28s %-12s %s", t.ID, t.Status, t.Subject)
	if t.Lease.Holder != "" {
		fmt.Fprintf(w, "  [%s, epoch %d, until %s]", t.Lease.Holder, t.Lease.Epoch, t.Lease.ExpiresAt.Format(time.RFC3339))
	}
	if len(t.BlockedBy) > 0 {
		fmt.Fprintf(w, "  ← %s", strings.Join(t.BlockedBy, ", "))
	}
	fmt.Fprintln(w)
}

type leaseFlags struct {
	team, member, task string
	epoch              int64
}

func (l *leaseFlags) add(cmd *cobra.Command, withTask bool) {
	f := cmd.Flags()
	f.StringVar(&l.team, "team", "", "the team")
	f.StringVar(&l.member, "member", "", "your member name")
	if withTask {
		f.StringVar(&l.task, "task", "", "the task id")
		f.Int64Var(&l.epoch, "epoch", 0, "the lease epoch the claim returned")
	}
}

func taskClaimCommand(a *app) *cobra.Command {
	var l leaseFlags
	var wait, lease int
	cmd := &cobra.Command{
		Use: "claim --team T --member M", Short: "Lease the next ready task you may take", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.ClaimTask(cmd.Context(), kaizen.ClaimInput{Project: a.project, Team: l.team, Member: l.member, WaitSeconds: wait, LeaseSeconds: lease})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				if res.Task == nil {
					fmt.Fprintln(w, "No task is ready.")
					return nil
				}
				printTaskLine(w, *res.Task)
				return nil
			})
		},
	}
	l.add(cmd, false)
	cmd.Flags().IntVar(&wait, "wait", 0, "wait up to this many seconds for a task")
	cmd.Flags().IntVar(&lease, "lease", 0, "lease seconds (default the team's)")
	return cmd
}

func taskHeartbeatCommand(a *app) *cobra.Command {
	var l leaseFlags
	var percent int
	var note string
	cmd := &cobra.Command{
		Use: "heartbeat --team T --member M --task ID --epoch N", Short: "Renew a lease and report progress", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.HeartbeatTask(cmd.Context(), kaizen.HeartbeatInput{Project: a.project, Team: l.team, Task: l.task, Member: l.member,
				Epoch: l.epoch, Progress: &team.Progress{Percent: percent, Note: note}})
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				switch {
				case res.Cancelled:
					fmt.Fprintln(w, "cancelled: stop and discard the work")
				case res.Paused:
					fmt.Fprintln(w, "paused: stop at a safe point")
				default:
					fmt.Fprintf(w, "renewed until %s\n", res.ExpiresAt.Format(time.RFC3339))
				}
				return nil
			})
		},
	}
	l.add(cmd, true)
	cmd.Flags().IntVar(&percent, "percent", 0, "progress 0-100")
	cmd.Flags().StringVar(&note, "note", "", "progress note")
	return cmd
}

func taskReportCommand(a *app, status team.TaskStatus) *cobra.Command {
	var l leaseFlags
	var result, errText string
	gate := -1
	use, short := "complete", "Complete the task you hold (with its gate's exit code when it has a gate)"
	if status == team.StatusFailed {
		use, short = "fail", "Fail the task you hold"
	}
	cmd := &cobra.Command{
		Use: use + " --team T --member M --task ID --epoch N", Short: short, Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := jsonArg("result", result)
			if err != nil {
				return err
			}
			in := kaizen.ReportInput{Project: a.project, Team: l.team, Task: l.task, Member: l.member, Epoch: l.epoch, Status: status,
				Result: res, Error: errText}
			if gate >= 0 {
				in.Gate = &kaizen.GateResult{ExitCode: gate}
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			t, err := e.ReportTask(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(t, func(w io.Writer) error { printTaskLine(w, *t); return nil })
		},
	}
	l.add(cmd, true)
	cmd.Flags().StringVar(&result, "result", "", "result JSON (or @file)")
	cmd.Flags().StringVar(&errText, "error", "", "why it failed")
	cmd.Flags().IntVar(&gate, "gate-exit", -1, "exit code of the task's gate command")
	return cmd
}

func taskReleaseCommand(a *app) *cobra.Command {
	var l leaseFlags
	cmd := &cobra.Command{
		Use: "release --team T --member M --task ID --epoch N", Short: "Give a lease back without a result", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			t, err := e.ReleaseTask(cmd.Context(), kaizen.ReleaseInput{Project: a.project, Team: l.team, Task: l.task, Member: l.member, Epoch: l.epoch})
			if err != nil {
				return err
			}
			return a.print(t, func(w io.Writer) error { printTaskLine(w, *t); return nil })
		},
	}
	l.add(cmd, true)
	return cmd
}

func taskCancelCommand(a *app) *cobra.Command {
	var teamName, cause string
	var retry bool
	cmd := &cobra.Command{
		Use: "cancel --team T ID", Short: "Cancel a task (or retry a failed one with --retry)", Args: exactArgs(1, "a task id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st := team.StatusCancelled
			if retry {
				st = team.StatusPending
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			t, err := e.UpdateTeamTask(cmd.Context(), kaizen.UpdateTeamTaskInput{Project: a.project, Team: teamName, Task: args[0], Status: st, Cause: cause})
			if err != nil {
				return err
			}
			return a.print(t, func(w io.Writer) error { printTaskLine(w, *t); return nil })
		},
	}
	cmd.Flags().StringVar(&teamName, "team", "", "the team")
	cmd.Flags().StringVar(&cause, "cause", "", "why")
	cmd.Flags().BoolVar(&retry, "retry", false, "retry a failed task instead (failed → pending)")
	return cmd
}

func taskTeamListCommand(a *app) *cobra.Command {
	var q kaizen.TeamTaskQuery
	var statuses []string
	cmd := &cobra.Command{
		Use: "list --team T", Short: "List a team's tasks", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q.Project = a.project
			for _, s := range statuses {
				q.Statuses = append(q.Statuses, team.TaskStatus(s))
			}
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			ts, err := e.ListTeamTasksPage(cmd.Context(), q)
			if err != nil {
				return err
			}
			return a.print(ts, func(w io.Writer) error {
				for _, t := range ts.Items {
					printTaskLine(w, t)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&q.Team, "team", "", "the team")
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only these statuses")
	cmd.Flags().StringVar(&q.RunID, "run", "", "only the tasks of this pattern run")
	return cmd
}

func taskGraphCommand(a *app) *cobra.Command {
	var teamName string
	cmd := &cobra.Command{
		Use: "graph --team T", Short: "Show a team's task graph by dependency layer", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			ts, err := e.ListTeamTasks(cmd.Context(), kaizen.TeamTaskQuery{Project: a.project, Team: teamName})
			if err != nil {
				return err
			}
			layers, err := team.TaskLayers(ts)
			if err != nil {
				return err
			}
			byID := map[string]team.Task{}
			for _, t := range ts {
				byID[t.ID] = t
			}
			return a.print(map[string]any{"tasks": ts, "layers": layers}, func(w io.Writer) error {
				for i, layer := range layers {
					fmt.Fprintf(w, "layer %d\n", i)
					for _, id := range layer {
						fmt.Fprint(w, "  ")
						printTaskLine(w, byID[id])
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&teamName, "team", "", "the team")
	return cmd
}

// --- messages

func msgCommand(a *app) *cobra.Command {
	return group("msg", "A team's message bus: send, inbox, ack, tail",
		msgSendCommand(a), msgInboxCommand(a), msgAckCommand(a), msgTailCommand(a))
}

func msgSendCommand(a *app) *cobra.Command {
	var in kaizen.SendInput
	var data string
	cmd := &cobra.Command{
		Use: "send --team T --from M --to ADDR --type TYPE", Short: "Send a typed message (to a member, role:<role> or all)", Args: noArgs,
		Example: "  kaizen msg send --team web --from lead --to ann --type fix_required --data '{\"suggestion\":\"rename\"}'",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if in.Data, err = jsonArg("data", data); err != nil {
				return err
			}
			in.Project = a.project
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			m, err := e.SendMessage(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(m, func(w io.Writer) error { fmt.Fprintf(w, "sent #%d\n", m.Seq); return nil })
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Team, "team", "", "the team")
	f.StringVar(&in.From, "from", "", "sender")
	f.StringVar(&in.To, "to", "", "recipient: member, role:<role> or all")
	f.StringVar((*string)(&in.Type), "type", "", "message type")
	f.StringVar(&in.Summary, "summary", "", "one line")
	f.StringVar(&data, "data", "", "payload JSON (or @file)")
	f.StringVar(&in.Task, "task", "", "task the message is about")
	return cmd
}

func printMessage(w io.Writer, m team.Message) {
	fmt.Fprintf(w, "#%d %s %s → %s: %s", m.Seq, m.CreatedAt.Format(time.RFC3339), m.From, m.To, strconv.Quote(m.Summary))
	if len(m.Data) > 0 {
		fmt.Fprintf(w, " %s", strconv.Quote(string(m.Data)))
	}
	fmt.Fprintln(w)
}

func msgInboxCommand(a *app) *cobra.Command {
	var in kaizen.InboxInput
	cmd := &cobra.Command{
		Use: "inbox --team T --member M", Short: "Take delivery of your unacknowledged messages (redelivered until acked)", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in.Project = a.project
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.Inbox(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				for _, it := range res.Items {
					printMessage(w, it.Message)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Team, "team", "", "the team")
	f.StringVar(&in.Member, "member", "", "your member name")
	f.BoolVar(&in.Peek, "peek", false, "look without taking delivery")
	f.BoolVar(&in.Redeliver, "redeliver", false, "take delivery of every unacknowledged message, also those still hidden (a resumed session)")
	f.BoolVar(&in.All, "all", false, "include acknowledged messages")
	f.IntVar(&in.WaitSeconds, "wait", 0, "wait up to this many seconds for a message")
	f.IntVar(&in.Limit, "limit", 0, "at most this many")
	return cmd
}

func msgAckCommand(a *app) *cobra.Command {
	var in kaizen.AckInput
	var state string
	cmd := &cobra.Command{
		Use: "ack --team T --member M SEQ…", Short: "Acknowledge messages (or mark them read / acted_on)", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, s := range args {
				n, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
				if err != nil {
					return usageError{fmt.Errorf("%q is not a message number", s)}
				}
				in.Seqs = append(in.Seqs, n)
			}
			in.Project, in.State = a.project, team.DeliveryState(state)
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.AckMessages(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { fmt.Fprintf(w, "%d updated\n", len(res)); return nil })
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Team, "team", "", "the team")
	f.StringVar(&in.Member, "member", "", "your member name")
	f.StringVar(&state, "state", "", "read, acknowledged (default) or acted_on")
	return cmd
}

func msgTailCommand(a *app) *cobra.Command {
	var in kaizen.TailInput
	var follow bool
	cmd := &cobra.Command{
		Use: "tail --team T", Short: "Show a team's message timeline (--follow to keep watching)", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in.Project = a.project
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			for {
				if follow {
					in.WaitSeconds = 60
				}
				ms, err := e.TailMessages(cmd.Context(), in)
				if err != nil {
					return err
				}
				for _, m := range ms {
					if a.json {
						a.print(m, nil)
					} else {
						printMessage(a.stdout, m)
					}
					in.After = m.Seq
				}
				if !follow {
					return nil
				}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Team, "team", "", "the team")
	f.Int64Var(&in.After, "after", 0, "messages after this number")
	f.IntVar(&in.Limit, "limit", 0, "at most this many per read")
	f.BoolVar(&follow, "follow", false, "keep waiting for new messages")
	return cmd
}

// --- workers

func workerCommand(a *app) *cobra.Command {
	return group("worker", "Run a worker: claim tasks, heartbeat, run a command per task, report", workerRunCommand(a))
}

func workerRunCommand(a *app) *cobra.Command {
	var o kaizen.WorkerOptions
	cmd := &cobra.Command{
		Use:   "run --team T --member M --cmd 'COMMAND'",
		Short: "Run a command worker: the task as JSON on stdin and KAIZEN_* variables, stdout as the result, exit status as success",
		Long: `Claim the member's next ready task, run the command with sh -c (the
task as JSON on stdin; KAIZEN_TEAM, KAIZEN_MEMBER, KAIZEN_TASK_ID,
KAIZEN_TASK_SUBJECT, KAIZEN_TASK_EPOCH, KAIZEN_RUN_ID, KAIZEN_RUN_KEY in the
environment), heartbeat while it runs, run the task's gate, and report: exit
0 completes (stdout is the result: JSON, or text wrapped as {"output": …}),
anything else fails. On timeout or a cancelled task the command's process
group gets SIGTERM, then SIGKILL. Stops on SIGINT/SIGTERM (the lease is given
back) or, with --once, when no task is ready.`,
		Example: "  kaizen worker run --team web --member tess --cmd 'go test ./... && echo {\\\"passed\\\":true}'\n" +
			"  kaizen worker run --team web --member ann --cmd 'claude -p \"$KAIZEN_TASK_SUBJECT\"' --timeout 20m",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Project = a.project
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			o.Log = func(s string) { fmt.Fprintf(a.stderr, "kaizen worker %s: %s\n", o.Member, s) }
			st, err := e.RunWorker(ctx, o)
			if err != nil && ctx.Err() == nil {
				return err
			}
			return a.print(st, func(w io.Writer) error {
				fmt.Fprintf(w, "claimed %d, completed %d, failed %d, dropped %d\n", st.Claimed, st.Completed, st.Failed, st.Dropped)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Team, "team", "", "the team")
	f.StringVar(&o.Member, "member", "", "the member this worker acts as")
	f.StringVar(&o.Command, "cmd", "", "command run per task (sh -c)")
	f.DurationVar(&o.Timeout, "timeout", 0, "bound on one task's command (0: none)")
	f.DurationVar(&o.Grace, "grace", 5*time.Second, "wait between SIGTERM and SIGKILL")
	f.StringVar(&o.Dir, "dir", "", "working directory of the command and gates")
	f.BoolVar(&o.Once, "once", false, "stop when no task is ready")
	f.IntVar(&o.MaxTasks, "max-tasks", 0, "stop after this many tasks")
	f.IntVar(&o.WaitSeconds, "wait", 0, "seconds each claim waits for a task (default 30)")
	return cmd
}

// --- pattern runs (issue 16)

func init() { register(runCommand) }

func teamRunCommand(a *app) *cobra.Command {
	var in kaizen.StartRunInput
	var input, producer, reviewer, artifact, file string
	cmd := &cobra.Command{
		Use:   "run PATTERN --team T [--input JSON] | run --file COMPOSITION.toml [--team T]",
		Short: "Start a collaboration pattern run (CP-1 … CP-10), or a composition from a TOML file",
		Example: "  kaizen team run CP-2 --team web --artifact login.go --producer executor --reviewer reviewer\n" +
			"  kaizen team run CP-4 --team web --input '{\"proposal\":{\"id\":\"p1\",\"title\":\"Use JWT\"},\"voters\":[\"v1\",\"v2\",\"v3\"]}'\n" +
			"  kaizen team run --file standard.toml --team web   # template = \"standard\": CP-1 + CP-2 → CP-10",
		Args: func(cmd *cobra.Command, args []string) error {
			if file != "" {
				return noArgs(cmd, args)
			}
			return exactArgs(1, "a pattern id (CP-1 … CP-10), or --file")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if file != "" {
				return runCompositionFile(cmd, a, file, in.Team)
			}
			in.Project, in.Pattern = a.project, team.PatternID(strings.ToUpper(args[0]))
			raw, err := jsonArg("input", input)
			if err != nil {
				return err
			}
			if raw == nil && (artifact != "" || producer != "" || reviewer != "") {
				m := map[string]string{"artifact": artifact}
				if producer != "" {
					m["producer"] = producer
				}
				if reviewer != "" {
					m["reviewer"] = reviewer
				}
				raw, _ = json.Marshal(m)
			}
			in.Input = raw
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.StartRun(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error { printRun(w, res, false); return nil })
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Team, "team", "", "the team")
	f.StringVar(&input, "input", "", "the pattern's input as JSON (or @file; see docs/team.md)")
	f.StringVar(&in.Subject, "subject", "", "what the work is about")
	f.StringVar(&artifact, "artifact", "", "CP-2: what to review")
	f.StringVar(&producer, "producer", "", "CP-2: the producer's role (default executor)")
	f.StringVar(&reviewer, "reviewer", "", "CP-2: the reviewer's role (default reviewer)")
	f.StringVar(&file, "file", "", "a composition in TOML: a template (standard, high-risk, investigation, parallel, expert) or steps, with the patterns' inputs (see docs/team.md)")
	return cmd
}

func teamSelectCommand(a *app) *cobra.Command {
	var in kaizen.SelectInput
	cmd := &cobra.Command{
		Use: "select --type T --complexity C --risk R", Short: "Choose collaboration patterns (seed rules) and rank them by past runs", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in.Project = a.project
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			s, err := e.SelectPatterns(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(s, func(w io.Writer) error {
				fmt.Fprintf(w, "Patterns (seed rules): %v\n", s.Patterns)
				for _, r := range s.Ranking {
					fmt.Fprintf(w, "  %-6s %-24s score %.2f, %d runs\n", r.Pattern, r.Pattern.Name(), r.Score, r.Runs)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.TaskType, "type", "feature", "task type: feature, bugfix, review, test …")
	f.StringVar(&in.Complexity, "complexity", "medium", "low, medium or high")
	f.StringVar(&in.RiskLevel, "risk", "low", "low, medium or high")
	f.IntVar(&in.TeamSize, "size", 0, "team size")
	f.BoolVar(&in.HasExpert, "expert", false, "a specialist is available")
	return cmd
}

func runCommand(a *app) *cobra.Command {
	return group("run", "Collaboration pattern runs: list, show, cancel, reply", runListCommand(a), runShowCommand(a), runCancelCommand(a), runReplyCommand(a))
}

func printRun(w io.Writer, r *kaizen.RunInfo, full bool) {
	run := r.Run
	fmt.Fprintf(w, "Run %s: %s %s on team %s\nState %s, iteration %d of %d\n", run.ID, run.Pattern, r.Name, run.Team, run.State, run.Iteration, run.MaxIterations)
	if o := run.Outcome; o != nil {
		fmt.Fprintf(w, "Finished %s: %s\n", o.Status, o.Summary)
	}
	for name, at := range run.Timers {
		fmt.Fprintf(w, "Deadline %s at %s\n", name, at.Format(time.RFC3339))
	}
	for key, t := range run.Tasks {
		fmt.Fprintf(w, "Task %s (%s): %s\n", key, t.Status, t.Subject)
	}
	for key, q := range run.Asks {
		fmt.Fprintf(w, "Question %s: %s %v\n", key, q.Question, q.Options)
	}
	if full {
		fmt.Fprintln(w, "Decisions:")
		for _, d := range run.Decisions {
			fmt.Fprintf(w, "  %s %s → %s (%s): %s\n", d.At.Format(time.RFC3339), d.From, d.To, d.Event, d.Reason)
		}
		fmt.Fprintf(w, "\n%s", r.Mermaid)
	}
}

func runListCommand(a *app) *cobra.Command {
	var q kaizen.RunQuery
	cmd := &cobra.Command{
		Use: "list", Short: "List pattern runs", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q.Project = a.project
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			rs, err := e.ListRunsPage(cmd.Context(), q)
			if err != nil {
				return err
			}
			return a.print(rs, func(w io.Writer) error {
				for _, r := range rs.Items {
					out := "running"
					if r.Outcome != nil {
						out = string(*r.Outcome)
					}
					fmt.Fprintf(w, "%s %-6s %-10s %-14s %d/%d %s\n", r.ID, r.Pattern, r.Team, r.State, r.Iteration, r.Max, out)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&q.Team, "team", "", "only this team")
	cmd.Flags().StringVar(&q.Pattern, "pattern", "", "only this pattern")
	cmd.Flags().BoolVar(&q.ActiveOnly, "active", false, "only runs that have not finished")
	return cmd
}

func runShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use: "show RUN", Short: "Show a pattern run: state, iteration, deadlines, tasks, decisions, state diagram", Args: exactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			r, err := e.GetRun(cmd.Context(), a.project, args[0])
			if err != nil {
				return err
			}
			return a.print(r, func(w io.Writer) error { printRun(w, r, true); return nil })
		},
	}
}

func runCancelCommand(a *app) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use: "cancel RUN", Short: "Cancel a pattern run (its tasks, timers and children too)", Args: exactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			r, err := e.CancelRun(cmd.Context(), a.project, args[0], reason)
			if err != nil {
				return err
			}
			return a.print(r, func(w io.Writer) error { printRun(w, r, false); return nil })
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	return cmd
}

func runReplyCommand(a *app) *cobra.Command {
	var in kaizen.RunReplyInput
	cmd := &cobra.Command{
		Use: "reply RUN KEY [--choice C] [--text T]", Short: "Answer a question a pattern run asked", Args: exactArgs(2, "a run id and a question key"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in.Project, in.Run, in.Key = a.project, args[0], args[1]
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			r, err := e.ReplyRun(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.print(r, func(w io.Writer) error { printRun(w, r, false); return nil })
		},
	}
	cmd.Flags().StringVar(&in.Choice, "choice", "", "the option chosen")
	cmd.Flags().StringVar(&in.Text, "text", "", "free answer")
	return cmd
}
