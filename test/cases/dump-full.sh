#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/cases/dump-full.sh BUILD - dump into a full file system and into a
# read-only one: one line naming the file and the reason, nothing left behind,
# the process running.
set -u
. test/lib/harness.sh
. test/e2e/lib.sh

case_dump_no_space() {
	local n=dump-full dir="$TMP/dump-full" spid sjob
	mkdir -p "$dir/small" "$dir/ro"
	if ! mount -t tmpfs -o size=8k ptimer-e2e "$dir/small" 2>"$dir/mount.err"; then
		skip "$n" "cannot mount a tmpfs: $(oneline "$dir/mount.err")"
		return
	fi
	mount -t tmpfs -o ro,size=8k ptimer-e2e "$dir/ro" 2>/dev/null
	start_role setup dense "$dir"
	sjob=$ROLE_PID
	if ! wait_ready "$dir" setup "$sjob" 120; then
		fail "$n/setup" "zdtm_timers setup dense: $(oneline "$dir/setup.out")"
		umount "$dir/small" "$dir/ro" 2>/dev/null
		return
	fi
	spid=$(cat "$dir/setup.pid")
	snapshot "$spid" "$dir/src"
	ptimer_run "$dir/full.out" 60 dump -t "$spid" -D "$dir/small"
	if refused "$n/enospc" "$dir/full.out"; then
		check "$n/enospc-names-file-and-reason" "stderr: $(oneline "$dir/full.out.err")" \
			grep -q "$dir/small/ptimers-$spid.img.*No space left" "$dir/full.out.err"
	fi
	check "$n/enospc-nothing-left" "left in $dir/small: $(ls -A "$dir/small" | tr '\n' ' ')" [ -z "$(ls -A "$dir/small")" ]
	untouched "$n/enospc-source" "$spid" "$dir/src"
	if mountpoint -q "$dir/ro"; then
		ptimer_run "$dir/ro.out" 60 dump -t "$spid" -D "$dir/ro"
		if refused "$n/read-only" "$dir/ro.out"; then
			check "$n/read-only-names-dir-and-reason" "stderr: $(oneline "$dir/ro.out.err")" \
				grep -q "$dir/ro.*Read-only file system" "$dir/ro.out.err"
		fi
		check "$n/read-only-nothing-left" "left in $dir/ro: $(ls -A "$dir/ro" | tr '\n' ' ')" [ -z "$(ls -A "$dir/ro")" ]
		untouched "$n/read-only-source" "$spid" "$dir/src"
	else
		skip "$n/read-only" "cannot mount a read-only tmpfs"
	fi
	reap "$spid" "$sjob"
	umount "$dir/small" "$dir/ro" 2>/dev/null
}

case_dump_no_space
totals
