#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test/qemu/guest-suite.sh - ptimer end to end inside one guest kernel of the
# matrix (test/qemu/matrix.sh), under busybox sh: test/cases/LIST in the
# guest flavours (guest: --mode auto; guest-linear where the kernel has the
# exact-ID prctl) through the case driver (test/lib/driver.sh): the rounds,
# and the cases with a round of their own there (case_guest: images
# written as JSON, a counter at 5, the sparse sets, the far-ID timers, a
# missing tid map).  This script only learns what the kernel has (kprobe,
# ptimer check) and asks the driver.
#
# Output lines (to stdout, the serial console):
#   1..N                                             the plan: N cases
#   PASS NAME | FAIL NAME: WHY | SKIP NAME: WHY     one check each
#   ok K CASE | not ok K CASE                        after each case
#   FEATURE KEY VALUE                                for the kernel table
#   TIME NAME WALL-S PTIMER-MS MODE                  restore times
#   # ...                                            information
#   # guest: N passed, N failed, N skipped           the totals, last
#
# Environment: PTIMER_DIR (where ptimer, zdtm_timers, kprobe are; /ptimer),
# SPARSE_MAX (the largest ID of the sparse set; 100000), FAR_ID (the far-ID
# case's first ID, the second is twice it; 1000000: test/qemu/matrix.sh
# sizes it down on guests that TCG emulates slowly, arm64).  Needs root.
# test/lib/harness.sh and driver.sh, and test/cases, are in $PTIMER_DIR
# (test/qemu/initramfs.sh puts them there).
set -u
D=${PTIMER_DIR:-/ptimer}
PT=$D/ptimer
ZT=$D/zdtm_timers
KP=$D/kprobe
SPARSE_MAX=${SPARSE_MAX:-100000}
FAR_ID=${FAR_ID:-1000000}
T=$(mktemp -d /tmp/suite.XXXXXX)

# the busybox date has no %N: the clock is kprobe's (test/qemu/kprobe.c)
H_CLOCK="$KP now"
# one CPU: look less often than on the host, each look takes it from the target
H_POLL=0.05
. "$D/harness.sh"
DRIVE_CASES=$D/cases DRIVE_BIN=$D DRIVE_W=$T DRIVE_TIME=1
. "$D/driver.sh"

# ---- main ---------------------------------------------------------------------

info "guest kernel $(uname -r), $(nproc) cpu, ptimer $PT"
for f in "$PT" "$ZT" "$KP"; do
	[ -x "$f" ] || { fail "guest/setup" "$f missing"; exit 1; }
done
"$KP" features 20000 >"$T/features" 2>&1
cat "$T/features"
"$PT" check >"$T/check" 2>&1
sed 's/^/# check: /' "$T/check"
echo "FEATURE check_prctl $(grep 'exact timer IDs' "$T/check" | head -1 | tr -s ' ')"
EXACT=0
grep -q '^FEATURE prctl77 [01]$' "$T/features" && EXACT=1
info "exact IDs: $EXACT (auto takes $([ "$EXACT" = 1 ] && echo exact || echo linear) mode)"

# test/cases/LIST in the flavours a guest offers: guest, and guest-linear
# where the exact-ID prctl makes linear mode a choice, not the only way
flavours=guest
[ "$EXACT" = 1 ] && flavours="guest guest-linear"
# shellcheck disable=SC2046
set -- $(drive_words $flavours)
run_cases "$@"
rm -rf "$T"
totals guest
