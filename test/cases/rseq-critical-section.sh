#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rseq-critical-section: a thread that loops inside its own rseq critical
# section (test/e2e/rseq_cs_loop.c) must never find its rseq_cs cleared while
# still inside because ptimer ran code in it: 0 lost aborts after 3 dumps and
# after restores, for the leader ("main") and for a thread that is not the
# leader (the leader has called pthread_exit: "exited"; ptimer then runs its
# code in that thread).  aborts > 0 shows the loop really runs in a section
# that the kernel aborts.
#
#   bash test/cases/rseq-critical-section.sh BUILD
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/test/lib/harness.sh"
. "$TOP/test/e2e/lib.sh"

LOOP=$B/test/rseq_cs_loop
[ -x "$LOOP" ] || { fail rseq-cs/setup "$LOOP is missing: run 'make tests'"; exit 1; }

# start_loop MODE DIR [none]: the looping process, pid in LOOP_PID.
start_loop() {
	mkdir -p "$2"
	"$LOOP" "$1" "$2" ${3:-} >"$2/out" 2>&1 </dev/null &
	LOOP_PID=$!
	bg_add "$LOOP_PID"
	wait_until 100 test -e "$2/ready"
}

counts() { tr -s ' ' <"$1/counts" 2>/dev/null; }
field() { counts "$1" | awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'; }

for mode in main exited; do
	d=$TMP/$mode
	if ! start_loop "$mode" "$d/src"; then
		if grep -q '^SKIP' "$d/src/out"; then
			skip "rseq-cs/$mode" "$(oneline "$d/src/out")"
			continue
		fi
		fail "rseq-cs/$mode/setup" "rseq_cs_loop did not get ready: $(oneline "$d/src/out")"
		continue
	fi
	src=$LOOP_PID
	ok=1
	for i in 1 2 3; do
		ptimer_run "$d/dump$i.out" 30 dump -t "$src" -D "$d"
		if [ "$PT_RC" -ne 0 ]; then
			fail "rseq-cs/$mode/dump$i" "exit $PT_RC: $(oneline "$d/dump$i.out.err")"
			ok=0
		fi
	done
	sleep 0.1
	lost=$(field "$d/src" lost) aborts=$(field "$d/src" aborts)
	info "rseq-cs/$mode: after 3 dumps: $(counts "$d/src")"
	if [ "$ok" = 1 ]; then
		check "rseq-cs/$mode/dump-lost-0" "$lost aborts lost in 3 dumps ($(counts "$d/src"))" test "${lost:-x}" = 0
		check "rseq-cs/$mode/dump-aborts" "the loop was never aborted: not in a section?" test "${aborts:-0}" -gt 0
	fi
	why=$(not_stopped "$src") || fail "rseq-cs/$mode/dump-not-stopped" "$why"

	# restore into fresh processes of the same shape, without timers
	lost_sum=0 restored=0
	for i in 1 2 3; do
		start_loop "$mode" "$d/dst$i" none || { fail "rseq-cs/$mode/restore$i" "target not ready"; continue; }
		dst=$LOOP_PID
		ptimer_run "$d/restore$i.out" 30 restore -t "$dst" -D "$d" --image-pid "$src"
		if [ "$PT_RC" -ne 0 ]; then
			fail "rseq-cs/$mode/restore$i" "exit $PT_RC: $(oneline "$d/restore$i.out.err")"
			reap "$dst"
			continue
		fi
		restored=$((restored + 1))
		n=$(grep -c '^ID:' "/proc/$dst/timers")
		[ "$n" = 2 ] || fail "rseq-cs/$mode/restore$i-timers" "$n timers after restore, want 2"
		sleep 0.1
		l=$(field "$d/dst$i" lost)
		lost_sum=$((lost_sum + ${l:-1000}))
		why=$(not_stopped "$dst") || fail "rseq-cs/$mode/restore$i-not-stopped" "$why"
		reap "$dst"
	done
	[ "$restored" = 3 ] &&
		check "rseq-cs/$mode/restore-lost-0" "$lost_sum aborts lost in 3 restores" test "$lost_sum" = 0
	reap "$src"
done
totals
