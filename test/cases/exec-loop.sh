#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/exec-loop.sh BUILD - 20 dumps of a process that execs a new
# program every ~2 ms (test/e2e/exec_loop.c), each creating one timer: an
# image holds that timer or nothing (stopped between exec and timer_create);
# the ID counter survives exec (it lives in signal_struct), so any one ID will
# do (race_dumps, test/e2e/lib.sh).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

exec_image_ok() { [ "$(echo $3 | wc -w)" -le 1 ]; }
case_exec_loop() {
	race_dumps exec-loop exec_loop exec "that execs every ~2 ms" exec_image_ok \
		"process [0-9]+ called exec \(thread [0-9]+\) while it was being dumped"
}

case_exec_loop
totals
