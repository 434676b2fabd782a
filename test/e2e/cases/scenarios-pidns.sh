#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e/cases/scenarios-pidns.sh BUILD - source and target each pid 1 of
# their own pid namespace (pidns-leader-tid), restored without a tid map
# (run_scenario with PIDNS=1, test/e2e/lib.sh).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

if ! unshare -pf true 2>/dev/null; then
	skip "pidns" "unshare -pf does not work here"
	exit 0
fi
PIDNS=1
for sc in threads mix cpuclocks; do
	run_scenario "$sc" auto
done
totals
