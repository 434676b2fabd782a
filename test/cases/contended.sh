#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/contended.sh BUILD - two ptimers on one target: the second is
# refused (already traced) and writes nothing, the first (a linear restore of
# test/e2e/fixtures/sparse.json) finishes.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

case_two_ptimers() {
	local n=contended dir="$TMP/contended" vpid ppid ids
	encode_fixture "$n" sparse "$dir" || return
	mkdir -p "$dir/second"
	start_role verify empty "$dir" "$n"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$n/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	"$PT" restore -t "$vpid" -D "$dir" --mode linear >"$dir/r.out" 2>"$dir/r.out.err" </dev/null &
	ppid=$!
	sleep 0.5
	ptimer_run "$dir/second.out" 30 dump -t "$vpid" -D "$dir/second"
	if refused "$n/second" "$dir/second.out"; then
		check "$n/second-says-already-traced" "stderr: $(oneline "$dir/second.out.err")" \
			grep -q "already traced by process $ppid" "$dir/second.out.err"
	fi
	check "$n/second-wrote-nothing" "$(ls -A "$dir/second")" [ -z "$(ls -A "$dir/second")" ]
	wait_pid_max "$ppid" 120
	ids=$(ids_of_proc "/proc/$vpid/timers")
	check "$n/first-succeeds" "exit $WAIT_RC, ids '$ids': $(oneline "$dir/r.out.err")" \
		[ "$WAIT_RC" -eq 0 -a "$ids" = "1000000 2000000 " ]
	reap "$vpid"
}

case_two_ptimers
totals
