#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/interrupt-restore.sh BUILD - SIGTERM and SIGINT to a linear
# restore of test/e2e/fixtures/sparse.json (IDs 1,000,000 and 2,000,000: 2
# million create/delete pairs, seconds) after ~1 s: it rolls back between
# chunks and exits non-zero; the target is as before, running.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

sigblk() { awk '/^SigBlk:/ { print $2 }' "/proc/$1/status"; }

case_interrupt_restore() {
	local sig=$1 n="interrupt/$1" dir="$TMP/interrupt.$1" vpid ppid blk
	encode_fixture "$n" sparse "$dir" || return
	start_role verify empty "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	blk=$(sigblk "$vpid")
	# a background job of a script ignores SIGINT: give ptimer the default back
	env --default-signal="$sig" "$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep 1
	kill -"$sig" "$ppid"
	wait_pid_max "$ppid" 20
	check "$n/ptimer-exits-non-zero" "exit $WAIT_RC (999: still running 20 s after SIG$sig): $(oneline "$dir/r.out.err")" \
		[ "$WAIT_RC" -ne 0 -a "$WAIT_RC" -ne 999 ]
	info "$n: exit $WAIT_RC: $(oneline "$dir/r.out.err")"
	check "$n/says-interrupted" "stderr does not say it was interrupted and restored nothing: $(oneline "$dir/r.out.err")" \
		grep -q 'interrupted by signal.*restored nothing' "$dir/r.out.err"
	if alive "$vpid"; then pass "$n/target-alive"; else fail "$n/target-alive" "process $vpid is gone"; return; fi
	untouched "$n/target" "$vpid" "$dir/before"
	check "$n/no-timers" "/proc/$vpid/timers holds: $(ids_of_proc /proc/"$vpid"/timers)" [ ! -s "/proc/$vpid/timers" ]
	check "$n/sigblk-unchanged" "SigBlk $blk before, $(sigblk "$vpid") after" [ "$(sigblk "$vpid")" = "$blk" ]
	finish_verify "$dir" "$vpid"
}

case_interrupt_restore TERM
case_interrupt_restore INT
totals
