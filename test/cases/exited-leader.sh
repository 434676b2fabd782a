#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# exited-leader: the leader of a process has called pthread_exit() while a
# second thread lives on (test/e2e/idle_timers.c exited).  Timers belong to
# the process: dump reads them through the live thread, restore recreates
# them through it, with timers and without; the process keeps running.  A
# process whose every thread has exited (a zombie waiting for its parent)
# is refused with a message that says so.
#
#   bash test/cases/exited-leader.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

IDLE=$B/test/idle_timers
[ -x "$IDLE" ] || { fail exited-leader/setup "$IDLE is missing: run 'make tests'"; exit 1; }

# start_exited MODE DIR [none]: start_idle (test/e2e/lib.sh), and for
# exited until the leader is a zombie; IDLE_PID 0 when not ready.
start_exited() {
	start_idle "$@" || { IDLE_PID=0; return 1; }
	# the leader is a zombie once pthread_exit() is through
	[ "$1" != exited ] || wait_until 100 grep -q '^State:.Z' "/proc/$IDLE_PID/status"
}

for what in timers none; do
	d=$TMP/$what
	start_exited exited "$d/src" "$what" || { fail "exited-leader/$what/setup" "$(oneline "$d/src/out")"; continue; }
	src=$IDLE_PID
	want=$(grep -c '^ID:' "/proc/$src/timers")
	ptimer_run "$d/dump.out" 30 dump -t "$src" -D "$d"
	check "exited-leader/$what/dump" "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
	n=$(grep -oE 'dumped [0-9]+ timers' "$d/dump.out" | grep -oE '[0-9]+')
	check "exited-leader/$what/dump-count" "dumped '${n:-?}' timers, the process has $want" test "${n:-x}" = "$want"
	why=$(not_stopped "$src") || fail "exited-leader/$what/dump-not-stopped" "$why"

	start_exited exited "$d/dst" none || { fail "exited-leader/$what/target" "$(oneline "$d/dst/out")"; continue; }
	dst=$IDLE_PID
	ptimer_run "$d/restore.out" 30 restore -t "$dst" -D "$d" --image-pid "$src" --verify
	check "exited-leader/$what/restore" "exit $PT_RC: $(oneline "$d/restore.out.err")" test "$PT_RC" = 0
	got=$(ids_of_proc "/proc/$dst/timers") exp=$(ids_of_proc "/proc/$src/timers")
	check "exited-leader/$what/restore-ids" "target has IDs '$got', source '$exp'" test "$got" = "$exp"
	why=$(not_stopped "$dst") || fail "exited-leader/$what/restore-not-stopped" "$why"
	reap "$dst"
	reap "$src"
done

# Every thread gone, the parent has not reaped it: say what is the case.
mkdir -p "$TMP/zombie"
# the child exits at once; its parent has become sleep(1), which never reaps
bash -c 'sleep 0.05 & exec sleep 30' &
parent=$!
bg_add "$parent"
wait_until 50 pgrep -P "$parent" >/dev/null
zpid=$(pgrep -P "$parent" | head -n1)
if [ -n "$zpid" ] && wait_until 50 grep -q '^State:.Z' "/proc/$zpid/status"; then
	ptimer_run "$TMP/zombie/dump.out" 30 dump -t "$zpid" -D "$TMP/zombie"
	if [ "$PT_RC" -ne 0 ] && grep -q 'no live thread' "$TMP/zombie/dump.out.err"; then
		pass exited-leader/zombie-message
	else
		fail exited-leader/zombie-message "exit $PT_RC: $(oneline "$TMP/zombie/dump.out.err")"
	fi
else
	fail exited-leader/zombie-setup "no unreaped child of $parent"
fi
reap "$parent"
totals
