#!/bin/sh
# Tester stand-in: the tests pass once the implementation exists.
echo "tester $KAIZEN_TASK_ID" >> "$WORK/done.log"
if [ -f "$WORK/health.go" ]; then
	echo '{"pass_rate":1,"passed":3,"total":3,"summary":"3/3 pass"}'
else
	echo '{"pass_rate":0,"failed":3,"total":3,"summary":"no implementation"}'
fi
