#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/taken-id.sh BUILD - the target already holds ID 3 of the
# image (test/e2e/fixtures/linear-counter.json, IDs 0, 3, 9): restore is
# refused in either mode, naming ID 3, the target unchanged.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

# taken_id MODE
taken_id() {
	local mode=$1 dir="$TMP/taken-id.$1" vpid name="taken-id/$1" modeargs=()
	encode_fixture "$name" linear-counter "$dir" || return
	[ "$mode" = auto ] || modeargs=(--mode "$mode")
	start_role verify holder "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir" "${modeargs[@]}"
	if refused "$name" "$dir/restore.out"; then
		check "$name-names-id-3" "stderr does not name id 3: $(oneline "$dir/restore.out.err")" \
			names "$dir/restore.out.err" ID 3
	fi
	untouched "$name-target" "$vpid" "$dir/before"
	finish_verify "$dir" "$vpid"
}

taken_id auto
taken_id linear
totals
