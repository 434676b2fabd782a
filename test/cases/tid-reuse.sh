#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/tid-reuse.sh BUILD - timers aimed at, or on the CPU clock of, a
# thread that has exited while a new thread has its number
# (test/e2e/tid_reuse.c): `ptimer dump` tells the thread the kernel holds
# from the one with its number, records the exited thread's timers as it
# records any exited thread's (SIGEV_NONE, a dead clock written off, with
# a warning; --strict refuses), keeps the live thread's, and leaves the
# process exactly as it was (the program checks itself after the dump:
# no signal to the new thread, the timers' times, /proc/self/timers).  In
# the host's pid namespace (the number reused where ptimer reads /proc),
# and with the program pid 1 of its own (reused there, the host's numbers
# differ).
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

TR=$B/test/tid_reuse
[ -x "$TR" ] || { fail tid-reuse/setup "$TR is missing: run 'make tests'"; totals; exit 1; }

# one_round NAME [pidns]
one_round() {
	local n=$1 dir=$TMP/$1 p job ids
	mkdir -p "$dir/img" "$dir/strict"
	if [ "${2:-}" = pidns ]; then
		unshare --pid --fork "$TR" dump "$dir" >"$dir/dump.out" 2>&1 </dev/null &
	else
		"$TR" dump "$dir" >"$dir/dump.out" 2>&1 </dev/null &
	fi
	job=$!
	bg_add "$job"
	wait_file "$dir/dump.ready" "$job" 60
	if [ ! -e "$dir/dump.ready" ]; then
		wait "$job"
		if [ $? -eq 4 ]; then
			skip "$n" "$(oneline "$dir/dump.out")"
		else
			fail "$n/target" "tid_reuse did not get ready: $(oneline "$dir/dump.out")"
		fi
		return
	fi
	p=$(cat "$dir/dump.pid")
	read -r -a ids <"$dir/ids"

	# -q: an expiry queued at the seize is said in an info line
	ptimer_run "$dir/strict.out" 30 dump -q --strict -t "$p" -D "$dir/strict"
	if refused "$n/strict" "$dir/strict.out"; then
		check "$n/strict-names-timer" "stderr does not name timer ${ids[0]}..${ids[3]}: $(oneline "$dir/strict.out.err")" \
			grep -qE "timer (${ids[0]}|${ids[1]}|${ids[2]}|${ids[3]}) " "$dir/strict.out.err"
	fi
	check "$n/strict-no-image" "$(ls -A "$dir/strict")" [ -z "$(ls -A "$dir/strict")" ]

	ptimer_run "$dir/d.out" 30 dump -t "$p" -D "$dir/img"
	check "$n/dump" "exit $PT_RC: $(oneline "$dir/d.out.err")" test "$PT_RC" = 0
	for i in 0 1 2; do
		check "$n/warns-${ids[$i]}" "no warning that timer ${ids[$i]}'s thread has exited: $(oneline "$dir/d.out.err")" \
			grep -qE "timer ${ids[$i]} is aimed at thread [0-9]+, which (has exited|is gone)" "$dir/d.out.err"
	done
	check "$n/warns-clock" "no warning that timer ${ids[3]}'s clock has exited: $(oneline "$dir/d.out.err")" \
		grep -qE "timer ${ids[3]} uses the CPU clock of thread [0-9]+, which has exited" "$dir/d.out.err"
	check "$n/no-other-warning" "$(oneline "$dir/d.out.err")" \
		test "$(grep -c 'warning' "$dir/d.out.err")" = 4
	"$PT" show "$dir"/img/ptimers-*.img >"$dir/show" 2>&1
	# ID CLOCK NOTIFY...: the exited thread's three are none, its clock's
	# timer a disarmed MONOTONIC none; the live thread's keep their thread
	check "$n/image-exited" "$(oneline "$dir/show")" \
		test "$(awk -v a="${ids[0]}" -v b="${ids[1]}" -v c="${ids[2]}" -v d="${ids[3]}" \
			'($1 == a || $1 == b || $1 == c || $1 == d) && $3 == "none" { k++ } END { print k + 0 }' "$dir/show")" = 4
	check "$n/image-live-thread" "$(oneline "$dir/show")" \
		grep -qE "^ +${ids[4]} +CLOCK_MONOTONIC +thread_id signal [0-9]+ -> tid [0-9]+ " "$dir/show"
	check "$n/image-live-clock" "$(oneline "$dir/show")" \
		grep -qE "^ +${ids[5]} +CPU\\(tid [0-9]+, thread" "$dir/show"
	local why
	if why=$(not_stopped "$p"); then pass "$n/not-stopped"; else fail "$n/not-stopped" "$why"; fi
	finish_verify "$dir" "$job" dump "$n" tid-reuse
}

one_round tid-reuse
one_round tid-reuse-pidns pidns
totals
