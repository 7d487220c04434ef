#!/bin/sh
# Planner stand-in: answers a PLAN task with a plan_ready result.
# Every worker appends "role task-id" to $WORK/done.log, so a task done
# twice would show up twice.
echo "planner $KAIZEN_TASK_ID" >> "$WORK/done.log"
echo '{"summary":"add GET /health returning 200","tasks":[{"id":"impl","subject":"handler"},{"id":"test","subject":"test"}]}'
