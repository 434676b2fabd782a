#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/thread-churn.sh BUILD - 20 dumps of a process whose threads
# come and go (test/e2e/thread_churn.c), its one timer, id 0, aimed at the
# process (race_dumps, test/e2e/lib.sh).  Only what happens while the process
# is stopped can make an image stale, and nothing happens then: all 20 dumps
# write an image (threads that exit while being attached are skipped like
# those already gone).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

churn_image_ok() { [ "$3" = "0 " ] && grep -q "\"notify_tid\" *: *$1\b" "$2"; }
case_thread_churn() {
	race_dumps thread-churn thread_churn churn "whose threads come and go" churn_image_ok \
		"thread [0-9]+ exited while the process was being dumped|called exec" 20
}

case_thread_churn
totals
