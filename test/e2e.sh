#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e.sh BUILD - ptimer end to end: real processes, real dumps, real
# restores.  Runs every case file test/e2e/cases/NAME.sh (each its own
# process, scratch directory and fixtures: `bash test/e2e/cases/NAME.sh BUILD`
# from the top of the checkout, sourcing test/lib/harness.sh and
# test/e2e/lib.sh) in name order.
#
# Output, as kselftest prints it: the plan "1..N" (N cases) first, each
# case's PASS/FAIL/SKIP lines (the verify processes' included) and "# ..."
# information, then "ok K NAME" or "not ok K NAME", and last the totals line
# "# e2e: N passed, N failed, N skipped" (checks).  A case that exits non-zero
# without a FAIL line counts as one FAIL.  Exit 1 when anything failed.
# Needs root (ptrace, the exact-ID prctl).  No terminal, no stdin needed.
#
# Environment:
#   PTIMER_E2E_CASES   the cases to run, by name, separated by spaces
#                      ("linear-counter taken-id"); default: every file
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

cases=()
if [ -n "${PTIMER_E2E_CASES:-}" ]; then
	for c in $PTIMER_E2E_CASES; do
		c=${c%.sh}
		if [ ! -f "$TOP/test/e2e/cases/$c.sh" ]; then
			fail "e2e/$c" "no case test/e2e/cases/$c.sh"
			continue
		fi
		cases+=("$c")
	done
else
	for c in "$TOP"/test/e2e/cases/*.sh; do
		[ -f "$c" ] && cases+=("$(basename "$c" .sh)")
	done
fi

plan "${#cases[@]}"
info "ptimer e2e: $PT, kernel $(uname -r)"
"$PT" check 2>&1 | sed 's/^/# check: /'

k=0
for c in "${cases[@]}"; do
	k=$((k + 1))
	info "case $c"
	out=$TMP/case.$c.out
	(cd "$TOP" && bash "test/e2e/cases/$c.sh" "$B") </dev/null 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	f=$H_FAIL
	tally "$out"
	[ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out" &&
		fail "$c/exit" "test/e2e/cases/$c.sh exited with status $rc and printed no FAIL line"
	if [ "$H_FAIL" -eq "$f" ]; then echo "ok $k $c"; else echo "not ok $k $c"; fi
done
totals e2e
