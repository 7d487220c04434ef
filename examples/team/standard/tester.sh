#!/bin/sh
# Tester stand-in: the tests pass once the implementation exists. While
# $WORK/hold exists it waits (the driver holds it mid-task to kill the
# daemon meanwhile; bounded, so a lost hold file cannot hang it).
echo "tester $KAIZEN_TASK_ID" >> "$WORK/started.log"
n=0
while [ -f "$WORK/hold" ] && [ $n -lt 6000 ]; do
	sleep 0.1
	n=$((n + 1))
done
echo "tester $KAIZEN_TASK_ID" >> "$WORK/done.log"
if [ -f "$WORK/health.go" ]; then
	echo '{"pass_rate":1,"passed":3,"total":3,"summary":"3/3 pass"}'
else
	echo '{"pass_rate":0,"failed":3,"total":3,"summary":"no implementation"}'
fi
