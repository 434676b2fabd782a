#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e.sh BUILD - ptimer end to end on the host: real processes, real
# dumps, real restores.  Prepares (the build's programs, root, a scratch
# directory: test/e2e/lib.sh) and runs test/cases/LIST's rounds in the
# host's flavours through the case driver (test/lib/driver.sh): host (the
# case's own script, test/cases/NAME.sh, a process of its own), ptimer,
# ptimer-exact, ptimer-linear and ptimer-pidns (where unshare -pf works).
#
# Output, as kselftest prints it: the plan "1..N" (N rounds) first, each
# round's PASS/FAIL/SKIP lines (the verify processes' included) and "# ..."
# information, then "ok K ROUND" or "not ok K ROUND", and last the totals
# line "# e2e: N passed, N failed, N skipped" (checks).  Exit 1 when
# anything failed.  Needs root (ptrace, the exact-ID prctl).  No terminal,
# no stdin needed.
#
# Environment:
#   PTIMER_CASES   the cases to run, by name, separated by spaces
#                  ("linear-counter taken-id mix"); default: every case
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"
DRIVE_TOP=$TOP DRIVE_BUILD=$B

flavours="host ptimer ptimer-exact ptimer-linear"
if unshare -pf true 2>/dev/null; then
	flavours="$flavours ptimer-pidns"
else
	skip "pidns" "unshare -pf does not work here: no ptimer-pidns rounds"
fi
# the list itself, then each case asked for by name: in it, with a round here
drive_lint
for c in ${PTIMER_CASES:-}; do
	if ! awk -v c="$c" '$1 == c { found = 1 } END { exit !found }' "$DRIVE_CASES/LIST"; then
		fail "e2e/$c" "no case '$c' in test/cases/LIST"
	elif [ -z "$(PTIMER_CASES=$c drive_words $flavours)" ]; then
		fail "e2e/$c" "case '$c' has none of the host's flavours ($flavours) in test/cases/LIST"
	fi
done
info "ptimer e2e: $PT, kernel $(uname -r)"
"$PT" check 2>&1 | sed 's/^/# check: /'
# shellcheck disable=SC2046
run_cases $(drive_words $flavours)
totals e2e
