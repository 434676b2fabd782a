#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sigev-thread: a standalone restore into another process refuses timers
# whose signal that process would not take, before touching it.
#  - glibc's SIGEV_THREAD timer (test/e2e/sigev_thread.c: SIGEV_THREAD_ID +
#    signal 32 to glibc's helper thread, sival a pointer into the dumped
#    process) restored into a restart of the same program: refused with a
#    line naming SIGEV_THREAD, with or without a --tid-map to the target's
#    main thread (that map, forced, gets the target killed by signal 32:
#    asserted, it is why the refusal exists); into the dumped process
#    itself the check lets it through (its IDs are taken: EEXIST).
#  - any armed timer whose signal (SIGUSR2, fixtures/usr2.json) the target
#    neither handles, ignores nor blocks: refused; into a target that
#    blocks it: restored; disarmed (usr2-disarmed.json): restored with a
#    warning; --force-signals: restored.
# Every refusal leaves the target untouched: no timers, running, alive.
#
#   bash test/cases/sigev-thread.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

ST=$B/test/sigev_thread
[ -x "$ST" ] || { fail sigev-thread/setup "$ST is missing: run 'make tests'"; exit 1; }

# start MODE DIR: sigev_thread MODE DIR (start_ready), its pid in ST_PID
start() {
	start_ready "$2" "$ST" "$1" "$2"
	local rc=$?
	ST_PID=$READY_PID
	return "$rc"
}

# untouched NAME PID: no timers, not stopped, alive
intact() {
	local why
	why=$(not_stopped "$2") || { fail "$1/untouched" "$why"; return; }
	check "$1/untouched" "process $2: alive $(alive "$2" && echo yes || echo no), timers: $(ids_of_proc "/proc/$2/timers")" \
		test "$(alive "$2" && grep -c '^ID:' "/proc/$2/timers")" = 0
}

n=sigev-thread/glibc
d=$TMP/glibc
start timers "$d/src" || { fail "$n/setup" "$(oneline "$d/src/out")"; exit 1; }
src=$ST_PID
helper=$(awk '/^notify:/ { sub(/.*tid\./, ""); print; exit }' "/proc/$src/timers")
info "$n: source $src, glibc helper thread $helper: $(tr '\n' ' ' <"/proc/$src/timers")"
check "$n/seen-as-signal-32-to-helper" "$(oneline "/proc/$src/timers")" \
	grep -q '^signal: 32/' "/proc/$src/timers"
ptimer_run "$d/dump.out" 30 dump -t "$src" -D "$d"
check "$n/dump" "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
start none "$d/dst" || { fail "$n/target" "$(oneline "$d/dst/out")"; exit 1; }
dst=$ST_PID
for map in "" "--tid-map $helper=$dst"; do
	k=$n/refused${map:+-mapped}
	# shellcheck disable=SC2086
	ptimer_run "$d/r.out" 30 restore -t "$dst" -D "$d" --image-pid "$src" $map
	check "$k" "exit $PT_RC: $(oneline "$d/r.out.err")" \
		test "$PT_RC" = 1 -a "$(grep -c . "$d/r.out.err")" = 1
	check "$k/names-sigev-thread" "$(oneline "$d/r.out.err")" grep -q 'SIGEV_THREAD timer of glibc' "$d/r.out.err"
	intact "$k" "$dst"
done
# the dumped process itself: the libc check lets it by, its IDs are taken
ptimer_run "$d/self.out" 30 restore -t "$src" -D "$d"
check "$n/same-process-passes-check" "exit $PT_RC: $(oneline "$d/self.out.err")" \
	grep -q 'already has timer ID' "$d/self.out.err"
# forced, onto the main thread: what the refusal prevents
ptimer_run "$d/force.out" 30 restore -t "$dst" -D "$d" --image-pid "$src" --tid-map "$helper=$dst" --force-signals
check "$n/forced-restores" "exit $PT_RC: $(oneline "$d/force.out.err")" test "$PT_RC" = 0
# alive: not a zombie (the case is its parent)
if wait_until 50 sh -c ". '$TOP/test/lib/harness.sh'; ! alive $dst"; then
	wait "$dst" 2>/dev/null
	rc=$?
else
	rc="still running 5 s after"
	reap "$dst"
fi
check "$n/forced-target-killed-by-32" "target exit status $rc, want 160 (128 + 32)" test "$rc" = 160
kill -USR1 "$src"
wait_until 50 test -s "$d/src/count"
c1=$(cat "$d/src/count" 2>/dev/null)
rm -f "$d/src/count"
sleep 0.2
kill -USR1 "$src"
wait_until 50 test -s "$d/src/count"
c2=$(cat "$d/src/count" 2>/dev/null)
check "$n/source-callbacks-run-on" "callbacks ${c1:-?} then ${c2:-?} 0.2 s later" test "${c2:-0}" -gt "${c1:-0}"
reap "$src"

n=sigev-thread/usr2
d=$TMP/usr2
encode_fixture "$n" usr2 "$d/armed" || exit 1
encode_fixture "$n" usr2-disarmed "$d/disarmed" || exit 1
start usr2 "$d/t1" || { fail "$n/target" "$(oneline "$d/t1/out")"; exit 1; }
t1=$ST_PID
ptimer_run "$d/r1.out" 30 restore -t "$t1" -D "$d/armed"
check "$n/armed-refused" "exit $PT_RC: $(oneline "$d/r1.out.err")" \
	test "$PT_RC" = 1 -a "$(grep -c . "$d/r1.out.err")" = 1
check "$n/armed-refused-names-signal" "$(oneline "$d/r1.out.err")" \
	grep -q 'signal 12 (User defined signal 2) to process .*neither handles, ignores nor blocks' "$d/r1.out.err"
intact "$n/armed-refused" "$t1"
ptimer_run "$d/r2.out" 30 restore -t "$t1" -D "$d/disarmed"
check "$n/disarmed-restored" "exit $PT_RC: $(oneline "$d/r2.out.err")" test "$PT_RC" = 0
check "$n/disarmed-warns" "$(oneline "$d/r2.out.err")" grep -q 'warning: .*timer 5 sends signal 12' "$d/r2.out.err"
reap "$t1"
start usr2 "$d/t2" || { fail "$n/target" "$(oneline "$d/t2/out")"; exit 1; }
t2=$ST_PID
ptimer_run "$d/r3.out" 30 restore -t "$t2" -D "$d/armed" --force-signals
check "$n/forced-restored" "exit $PT_RC: $(oneline "$d/r3.out.err")" test "$PT_RC" = 0 -a ! -s "$d/r3.out.err"
check "$n/forced-has-timer" "$(ids_of_proc "/proc/$t2/timers")" test "$(ids_of_proc "/proc/$t2/timers")" = "5 "
reap "$t2"
start usr2-blocked "$d/t3" || { fail "$n/target" "$(oneline "$d/t3/out")"; exit 1; }
t3=$ST_PID
ptimer_run "$d/r4.out" 30 restore -t "$t3" -D "$d/armed"
check "$n/blocked-restored" "exit $PT_RC: $(oneline "$d/r4.out.err")" test "$PT_RC" = 0 -a ! -s "$d/r4.out.err"
reap "$t3"
totals
