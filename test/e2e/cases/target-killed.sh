#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/e2e/cases/target-killed.sh BUILD - the multi-threaded target of a
# linear restore (test/e2e/fixtures/sparse.json) is killed mid-restore: ptimer
# says so in one line within seconds, no hang.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

case_target_killed() {
	local n=interrupt/target-killed dir="$TMP/target-killed" vpid ppid lines
	encode_fixture "$n" sparse "$dir" || return
	start_role verify empty2 "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	"$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep 1
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
	check "$n/names-exit" "stderr does not say process $vpid exited: $(oneline "$dir/r.out.err")" \
		grep -q "process $vpid exited" "$dir/r.out.err"
}

case_target_killed
totals
