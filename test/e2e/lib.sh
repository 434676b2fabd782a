# SPDX-License-Identifier: MIT
#
# test/e2e/lib.sh - what the end-to-end cases share (bash), on top of
# test/lib/harness.sh (reporting, start_role, wait_ready, finish_verify,
# ptimer_run, ...): the build's programs, a scratch directory removed at exit,
# background processes (bg_add) killed at exit, and the helpers below.
# Sourced after test/lib/harness.sh by test/e2e.sh and by each
# test/cases/NAME.sh, run as
#   bash test/cases/NAME.sh BUILD      (from the top of the checkout)
#
# Sets: TOP (the checkout), FIX (test/e2e/fixtures), B (the build directory,
# absolute), PT (ptimer), ZT (zdtm_timers), TMP (scratch directory), and
# the case driver's DRIVE_* (test/lib/driver.sh, sourced here).  Pids to
# kill at exit: bg_add PID (or, in bash, BG+=(PID)).  Exits
# with a FAIL line when the build lacks a program, with a SKIP line when not
# root.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FIX=$TOP/test/e2e/fixtures
BUILD=${1:-build}
B=$(cd "$BUILD" 2>/dev/null && pwd) || { fail e2e/setup "no build directory '$BUILD'"; exit 1; }
PT=$B/ptimer
ZT=$B/test/zdtm_timers
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-e2e.XXXXXX")
# the case driver (test/lib/driver.sh): test/cases/LIST's rounds, and the
# helpers snapshot, untouched, tidmap, ids_of_json
DRIVE_CASES=$TOP/test/cases DRIVE_BIN=$B/test DRIVE_W=$TMP
. "$TOP/test/lib/driver.sh"

BG=()
e2e_cleanup() {
	local p
	for p in "${BG[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	bg_kill
	rm -rf "$TMP"
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM HUP

for f in "$PT" "$ZT"; do
	if [ ! -x "$f" ]; then
		fail "e2e/setup" "$f is missing: run 'make tests' first"
		exit 1
	fi
done
if [ "$(id -u)" != 0 ]; then
	skip "e2e" "needs root (ptrace of other processes, RLIMIT_SIGPENDING raise)"
	exit 0
fi

# ---- processes -----------------------------------------------------------------

# start_ready DIR PROG ARGS...: PROG ARGS in the background (stdin /dev/null,
# output in DIR/out), its pid in READY_PID (bg_add'ed); status 1 when
# DIR/ready has not appeared within 10 s.
READY_PID=0
start_ready() {
	local dir=$1
	shift
	mkdir -p "$dir"
	"$@" >"$dir/out" 2>&1 </dev/null &
	READY_PID=$!
	bg_add "$READY_PID"
	wait_until 100 test -e "$dir/ready"
}

# start_idle MODE DIR [timers|none|N]: test/e2e/idle_timers MODE DIR ...
# (leader|exited), as start_ready; its pid in IDLE_PID.
IDLE_PID=0
start_idle() {
	local rc
	start_ready "$2" "$B/test/idle_timers" "$@"
	rc=$?
	IDLE_PID=$READY_PID
	return "$rc"
}

# start_pair NAME PROG DIR: test/e2e/PROG setup DIR and PROG target DIR in the
# background (a source and a restore target, each writing DIR/ROLE.pid and
# DIR/ROLE.ready), both ready within 30 s; their pids in SP and TP, the jobs
# in SJOB and TJOB (bg_add'ed).  A FAIL NAME/start and exit 1 otherwise.
start_pair() {
	local n=$1 prog=$B/test/$2 dir=$3
	"$prog" setup "$dir" >"$dir/setup.out" 2>&1 </dev/null &
	SJOB=$!
	bg_add "$SJOB"
	"$prog" target "$dir" >"$dir/target.out" 2>&1 </dev/null &
	TJOB=$!
	bg_add "$TJOB"
	if ! wait_ready "$dir" setup "$SJOB" 30 || ! wait_ready "$dir" target "$TJOB" 30; then
		fail "$n/start" "$(oneline "$dir/setup.out") $(oneline "$dir/target.out")"
		exit 1
	fi
	SP=$(cat "$dir/setup.pid")
	TP=$(cat "$dir/target.pid")
}

# wait_pid_max PID SECONDS: wait for a background job at most SECONDS; its
# status in WAIT_RC (999: still running after SECONDS, then killed).
wait_pid_max() {
	local p=$1 i n=$(($2 * 100))
	for ((i = 0; i < n; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.01
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		WAIT_RC=999
		return
	fi
	wait "$p" 2>/dev/null
	WAIT_RC=$?
}

# ---- images and what ptimer says --------------------------------------------------

# encode_fixture LABEL FIXTURE DIR: DIR/ptimers-4242.img from the JSON
# fixture test/e2e/fixtures/FIXTURE.json; FAIL LABEL/encode when refused.
encode_fixture() {
	local label=$1 fix=$FIX/$2.json dir=$3
	mkdir -p "$dir"
	ptimer_run "$dir/encode.out" 30 encode -i "$fix" -o "$dir/ptimers-4242.img"
	[ "$PT_RC" -eq 0 ] && return 0
	fail "$label/encode" "ptimer encode -i $fix: exit $PT_RC: $(oneline "$dir/encode.out.err")"
	return 1
}

# make_mix_image DIR LABEL: a real image of zdtm_timers' mix scenario (two threads,
# a timer aimed at the second) in DIR: setup, ptimer dump, kill.  Leaves
# DIR/ptimers-PID.img and DIR/setup.tids; FAIL LABEL/mix-image otherwise.
make_mix_image() {
	local dir=$1 name=$2 spid sjob
	mkdir -p "$dir"
	start_role setup mix "$dir"
	sjob=$ROLE_PID
	if ! wait_ready "$dir" setup "$sjob" 120; then
		fail "$name/mix-image" "zdtm_timers setup mix did not get ready: $(oneline "$dir/setup.out")"
		reap "$sjob"
		return 1
	fi
	spid=$(cat "$dir/setup.pid")
	ptimer_run "$dir/dump.out" 120 dump -t "$spid" -D "$dir"
	reap "$spid" "$sjob"
	if [ "$PT_RC" -ne 0 ] || [ ! -f "$dir/ptimers-$spid.img" ]; then
		fail "$name/mix-image" "ptimer dump -t $spid -D $dir: exit $PT_RC: $(oneline "$dir/dump.out.err")"
		return 1
	fi
}

# names FILE WHAT NUMBER...: FILE names every NUMBER as a WHAT: "ID" in
# ptimer's lists of timer IDs ("timer ID 3", "past IDs 0, 3"), "thread"
# ("thread 1234", "tid 1234"), "pid" ("pid 1234", "process 1234").  A
# number elsewhere in the line (another pid, an exit status) is not it.
names() {
	local f=$1 what=$2 w re
	shift 2
	for w; do
		case $what in
		ID) re="IDs? ([0-9]+, )*$w([^0-9]|\$)" ;;
		thread) re="(thread|tid) $w([^0-9]|\$)" ;;
		pid) re="(pid|process) $w([^0-9]|\$)" ;;
		*) return 2 ;;
		esac
		grep -qE -- "$re" "$f" || return 1
	done
}

