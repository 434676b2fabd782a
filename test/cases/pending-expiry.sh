#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pending-expiry: timers that expired while their signal was blocked
# (test/e2e/pending_timer.c).  The dump records each queued SI_TIMER signal
# (PTRACE_PEEKSIGINFO) as a pending expiry, `show` and the JSON print it,
# the source process keeps its signals (nothing dequeued), and a standalone
# restore makes the kernel queue each one again: the restored process takes
# the one-shot's expiry exactly once.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

n=pending-expiry
dir="$TMP/$n"
mkdir -p "$dir/img"
start_pair "$n" pending_timer "$dir"
sjob=$SJOB tjob=$TJOB sp=$SP tp=$TP
read -r once periodic later thread <"$dir/ids"
grep -E '^Sig(Pnd|Blk)|^ShdPnd' "/proc/$sp/status" >"$dir/status.before"
ptimer_run "$dir/dump.out" 30 dump -t "$sp" -D "$dir/img"
check "$n/dump" "exit $PT_RC: $(oneline "$dir/dump.out.err")" [ "$PT_RC" -eq 0 ]
grep -E '^Sig(Pnd|Blk)|^ShdPnd' "/proc/$sp/status" >"$dir/status.after"
check "$n/source-keeps-its-signals" "$(oneline "$dir/status.before") -> $(oneline "$dir/status.after")" \
	cmp -s "$dir/status.before" "$dir/status.after"
ptimer_run "$dir/show.txt" 30 show "$dir/img"
check "$n/show-prints-pending" "$(oneline "$dir/show.txt")" [ "$(grep -c 'pending expiry' "$dir/show.txt")" -eq 3 ]
ptimer_run "$dir/show.json" 30 show "$dir/img" --json
pend=$(awk '/"id" *:/ { gsub(/[^0-9]/, ""); id = $0 } /"pending" *: *1/ { print id }' "$dir/show.json" |
	sort -n | tr '\n' ' ')
want=$(printf '%s\n' "$once" "$periodic" "$thread" | sort -n | tr '\n' ' ')
check "$n/json-pending-ids" "pending ids '$pend', want '$want'" [ "$pend" = "$want" ]
ptimer_run "$dir/enc.img" 30 encode -i "$dir/show.json" -o "$dir/enc.img"
check "$n/encode-takes-it" "exit $PT_RC: $(oneline "$dir/enc.img.err")" [ "$PT_RC" -eq 0 ]
ptimer_run "$dir/restore.out" 30 restore -t "$tp" -D "$dir/img" --image-pid "$sp"
check "$n/restore" "exit $PT_RC: $(oneline "$dir/restore.out.err")" [ "$PT_RC" -eq 0 ]
touch "$dir/restored"
for ((i = 0; i < 3000; i++)); do
	alive "$tjob" || break
	sleep 0.01
done
wait "$tjob" 2>/dev/null
grep -E "^($H_STATUS) " "$dir/target.out"
f=$(grep -c '^FAIL ' "$dir/target.out")
H_FAIL=$((H_FAIL + f))
H_PASS=$((H_PASS + $(grep -c '^PASS ' "$dir/target.out")))
[ "$(grep -c '^PASS ' "$dir/target.out")" -eq 6 ] || fail "$n/target-lines" "$(oneline "$dir/target.out")"
reap "$sp" "$sjob"
totals
