#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/demo.sh BUILD - ptimer in one screen: a process with sparse timer IDs
# (7, 42, 1,000,000, 2,000,000; one aimed at its second thread) is dumped,
# killed, and its timers are restored into a fresh process with the same IDs.
# Shows both timer lists side by side (/proc/PID/timers of the source before
# the dump and of the target after the restore) and what the restore cost.

set -u
. "$(dirname "$0")/lib/harness.sh"

BUILD=${1:-build}
B=$(cd "$BUILD" && pwd) || exit 1
PT=$B/ptimer
ZT=$B/test/zdtm_timers
DIR=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-demo.XXXXXX")

cleanup() {
	local rc=$?
	bg_kill
	rm -rf "$DIR"
	# a helper called that no file defines: the run did less than it says
	missing_helpers || [ "$rc" -ne 0 ] || exit 1
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

die() { echo "demo: $*" >&2; exit 1; }
for f in "$PT" "$ZT"; do [ -x "$f" ] || die "$f missing: run 'make all tests'"; done

# One line a timer, sorted by ID: "ID  signo/sival  notify  ClockID".
timer_table() {
	awk '/^ID:/ { id = $2 } /^signal:/ { sig = $2 } /^notify:/ { n = $2 }
	     /^ClockID:/ { printf "%8d  %-22s %-18s %6d\n", id, sig, n, $2 }' "$1" | sort -n
}

echo "== 1. source process: zdtm_timers setup demo"
start_role setup demo "$DIR"
SJOB=$ROLE_PID
wait_ready "$DIR" setup "$SJOB" 30 || die "setup: $(cat "$DIR/setup.out")"
SPID=$(cat "$DIR/setup.pid")
echo "   pid $SPID, threads $(tr '\n' ' ' <"$DIR/setup.tids")"
cat "/proc/$SPID/timers" >"$DIR/source.timers"

echo
echo "== 2. ptimer dump -t $SPID -D $DIR"
"$PT" dump -t "$SPID" -D "$DIR" || die "dump failed"
"$PT" show "$DIR" | sed 's/^/   /'
reap "$SJOB"
echo "   (source process killed)"

echo
echo "== 3. target process: zdtm_timers verify demo (same threads, no timers)"
start_role verify demo "$DIR"
VJOB=$ROLE_PID
wait_ready "$DIR" verify "$VJOB" 30 || die "verify: $(cat "$DIR/verify.out")"
VPID=$(cat "$DIR/verify.pid")
S2=$(sed -n 2p "$DIR/setup.tids")
V2=$(sed -n 2p "$DIR/verify.tids")
echo "   pid $VPID, threads $(tr '\n' ' ' <"$DIR/verify.tids")"

echo
echo "== 4. ptimer restore -t $VPID -D $DIR --tid-map $S2=$V2"
T0=$(now)
"$PT" restore -t "$VPID" -D "$DIR" --tid-map "$S2=$V2" || die "restore failed"
T1=$(now)
echo "   wall time of the restore command: $(awk -v s="$(elapsed "$T0" "$T1")" 'BEGIN { printf "%.1f ms", s * 1000 }')"
cat "/proc/$VPID/timers" >"$DIR/target.timers"

echo
echo "== 5. /proc/PID/timers, source $SPID before the dump | target $VPID after the restore"
printf "%8s  %-22s %-18s %6s | %8s  %-22s %-18s %6s\n" ID signo/sival notify clock ID signo/sival notify clock
timer_table "$DIR/source.timers" >"$DIR/a"
timer_table "$DIR/target.timers" >"$DIR/b"
paste -d '|' "$DIR/a" "$DIR/b" | sed 's/|/ | /'
echo "   (pid.N and tid.N differ by design: the target's own pid and thread)"

echo
echo "== 6. the target checks its timers itself"
touch "$DIR/restored"
wait "$VJOB"
RC=$?
grep -E '^(FAIL|SKIP) ' "$DIR/verify.out" | sed 's/^/   /'
echo "   $(grep -c '^PASS ' "$DIR/verify.out") checks passed, $(grep -c '^FAIL ' "$DIR/verify.out") failed"
exit "$RC"
