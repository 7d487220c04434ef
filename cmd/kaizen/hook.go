package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook/hookcmd"
)

func init() { register(hookCommand) }

// hookInvocation recognises `kaizen [global flags] hook …`, which main
// runs before building the command tree: a hook must start fast. Help
// requests and unknown global flags go through the tree.
func hookInvocation(args []string) (hookcmd.Options, bool) {
	var o hookcmd.Options
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "hook" {
			for _, r := range args[i+1:] {
				if r == "-h" || r == "--help" || r == "help" {
					return o, false
				}
			}
			o.Args = args[i+1:]
			return o, true
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			return o, false
		}
		var dst *string
		switch name {
		case "home":
			dst = &o.Home
		case "project":
			dst = &o.Project
		case "db":
			dst = &o.DB
		case "now":
			dst = &o.Now
		case "json":
			continue
		default:
			return o, false
		}
		if !hasVal {
			if i+1 >= len(args) {
				return o, false
			}
			i++
			val = args[i]
		}
		*dst = val
	}
	return o, false
}

// openEngine is the engine opener of hooks without a daemon: the kaizen
// command links the store drivers.
func openEngine(ctx context.Context, cfg kaizen.Config) (*kaizen.Engine, error) {
	return kaizen.Open(ctx, cfg)
}

func hookCommand(a *app) *cobra.Command {
	var timeout string
	cmd := &cobra.Command{
		Use:   "hook <client> <event>",
		Short: "Handle a coding agent's hook event (installed by kaizen setup)",
		Long: `Handle one hook event of a coding agent: read the client's hook JSON on
standard input, record it as an event of the session's task, and print what
the client should inject (plan guidance at session start, warnings about a
prompt that uses an anti-pattern, recalled experience, exploration nudges).
Clients run this command themselves once 'kaizen setup <client>' has
registered it.

Clients and events:
  claude    SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
            PostToolUseFailure, Stop, StopFailure, PreCompact, SessionEnd
  codex     SessionStart, UserPromptSubmit, PostToolUse, Stop, PreCompact,
            SessionEnd (also PreToolUse)
  cursor    sessionStart, beforeSubmitPrompt, postToolUse,
            postToolUseFailure, afterFileEdit, preCompact, stop, sessionEnd
            (also preToolUse, afterShellExecution, afterMCPExecution)
  opencode  session.created, chat.message, tool.execute.after, tool.failed,
            file.edited, session.compacted, session.idle, session.end
            (sent by the plugin kaizen setup writes)

The event is first appended to the spool in the kaizen home (synced to
disk), so it is never lost: the daemon ('kaizen serve' of the same home,
reached over its owner-only Unix socket) records it, or, when no daemon
runs, this command does, or else the next kaizen command. Only the answer
is best effort: the hook prints it within its budget ([hooks] timeout, 2s)
or prints nothing. Repeated deliveries of one event count once.

The session is tracked as task <client>-<session id> (claude-<session_id>).
When the session ends (SessionEnd, Cursor's sessionEnd, opencode's
session end) or stays idle for [hooks] idle_timeout (1h), kaizen records
its outcome by itself: duration, errors, retries and files from what it saw,
the strategies of its prompts and plan as patterns, and success inferred
from the last test run, the user's reaction or the stop status (marked
inferred). An outcome the agent records explicitly replaces it.

A hook never fails the agent's action: on any problem it prints nothing,
exits 0, and appends the problem to hook.log in the kaizen home. Set
KAIZEN_HOOK_DEBUG=1 to log every call. See docs/clients.md.`,
		Example: `  echo '{"session_id":"abc","cwd":"/src/app","hook_event_name":"SessionStart"}' | kaizen hook claude SessionStart`,
		// Validated by hookcmd: a usage error must not fail the agent either
		// (Claude Code treats exit status 2 as "block the prompt").
		Args:               cobra.ArbitraryArgs,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, x := range args {
				if x == "-h" || x == "--help" {
					return cmd.Help()
				}
			}
			if timeout != "" {
				args = append(args, "--timeout", timeout)
			}
			hookcmd.Run(cmd.Context(), hookcmd.Options{Home: a.home, Project: a.project, DB: a.db, Now: a.now,
				Args: args, Stdin: a.stdin, Stdout: a.stdout, Open: openEngine})
			return nil
		},
	}
	return cmd
}
