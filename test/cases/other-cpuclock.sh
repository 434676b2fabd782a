#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/other-cpuclock.sh BUILD - a timer on another process's CPU
# clock (test/e2e/other_cpuclock.c): dump refuses, naming that pid, and writes
# no image.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

case_other_cpuclock() {
	local n=other-cpuclock dir="$TMP/other-cpuclock" p c job
	mkdir -p "$dir/img"
	"$B/test/other_cpuclock" "$dir" >"$dir/out" 2>&1 </dev/null &
	job=$!
	bg_add "$job"
	wait_ready "$dir" other "$job" 30 || { fail "$n/target" "other_cpuclock did not start: $(oneline "$dir/out")"; return; }
	read -r p c <"$dir/other.pid"
	ptimer_run "$dir/d.out" 30 dump -t "$p" -D "$dir/img"
	if refused "$n" "$dir/d.out"; then
		check "$n/names-pid" "stderr does not name pid $c: $(oneline "$dir/d.out.err")" names "$dir/d.out.err" pid "$c"
	fi
	check "$n/no-image" "$(ls -A "$dir/img")" [ -z "$(ls -A "$dir/img")" ]
	local why
	if why=$(not_stopped "$p"); then pass "$n/not-stopped"; else fail "$n/not-stopped" "$why"; fi
	reap "$p" "$job"
}

case_other_cpuclock
totals
