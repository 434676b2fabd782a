#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sve-state: ptimer dumping a process whose leader holds live SVE state
# (test/e2e/sve_hold.c: z0 and p1 set, spinning without a syscall) must
# leave that state as it was: the blob's syscalls discard it in the thread,
# and the injector saves and writes back NT_ARM_SVE (restorer/arch/aarch64/
# regs.h).  Three dumps, then sve_hold checks z0 and p1 itself.  SKIP on
# x86_64 and on aarch64 CPUs without SVE.
#
#   bash test/cases/sve-state.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

SVE=$B/test/sve_hold
[ -x "$SVE" ] || { fail sve-state/setup "$SVE is missing: run 'make tests'"; exit 1; }
d=$TMP/sve
mkdir -p "$d"
"$SVE" "$d" >"$d/out" 2>&1 </dev/null &
pid=$!
bg_add "$pid"
ready_or_gone() { [ -e "$d/ready" ] || ! kill -0 "$pid" 2>/dev/null; }
wait_until 100 ready_or_gone
if [ ! -e "$d/ready" ]; then
	wait "$pid" 2>/dev/null
	if [ $? -eq 4 ]; then
		skip sve-state "$(sed -n 's/^SKIP sve-state: //p' "$d/out")"
	else
		fail sve-state/setup "sve_hold: $(oneline "$d/out")"
	fi
	totals
	exit
fi
ok=1
for i in 1 2 3; do
	ptimer_run "$d/dump$i.out" 60 dump -t "$pid" -D "$d"
	[ "$PT_RC" = 0 ] || { fail "sve-state/dump$i" "exit $PT_RC: $(oneline "$d/dump$i.out.err")"; ok=0; }
done
[ "$ok" = 1 ] && pass "sve-state/3-dumps"
kill -USR1 "$pid"
wait "$pid"
cat "$d/out"
tally "$d/out"
totals
