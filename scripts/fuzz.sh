#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each:
#
#   scripts/fuzz.sh                  # every target, $KAIZEN_FUZZTIME each (default 8s)
#   KAIZEN_FUZZTIME=1m scripts/fuzz.sh FuzzDecodeJSON FuzzStdioLine
#
# Targets are found by their declaration (func FuzzXxx in a _test.go file),
# so a new one is fuzzed without editing this script. The whole run stops
# starting new targets once $KAIZEN_FUZZ_BUDGET seconds have passed
# (default 420, so that CI stays under about 8 minutes); the targets left
# out are named. A failing input is written by go test to the package's
# testdata/fuzz/<Target>/ (commit it: it becomes a regression test run by
# every plain `go test`). Seed inputs live there too.
#
# KAIZEN_FUZZ_KNOWN lists targets with a known, owned failure (space
# separated): their failures are reported but do not fail the run.
#
# Go 1.26's fuzzing coordinator can fail a target at the end of a
# duration -fuzztime with a bare "context deadline exceeded" and no
# failing input (golang/go#75804, fixed in Go 1.27; seen here on a loaded
# machine). Such a run found nothing: the target is run once more, and a
# second bare deadline is reported as a harness flake without failing the
# run. Anything else — a failing input written, a seed input failing, a
# build error — fails the run as before.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime=${KAIZEN_FUZZTIME:-8s}
budget=${KAIZEN_FUZZ_BUDGET:-420}
known=" ${KAIZEN_FUZZ_KNOWN:-} "
only=" $* "

# Every target, sorted, then rotated by the day of the year: when the budget
# runs out before the end of the list, a different part of it is left out
# each day instead of always the same last targets.
mapfile -t targets < <(grep -rHoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . | sed -E 's/:func /:/' | sort)
n=${#targets[@]}
shift_by=$(( n > 0 ? 10#$(date -u +%j) % n : 0 ))
targets=("${targets[@]:shift_by}" "${targets[@]:0:shift_by}")

out=$(mktemp)
trap 'rm -f "$out"' EXIT

# fuzz_one fuzzes one target, its output shown and kept in $out.
fuzz_one() {
  go test -run='^$' -fuzz="^${2}\$" -fuzztime="$fuzztime" "$1" 2>&1 | tee "$out"
  return "${PIPESTATUS[0]}"
}

# coordinator_race: the last run failed only with the coordinator's bare
# deadline error (golang/go#75804): no failing input written, no failing
# seed or subtest, no build error.
coordinator_race() {
  grep -q '^    context deadline exceeded$' "$out" &&
    ! grep -qE 'Failing input written|--- FAIL: Fuzz[A-Za-z0-9_]+/|build failed|panic:' "$out"
}

start=$SECONDS
failed=() knownfail=() flaked=() skipped=() ran=0
while IFS=: read -r file name; do
  [ -n "$name" ] || continue
  if [ -n "$*" ] && [[ "$only" != *" $name "* ]]; then continue; fi
  if (( SECONDS - start >= budget )); then skipped+=("$name"); continue; fi
  dir=$(dirname "$file")
  echo "== fuzz $dir $name ($fuzztime)"
  if fuzz_one "$dir" "$name"; then
    ran=$((ran + 1))
  elif coordinator_race && { echo "== fuzz $dir $name: bare 'context deadline exceeded', no failing input (golang/go#75804): once more"; fuzz_one "$dir" "$name"; }; then
    ran=$((ran + 1))
  elif coordinator_race; then
    flaked+=("$dir $name"); ran=$((ran + 1))
  elif [[ "$known" == *" $name "* ]]; then
    knownfail+=("$dir $name"); ran=$((ran + 1))
    # keep the workspace's plain `go test` green: drop the new failing input
    git clean -fq -- "$dir/testdata/fuzz/$name" 2>/dev/null || true
  else
    failed+=("$dir $name"); ran=$((ran + 1))
  fi
done < <(printf '%s\n' "${targets[@]}")

echo "== fuzzed $ran target(s) in $((SECONDS - start))s"
((${#skipped[@]})) && echo "not fuzzed (budget of ${budget}s spent): ${skipped[*]}"
((${#knownfail[@]})) && printf 'known failure (owned elsewhere, not failing the run): %s\n' "${knownfail[@]}"
((${#flaked[@]})) && printf 'harness flake twice, no failing input (golang/go#75804, not failing the run): %s\n' "${flaked[@]}"
if ((${#failed[@]})); then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
exit 0
