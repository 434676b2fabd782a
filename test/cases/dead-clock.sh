#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# dead-clock: a dump that fails leaves the process as it was.  The program
# (test/e2e/dead_clock.c) holds timers on the CPU clock of a thread that
# has exited and a disarmed one on the leader's own clock, which the look
# at the clocks arms for a moment (core/thread_clock.c).  The fault-
# injection build of ptimer ('make asan', core/fault.h) fails the dump at
# each point after the process was touched; after each, the program itself
# compares every timer's timer_gettime() and its signal mask with what they
# were (DIR/probe), and the maps, /proc/PID/timers and run state are
# compared from outside (untouched).  Then a dump that succeeds, the same.
#
#   bash test/cases/dead-clock.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

n=dead-clock
DC=$B/test/dead_clock
case $B in
*-asan) FPT=$B/ptimer ;;
*) FPT=$B-asan/ptimer ;;
esac
[ -x "$DC" ] || { fail "$n/setup" "$DC is missing: run 'make tests'"; exit 1; }
[ -x "$FPT" ] || { fail "$n/setup" "$FPT is missing: 'make asan' builds the fault-injection ptimer"; exit 1; }
d=$TMP/dc
mkdir -p "$d"
"$DC" setup beyond "$d" >"$d/setup.out" 2>&1 </dev/null &
src=$!
bg_add "$src"
wait_ready "$d" setup "$src" 30 || { fail "$n/setup" "$(oneline "$d/setup.out")"; exit 1; }
snapshot "$src" "$d/src"

# probe LABEL: the program's own comparison, every line counted
probe() {
	rm -f "$d/probe.result"
	touch "$d/probe"
	if ! wait_until 100 test ! -e "$d/probe"; then
		fail "$1/probe" "the program did not answer DIR/probe in 10 s: $(oneline "$d/setup.out")"
		return
	fi
	sed -E "s#^(PASS|FAIL|SKIP) dead-clock/#\\1 $1/#" "$d/probe.result" >"$d/probe.lines"
	cat "$d/probe.lines"
	tally "$d/probe.lines"
}

for point in look-arm look-read look-disarm after-dump; do
	rm -rf "$d/f"
	mkdir -p "$d/f"
	PTIMER_FAULT=$point timeout -k 5 60 "$FPT" dump -t "$src" -D "$d/f" >"$d/f.out" 2>"$d/f.out.err" </dev/null
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && [ -z "$(ls "$d/f")" ] && grep -q 'injected failure' "$d/f.out.err"; then
		pass "$n/fault-$point-fails: exit $rc: $(oneline "$d/f.out.err" 160)"
	else
		fail "$n/fault-$point-fails" "exit $rc, image dir: '$(ls "$d/f" | tr '\n' ' ')', stderr: $(oneline "$d/f.out.err")"
	fi
	probe "$n/fault-$point"
	untouched "$n/fault-$point" "$src" "$d/src"
done

ptimer_run "$d/dump.out" 60 dump -t "$src" -D "$d"
check "$n/dump" "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
check "$n/dump-writes-off-dead-clocks" "no warning naming the CPU clock of a thread that exited: $(oneline "$d/dump.out.err")" \
	grep -q 'CPU clock of the thread that made it, which has exited' "$d/dump.out.err"
probe "$n/dump"
untouched "$n/dump" "$src" "$d/src"
reap "$src"
totals
