#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e/cases/scenarios-auto.sh BUILD - every zdtm_timers scenario dumped,
# the process killed, restored into a fresh one (--mode auto), which checks
# every timer itself (run_scenario, test/e2e/lib.sh).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

for sc in mix sparse stride dense many threads cpuclocks; do
	run_scenario "$sc" auto
done
totals
