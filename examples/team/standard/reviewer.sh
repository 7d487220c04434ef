#!/bin/sh
# Reviewer stand-in: BLOCKs the first round with a critical finding,
# APPROVEs once the executor has fixed it.
echo "reviewer $KAIZEN_TASK_ID" >> "$WORK/done.log"
if [ -f "$WORK/fixed" ]; then
	echo '{"verdict":"APPROVE","findings":{}}'
else
	echo '{"verdict":"BLOCK","findings":{"critical":[{"file":"health.go","line":3,"description":"no timeout on the handler"}]}}'
fi
