#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/linear-counter.sh BUILD - an image with IDs 0, 3, 9
# (test/e2e/fixtures/linear-counter.json: the timers of zdtm_timers'
# offset-target scenario, SIGRTMIN is 34 with glibc) into a target whose ID
# counter stands at 5: linear mode cannot reach 0 and 3 and must refuse before
# it creates anything; a refusal moves the counter by one only; exact mode
# restores all three.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

IMG_DIR=$TMP/image
encode_fixture linear-counter linear-counter "$IMG_DIR" || exit 1
pass "linear-counter/encode"

# A target with its counter at 5; linear mode cannot reach 0 and 3.
case_linear() {
	local dir="$TMP/linear" vpid name=linear-counter/linear
	mkdir -p "$dir"
	cp "$IMG_DIR/ptimers-4242.img" "$dir/"
	start_role verify offset-empty "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	snapshot "$vpid" "$dir/before"
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir" --mode linear
	if refused "$name" "$dir/restore.out"; then
		check "$name-names-unreachable-ids" "stderr does not name both unreachable ids 0 and 3: $(oneline "$dir/restore.out.err")" \
			names "$dir/restore.out.err" ID 0 3
	fi
	check "$name-no-timers-left" "/proc/$vpid/timers holds: $(ids_of_proc /proc/"$vpid"/timers)" \
		[ ! -s "/proc/$vpid/timers" ]
	untouched "$name-target" "$vpid" "$dir/before"
	finish_verify "$dir" "$vpid"
}

# A refused linear restore leaves no timer behind, and moves the counter by
# exactly one: before Linux 6.15 the only way to read the counter is to create
# one timer (the probe; docs/design.md "Linear mode").  Counter at 5, refused restore
# of 0,3,9 -> counter at 6: an image with IDs 6 and 9
# (test/e2e/fixtures/linear-counter-retry.json) still restores.
case_retry() {
	local dir="$TMP/retry" vpid name=linear-counter/retry ids
	mkdir -p "$dir/first"
	cp "$IMG_DIR/ptimers-4242.img" "$dir/first/"
	encode_fixture "$name" linear-counter-retry "$dir/second" || return
	start_role verify offset-empty "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	ptimer_run "$dir/first.out" 120 restore -t "$vpid" -D "$dir/first" --mode linear
	refused "$name/first" "$dir/first.out"
	ptimer_run "$dir/second.out" 120 restore -t "$vpid" -D "$dir/second" --mode linear
	ids=$(ids_of_proc "/proc/$vpid/timers")
	check "$name/ids-6-9-after-a-refusal" "counter at 5, refused restore of 0,3,9 (probe takes 5), then linear restore of 6,9: exit $PT_RC, ids '$ids': $(oneline "$dir/second.out.err")" \
		[ "$PT_RC" -eq 0 -a "$ids" = "6 9 " ]
	reap "$vpid"
}

# The same image and counter in auto (exact) mode: all three come back.
case_auto() {
	local dir="$TMP/auto" vpid name=linear-counter/auto ids
	mkdir -p "$dir"
	cp "$IMG_DIR/ptimers-4242.img" "$dir/"
	start_role verify offset-target "$dir" "$name"
	vpid=$ROLE_PID
	wait_ready "$dir" verify "$vpid" || { fail "$name/target" "verify did not start: $(oneline "$dir/verify.out")"; return; }
	ptimer_run "$dir/restore.out" 120 restore -t "$vpid" -D "$dir"
	if [ "$PT_RC" -ne 0 ]; then
		fail "$name/restore" "ptimer restore -t $vpid -D $dir: exit $PT_RC: $(oneline "$dir/restore.out.err")"
	else
		pass "$name/restore"
		ids=$(ids_of_proc "/proc/$vpid/timers")
		check "$name/ids-0-3-9" "/proc/$vpid/timers has ids '$ids'" [ "$ids" = "0 3 9 " ]
	fi
	finish_verify "$dir" "$vpid"
}

case_linear
case_retry
case_auto
totals
