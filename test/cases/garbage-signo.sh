#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# garbage-signo: SIGEV_NONE timers with sigev_signo 65, -7 and 12345 and a
# garbage sival (test/e2e/sigev_garbage.c) are what the kernel holds
# (good_sigevent() never looks at the signal of SIGEV_NONE).  ptimer dump
# must take them, the image must show them, and a restore into a fresh
# process must give /proc/PID/timers the same lines (IDs, signal, sival,
# notification, clock), and the armed one its time back.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

n=garbage-signo
dir="$TMP/$n"
mkdir -p "$dir/img"
start_pair "$n" sigev_garbage "$dir"
sjob=$SJOB tjob=$TJOB sp=$SP tp=$TP
# the notify pid differs between the two processes; everything else must not
norm() { sed -E 's/(pid|tid)\.[0-9]+/\1.N/' "/proc/$1/timers" | paste -d' ' - - - - | sort; }
norm "$sp" >"$dir/setup.timers"
check "$n/kernel-keeps-signo" "/proc/$sp/timers: $(oneline "$dir/setup.timers")" \
	grep -q "signal: 65/a5a5a5a5a5a5a5a5" "$dir/setup.timers"
ptimer_run "$dir/dump.out" 30 dump -t "$sp" -D "$dir/img"
check "$n/dump" "exit $PT_RC: $(oneline "$dir/dump.out.err")" [ "$PT_RC" -eq 0 ]
ptimer_run "$dir/show.json" 30 show "$dir/img" --json
for s in 65 -7 12345; do
	check "$n/image-signo-$s" "$(oneline "$dir/show.json" | cut -c1-300)" \
		grep -qE "\"signo\" *: *$s," "$dir/show.json"
done
ptimer_run "$dir/show.txt" 30 show "$dir/img"
check "$n/show-prints-signo" "$(oneline "$dir/show.txt")" grep -q "none (signo 12345)" "$dir/show.txt"
ptimer_run "$dir/enc.img" 30 encode -i "$dir/show.json" -o "$dir/enc.img"
check "$n/encode-takes-it" "exit $PT_RC: $(oneline "$dir/enc.img.err")" [ "$PT_RC" -eq 0 ]
ptimer_run "$dir/restore.out" 30 restore -t "$tp" -D "$dir/img" --image-pid "$(grep -oE '"pid" *: *[0-9]+' "$dir/show.json" | grep -oE '[0-9]+$')"
check "$n/restore" "exit $PT_RC: $(oneline "$dir/restore.out.err")" [ "$PT_RC" -eq 0 ]
norm "$tp" >"$dir/target.timers"
check "$n/restored-verbatim" "setup: $(oneline "$dir/setup.timers"); restored: $(oneline "$dir/target.timers")" \
	cmp -s "$dir/setup.timers" "$dir/target.timers"
# the armed one (1000 s at setup) runs on in the restored process
mkdir -p "$dir/img2"
ptimer_run "$dir/dump2.out" 30 dump -t "$tp" -D "$dir/img2"
ptimer_run "$dir/show2.json" 30 show "$dir/img2" --json
secs=$(grep -oE '"sec" *: *[0-9]+' "$dir/show2.json" | grep -oE '[0-9]+$' | sort -n | tail -1)
check "$n/armed-time-restored" "largest it_value/it_interval sec '${secs:-}' not in 1..999" \
	[ "${secs:-0}" -ge 1 -a "${secs:-0}" -le 999 ]
reap "$sp" "$sjob"
reap "$tp" "$tjob"
totals
