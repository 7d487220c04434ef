#!/bin/sh
# Executor stand-in: "implements" (IMPL tasks) and "fixes" (IMPL-fix tasks)
# by touching files in $WORK; answers with an impl_complete result.
echo "executor $KAIZEN_TASK_ID" >> "$WORK/done.log"
case "$KAIZEN_TASK_SUBJECT" in
IMPL-fix*) touch "$WORK/fixed" ;;
*) touch "$WORK/health.go" ;;
esac
echo "{\"status\":\"done\",\"summary\":\"$KAIZEN_TASK_SUBJECT\",\"files_changed\":[\"health.go\"]}"
