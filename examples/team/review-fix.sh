#!/bin/sh
# A CP-2 Review-Fix Cycle run with two scripted workers standing in for
# agents: the reviewer blocks the first round with a critical finding, the
# executor "fixes" it, the reviewer approves the second round. The run's
# outcome then shows up in `kaizen plan` as a collaboration pattern that
# worked in this project.
#
#   KAIZEN_HOME=$(mktemp -d) sh examples/team/review-fix.sh
set -eu
K=${KAIZEN:-kaizen}
export KAIZEN_PROJECT=${KAIZEN_PROJECT:-team-demo}
work=$(mktemp -d)

$K team create crew --member ann:executor --member rev:reviewer
$K team run CP-2 --team crew --artifact login.go

# The reviewer: BLOCK on round 1, APPROVE afterwards (its result is the
# review_result payload the run expects).
review='if [ -f '"$work"'/fixed ]; then echo "{\"verdict\":\"APPROVE\",\"findings\":{}}";
else echo "{\"verdict\":\"BLOCK\",\"findings\":{\"critical\":[{\"file\":\"login.go\",\"line\":3,\"description\":\"SQL injection\"}]}}"; fi'
fix='touch '"$work"'/fixed; echo "{\"fixed\":true}"'

$K worker run --team crew --member rev --once --cmd "$review"   # round 1: BLOCK → fix task
$K worker run --team crew --member ann --once --cmd "$fix"      # the fix
$K worker run --team crew --member rev --once --cmd "$review"   # round 2: APPROVE → DONE

$K run list --team crew
$K jobs run                                  # records the run's outcome in the learning system
$K plan "review the login change" | grep -i "collaboration pattern" || true
$K team select --type review --complexity low --risk low
