#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e/cases/scenarios.sh BUILD - test/cases/LIST's rounds in the
# flavours the host offers ptimer: ptimer (--mode auto), ptimer-exact,
# ptimer-linear and ptimer-pidns (source and target each pid 1 of a pid
# namespace of their own), through the case driver (test/lib/driver.sh):
# the case's program set up, ptimer dump, the process killed, ptimer
# restore into a fresh one, which checks every timer itself.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

flavours="ptimer ptimer-exact ptimer-linear"
if unshare -pf true 2>/dev/null; then
	flavours="$flavours ptimer-pidns"
else
	skip "pidns" "unshare -pf does not work here: no ptimer-pidns rounds"
fi
for w in $(drive_words $flavours); do
	IFS=: read -r _ c f <<<"$w"
	drive "$c" "$f"
done
totals
