#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/target-killed.sh BUILD - the multi-threaded target of a
# linear restore (test/e2e/fixtures/sparse.json) is killed mid-restore: ptimer
# says so in one line within seconds, no hang.  The kill lands at several
# moments (PTIMER_KILL_AT, seconds after the restore starts): inside the
# blob's run, between its chunks, during the rollback, wherever the machine's
# speed puts them; every one must give the same single line.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

# case_target_killed AT: the kill AT seconds after ptimer restore starts
case_target_killed() {
	local at=$1 n="interrupt/target-killed/at-$1s" dir="$TMP/target-killed-$1" vpid ppid lines
	encode_fixture "$n" sparse "$dir" || return
	start_role verify empty2 "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	"$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep "$at"
	{
		kill -KILL "$vpid"
		wait_pid_max "$ppid" 10
		wait "$vpid"
	} 2>/dev/null
	check "$n/ptimer-exits-non-zero-in-time" "exit $WAIT_RC (999: still running 10 s after the target died): $(oneline "$dir/r.out.err")" \
		[ "$WAIT_RC" -ne 0 -a "$WAIT_RC" -ne 999 ]
	info "$n: exit $WAIT_RC: $(oneline "$dir/r.out.err")"
	# the linear announcement ("ptimer: info: ...") comes first; then one error
	lines=$(grep -vc '^ptimer: info: ' "$dir/r.out.err")
	check "$n/one-line-error" "$lines lines besides the info line on stderr: $(oneline "$dir/r.out.err")" [ "$lines" -eq 1 ]
	# killed before ptimer looked: "no process N" or "process N has exited"
	# (a zombie); after: "process N exited while ptimer was ..."
	check "$n/names-exit" "stderr does not say process $vpid exited: $(oneline "$dir/r.out.err")" \
		grep -qE "process $vpid (exited while ptimer was|has exited)|no process $vpid\$" "$dir/r.out.err"
}

for at in ${PTIMER_KILL_AT:-0 0.001 0.003 0.3 1}; do
	case_target_killed "$at"
done
totals
