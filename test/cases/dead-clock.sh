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
# compared from outside (untouched).  Then the target killed a few ms into
# a dump (one line, no image, no hang), and a dump that succeeds, compared
# the same way.
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
	sed -E "s#^($H_STATUS) dead-clock/#\\1 $1/#" "$d/probe.result" >"$d/probe.lines"
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

# the target killed mid-dump: ptimer ends within seconds, in one line, and
# writes no image (or, when the dump was through first, a whole one)
for at in 0.001 0.004 0.008; do
	k=$d/killed-$at
	mkdir -p "$k/img"
	"$DC" setup beyond "$k" >"$k/setup.out" 2>&1 </dev/null &
	kp=$!
	bg_add "$kp"
	if ! wait_ready "$k" setup "$kp" 30; then
		fail "$n/target-killed-at-${at}s" "setup: $(oneline "$k/setup.out")"
		continue
	fi
	t0=$(now)
	timeout -k 5 30 "$PT" dump -t "$kp" -D "$k/img" >"$k/d.out" 2>"$k/d.out.err" </dev/null &
	dp=$!
	sleep "$at"
	# bash's "Killed" notice of the target's job goes to this group's stderr
	{
		kill -KILL "$kp"
		wait "$dp"
		rc=$?
		reap "$kp"
	} 2>/dev/null
	t=$(elapsed "$t0" "$(now)")
	if [ "$rc" -eq 0 ]; then
		check "$n/target-killed-at-${at}s" "the dump was through first, but its image does not read: $(oneline "$k/d.out.err")" \
			"$PT" show "$k/img" >/dev/null 2>&1
		info "$n: target killed ${at} s into the dump: the dump was through first (${t} s)"
	else
		check "$n/target-killed-at-${at}s" "exit $rc after ${t} s, $(grep -vc '^ptimer: warning' "$k/d.out.err") lines, image dir '$(ls "$k/img" | tr '\n' ' ')': $(oneline "$k/d.out.err")" \
			eval '[ "$rc" -lt 124 ] && [ "$(grep -vc "^ptimer: warning" "$k/d.out.err")" -eq 1 ] && [ -z "$(ls -A "$k/img")" ]'
		info "$n: target killed ${at} s into the dump: exit $rc in ${t} s: $(oneline "$k/d.out.err" 200)"
	fi
done

ptimer_run "$d/dump.out" 60 dump -t "$src" -D "$d"
check "$n/dump" "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
check "$n/dump-writes-off-dead-clocks" "no warning naming the CPU clock of a thread that exited: $(oneline "$d/dump.out.err")" \
	grep -q 'CPU clock of the thread that made it, which has exited' "$d/dump.out.err"
probe "$n/dump"
untouched "$n/dump" "$src" "$d/src"
reap "$src"
totals
