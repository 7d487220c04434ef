#!/bin/sh
# "Standard development" (seed 004's composition CP-1 + CP-2 → CP-10) under
# `kaizen serve`, started from a composition file
# (examples/team/standard.toml: template "standard"), with shell scripts
# standing in for agents (examples/team/standard/*.sh), and a kill -9 of
# the daemon mid-run:
#
#   1. start `kaizen serve`; create a team; `kaizen team run --file
#      standard.toml` starts the composition's first step, CP-1;
#   2. the planner plans; the daemon is killed with SIGKILL and restarted
#      on the same home (again later while the tester is mid-task, and
#      while CP-10 waits for retrospectives);
#   3. the executor implements; CP-1's review stage is a nested CP-2
#      Review-Fix Cycle: the reviewer BLOCKs round 1, the executor fixes,
#      the reviewer approves round 2; then the tester passes CP-1's TEST;
#   4. CP-1 finishing starts the composition's next step, CP-10
#      Post-Mortem (every task has ended): it asks the reviewer and the
#      executor for retrospectives; they answer on the bus and acknowledge
#      the request;
#   5. the restarted daemon's job runner records every run's outcome and
#      the post-mortem's reusable pattern; `kaizen plan` lists them; the
#      post-mortem's improvement action is a heuristic (`kaizen heuristic
#      list`) that plan guidance recalls.
#
#   KAIZEN_HOME=$(mktemp -d) sh examples/team/standard-dev.sh
#
# KAIZEN names the kaizen binary (default: kaizen on PATH); WORK the
# directory for the workers' files (default: a new temporary directory).
# Every worker appends "role task-id" to $WORK/done.log. The script polls
# for each state it waits on (a bounded number of times: a hang guard, not
# a timing assumption) and exits non-zero if it is not reached.
set -eu
K=${KAIZEN:-kaizen}
: "${KAIZEN_HOME:?set KAIZEN_HOME to a fresh directory}"
export KAIZEN_PROJECT=${KAIZEN_PROJECT:-standard-demo}
WORK=${WORK:-$(mktemp -d)}
export WORK
here=$(cd "$(dirname "$0")" && pwd)/standard
T=crew
daemon=

say() { printf '\n== %s\n' "$*"; }

# start_daemon: `kaizen serve` on a free loopback port, in the background;
# waits for its start line.
start_daemon() {
	: >"$WORK/serve.out"
	$K serve --addr 127.0.0.1:0 >>"$WORK/serve.out" 2>>"$WORK/serve.log" &
	daemon=$!
	n=0
	until grep -q '^kaizen serving on ' "$WORK/serve.out"; do
		n=$((n + 1))
		if [ $n -gt 3000 ] || ! kill -0 "$daemon" 2>/dev/null; then
			echo "kaizen serve did not start:" >&2
			cat "$WORK/serve.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "daemon $daemon: $(head -n1 "$WORK/serve.out")"
}
stop_daemon() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null || true; }
trap stop_daemon EXIT
# crash WHAT: kill -9 the daemon, then start it again on the same home.
crash() {
	kill -9 "$daemon"
	wait "$daemon" 2>/dev/null || true
	echo "daemon $daemon killed (SIGKILL) with $1"
	start_daemon
}

# work MEMBER ROLE: one worker pass, until the member has no ready task.
work() { $K worker run --team $T --member "$1" --once --cmd "sh '$here/$2.sh'"; }

# wait_for DESCRIPTION COMMAND…: polls COMMAND until it succeeds.
wait_for() {
	what=$1
	shift
	n=0
	until "$@" >/dev/null 2>&1; do
		n=$((n + 1))
		if [ $n -gt 3000 ]; then
			echo "gave up waiting for: $what" >&2
			exit 1
		fi
		sleep 0.1
	done
}
# run_state PATTERN: the state of the team's run of PATTERN.
run_state() { $K --json run list --team $T --pattern "$1" | sed -n 's/.*"state": "\([A-Z_]*\)".*/\1/p' | head -n1; }
is_state() { [ "$(run_state "$1")" = "$2" ]; }

say "1. daemon, team, the standard composition (its first step: CP-1)"
start_daemon
$K team create $T --member lead:coordinator --member pat:planner \
	--member ed:executor --member tess:tester --member rev:reviewer
$K team run --file "$here/../standard.toml" --team $T

say "2. the planner plans; kill -9 the daemon mid-run; restart it"
work pat planner
crash "CP-1 in state $(run_state CP-1)"

say "3. implement; CP-1's review stage is a nested CP-2"
work ed executor
wait_for "CP-1 in REVIEW_FIX" is_state CP-1 REVIEW_FIX
work rev reviewer # round 1: BLOCK, a fix task for the executor
work ed executor  # the fix
work rev reviewer # round 2: APPROVE
say "   kill -9 the daemon again while the tester is mid-task"
touch "$WORK/hold"
work tess tester & # CP-1's TEST, held until the daemon is back
tester=$!
wait_for "the tester to start" test -s "$WORK/started.log"
$K --json team task list --team $T --status in_progress | grep -q '"subject": "TEST-001"' ||
	{ echo "TEST-001 is not in progress" >&2; exit 1; }
crash "the TEST task in progress"
rm -f "$WORK/hold"
wait "$tester"
wait_for "CP-1 DONE" is_state CP-1 DONE
wait_for "CP-2 DONE" is_state CP-2 DONE
$K team task graph --team $T

say "4. CP-1 done: the composition starts CP-10; retrospectives on the bus"
wait_for "CP-10 COLLECT" is_state CP-10 COLLECT
crash "CP-10 collecting (its retro timer is a pending job)"
for m in rev ed; do
	# take delivery of the member's messages (the retro request among
	# them), answer the request, acknowledge them all
	inbox=$($K --json msg inbox --team $T --member $m)
	echo "$inbox" | grep -q '"retro_request"' || { echo "$m got no retro request" >&2; exit 1; }
	seqs=$(echo "$inbox" | sed -n 's/.*"seq": \([0-9]*\).*/\1/p' | sort -un)
	$K msg send --team $T --from $m --to lead --type retro_finding --summary "retro from $m" \
		--data "$(cat "$here/retro-$m.json")"
	# shellcheck disable=SC2086
	$K msg ack --team $T --member $m $seqs
done
wait_for "CP-10 DONE" is_state CP-10 DONE
$K run list --team $T

say "5. the daemon records the outcomes; kaizen plan shows them"
has_guidance() { $K plan "add a status endpoint" | grep -q "Collaboration pattern CP-10"; }
wait_for "the post-mortem in kaizen plan" has_guidance
# the improvement action is a heuristic of the experience system
has_heuristic() { $K heuristic list | grep -q "Add handler timeouts"; }
wait_for "the improvement action as a heuristic" has_heuristic
$K heuristic list
$K plan "add a status endpoint" | grep -i -e "collaboration pattern" -e "timeouts"
