#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# stopped-process: a process in a group-stop (SIGSTOP, or SIGTSTP as Ctrl-Z
# sends it; the case sends SIGSTOP, see below) is dumped, restored into, and
# left stopped as it was: every thread still in state T afterwards, for a plain process and for one whose
# leader has exited; after SIGCONT it runs and holds the timers.
#
#   bash test/cases/stopped-process.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

IDLE=$B/test/idle_timers
[ -x "$IDLE" ] || { fail stopped/setup "$IDLE is missing: run 'make tests'"; exit 1; }

# all_stopped PID: every live thread in state T (group-stop), else prints which.
all_stopped() {
	local f s
	for f in /proc/"$1"/task/*/status; do
		s=$(awk '/^State:/ { print $2 }' "$f" 2>/dev/null)
		case $s in
		T | Z) ;;
		*) echo "tid $(basename "$(dirname "$f")") is in state $s"; return 1 ;;
		esac
	done
}
stopped_now() { all_stopped "$1" >/dev/null; }

# still_stopped PID: every thread back in T and still there a moment later.
# A thread that ptimer detaches from in a group-stop re-enters the stop when
# it next runs (the kernel reinstates the stop on PTRACE_DETACH and wakes the
# thread, kernel/ptrace.c __ptrace_unlink), so on a busy machine it can be
# seen in another state for a while after ptimer exits.
still_stopped() {
	wait_until 200 stopped_now "$1"
	sleep 0.3
	all_stopped "$1"
}

for shape in leader exited; do
	d=$TMP/$shape
	start_idle "$shape" "$d/src" || { fail "stopped/$shape/setup" "$(oneline "$d/src/out")"; continue; }
	src=$IDLE_PID
	kill -STOP "$src"
	wait_until 300 stopped_now "$src" || { fail "stopped/$shape/setup" "$(all_stopped "$src") 30 s after SIGSTOP"; reap "$src"; continue; }
	ptimer_run "$d/dump.out" 30 dump -t "$src" -D "$d"
	check "stopped/$shape/dump" "exit $PT_RC: $(oneline "$d/dump.out.err")" test "$PT_RC" = 0
	if why=$(still_stopped "$src"); then pass "stopped/$shape/dump-still-stopped"; else fail "stopped/$shape/dump-still-stopped" "$why"; fi

	start_idle "$shape" "$d/dst" none || { fail "stopped/$shape/target" "$(oneline "$d/dst/out")"; continue; }
	dst=$IDLE_PID
	# SIGSTOP, not SIGTSTP: the kernel discards SIGTSTP sent to a process
	# group with no parent outside it in the session (an orphaned group,
	# kernel/signal.c do_signal_stop / is_current_pgrp_orphaned), which is
	# what a suite run from a script without a terminal may be.  The stop
	# ptimer meets is the same group-stop either way.
	kill -STOP "$dst"
	wait_until 300 stopped_now "$dst" || { fail "stopped/$shape/target" "$(all_stopped "$dst") 30 s after SIGSTOP"; reap "$dst"; reap "$src"; continue; }
	ptimer_run "$d/restore.out" 30 restore -t "$dst" -D "$d" --image-pid "$src"
	check "stopped/$shape/restore" "exit $PT_RC: $(oneline "$d/restore.out.err")" test "$PT_RC" = 0
	if why=$(still_stopped "$dst"); then pass "stopped/$shape/restore-still-stopped"; else fail "stopped/$shape/restore-still-stopped" "$why"; fi

	kill -CONT "$src" "$dst"
	if wait_until 50 not_stopped "$dst" >/dev/null && wait_until 50 not_stopped "$src" >/dev/null; then
		pass "stopped/$shape/runs-after-cont"
	else
		fail "stopped/$shape/runs-after-cont" "$(not_stopped "$dst") $(not_stopped "$src")"
	fi
	got=$(ids_of_proc "/proc/$dst/timers") exp=$(ids_of_proc "/proc/$src/timers")
	check "stopped/$shape/timers" "target has IDs '$got', source '$exp'" test -n "$exp" -a "$got" = "$exp"
	reap "$dst"
	reap "$src"
done
totals