# ---- processes that change under ptimer's feet -------------------------------------

# race_dumps NAME PROGRAM TAG WHAT IMAGE_OK REFUSAL_RE [MIN_OK]: 20 dumps of a
# process (test/e2e/PROGRAM, ready as TAG) that changes under ptimer's feet.
# Each dump either writes an image that IMAGE_OK (a function: PID JSON-FILE
# IDS) accepts, or fails in one line (matching REFUSAL_RE when it is not
# empty) leaving no file; never a silent stale image.  At least MIN_OK
# (default 0) of the 20 must write an image.  The target stays alive and
# not stopped.
race_dumps() {
	local n=$1 prog=$2 tag=$3 what=$4 image_ok=$5 refusal=$6 min_ok=${7:-0}
	local dir="$TMP/$n" p job i ok=0 refusedn=0 bad=0 why ids
	mkdir -p "$dir/img"
	"$B/test/$prog" "$dir" >"$dir/out" 2>&1 </dev/null &
	job=$!
	bg_add "$job"
	wait_ready "$dir" "$tag" "$job" 30 || { fail "$n/target" "$prog did not start: $(oneline "$dir/out")"; return; }
	p=$(cat "$dir/$tag.pid")
	for ((i = 0; i < 20; i++)); do
		rm -f "$dir/img"/*
		ptimer_run "$dir/d.out" 30 dump -t "$p" -D "$dir/img"
		if [ "$PT_RC" -eq 0 ]; then
			ptimer_run "$dir/show.json" 30 show "$dir/img" --json
			ids=$(ids_of_json "$dir/show.json")
			if [ "$PT_RC" -eq 0 ] && "$image_ok" "$p" "$dir/show.json" "$ids"; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				why="dump $i succeeded but the image has ids '$ids': $(oneline "$dir/show.json" | cut -c1-200)"
			fi
		elif [ "$PT_RC" -lt 124 ] && [ "$(grep -vc '^ptimer: warning' "$dir/d.out.err")" -eq 1 ] &&
			{ [ -z "$refusal" ] || grep -qE "$refusal" "$dir/d.out.err"; } &&
			[ -z "$(ls -A "$dir/img")" ]; then
			refusedn=$((refusedn + 1))
		else
			bad=$((bad + 1))
			why="dump $i: exit $PT_RC, left '$(ls -A "$dir/img" | tr '\n' ' ')': $(oneline "$dir/d.out.err")"
		fi
	done
	info "$n: 20 dumps of a process $what: $ok consistent images, $refusedn refused"
	check "$n/consistent-or-refused" "$bad of 20 neither: last: ${why:-}" [ "$bad" -eq 0 ]
	[ "$min_ok" -gt 0 ] && check "$n/images-written" \
		"$ok of 20 dumps wrote an image, want $min_ok; last refusal: $(oneline "$dir/d.out.err")" \
		[ "$ok" -ge "$min_ok" ]
	if why=$(not_stopped "$p"); then pass "$n/not-stopped"; else fail "$n/not-stopped" "$why"; fi
	check "$n/target-alive" "process $p is gone: $(oneline "$dir/out")" alive "$p"
	reap "$p" "$job"
}
