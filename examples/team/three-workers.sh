#!/bin/sh
# Three scripted workers — a planner, an executor and a tester — finish a
# small task graph (plan → impl → test, the test gated by a command) under
# `kaizen serve`. The workers start first, in any order, and wait for work
# their role may take; the graph is added afterwards.
#
#   KAIZEN_HOME=$(mktemp -d) sh examples/team/three-workers.sh
#
# KAIZEN names the kaizen binary (default: kaizen on PATH); WORK the
# directory the workers run in (default: a new temporary directory). The
# script polls for the graph to finish (a bounded number of times: a hang
# guard, not a timing assumption) and exits non-zero if it does not.
set -eu
K=${KAIZEN:-kaizen}
: "${KAIZEN_HOME:?set KAIZEN_HOME to a fresh directory}"
export KAIZEN_PROJECT=${KAIZEN_PROJECT:-three-demo}
WORK=${WORK:-$(mktemp -d)}
T=web
pids=

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# the daemon, on a free loopback port
$K serve --addr 127.0.0.1:0 >"$WORK/serve.out" 2>"$WORK/serve.log" &
pids="$pids $!"
n=0
until grep -q '^kaizen serving on ' "$WORK/serve.out"; do
	n=$((n + 1))
	if [ $n -gt 3000 ]; then echo "kaizen serve did not start" >&2; cat "$WORK/serve.log" >&2; exit 1; fi
	sleep 0.1
done
head -n1 "$WORK/serve.out"

$K team create $T --member lead:coordinator --member planner:planner --member exec:executor --member tess:tester

# the workers: the task arrives as JSON on stdin and in KAIZEN_* variables;
# stdout is the result, the exit status decides success
cd "$WORK"
$K worker run --team $T --member tess --wait 1 \
	--cmd 'grep -q Login impl.txt && echo "{\"passed\":true}"' >tess.log 2>&1 &
pids="$pids $!"
$K worker run --team $T --member exec --wait 1 \
	--cmd 'echo "func Login() {}" >impl.txt && echo "{\"files\":[\"impl.txt\"]}"' >exec.log 2>&1 &
pids="$pids $!"
$K worker run --team $T --member planner --wait 1 \
	--cmd 'echo "{\"plan\":\"$KAIZEN_TASK_SUBJECT: one function\"}"' >planner.log 2>&1 &
pids="$pids $!"

# the graph: the tester's task completes only if its gate passes
$K team task add --team $T --id plan --role planner "Plan the login change"
$K team task add --team $T --id impl --role executor --blocked-by plan "Implement login"
$K team task add --team $T --id test --role tester --blocked-by impl --gate 'test -f impl.txt' "Test login"

n=0
until [ "$($K --json team task list --team $T --status completed | grep -c '"status": "completed"')" = 3 ]; do
	n=$((n + 1))
	if [ $n -gt 1200 ]; then
		echo "the graph did not finish:" >&2
		$K team task list --team $T >&2
		cat planner.log exec.log tess.log >&2
		exit 1
	fi
	sleep 0.1
done
$K team task graph --team $T
echo "three workers finished the graph"
