# SPDX-License-Identifier: MIT
#
# test/e2e/lib.sh - what the end-to-end cases share (bash), on top of
# test/lib/harness.sh (reporting, start_role, wait_ready, finish_verify,
# ptimer_run, ...): the build's programs, a scratch directory removed at exit,
# background processes (bg_add) killed at exit, and the helpers below.
# Sourced after test/lib/harness.sh by test/e2e.sh and by each
# test/e2e/cases/NAME.sh, run as
#   bash test/e2e/cases/NAME.sh BUILD      (from the top of the checkout)
#
# Sets: TOP (the checkout), FIX (test/e2e/fixtures), B (the build directory,
# absolute), PT (ptimer), ZT (zdtm_timers), TMP (scratch directory).  Pids to
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

# snapshot PID FILE-PREFIX: maps and timers of a process, for "untouched".
snapshot() {
	cat "/proc/$1/maps" >"$2.maps"
	cat "/proc/$1/timers" >"$2.timers"
}

# untouched NAME PID FILE-PREFIX: maps and timers as in the snapshot, running.
untouched() {
	local name=$1 pid=$2 pre=$3 why
	cat "/proc/$pid/maps" >"$pre.maps.after"
	cat "/proc/$pid/timers" >"$pre.timers.after"
	if ! cmp -s "$pre.maps" "$pre.maps.after"; then
		fail "$name-maps-unchanged" "/proc/$pid/maps changed: $(diff "$pre.maps" "$pre.maps.after" | grep '^[<>]' | head -3 | tr '\n' ' ')"
	else
		pass "$name-maps-unchanged"
	fi
	if ! cmp -s "$pre.timers" "$pre.timers.after"; then
		fail "$name-timers-unchanged" "/proc/$pid/timers changed: $(grep -c '^ID:' "$pre.timers") timers before, $(grep -c '^ID:' "$pre.timers.after") after; first new: $(diff "$pre.timers" "$pre.timers.after" | grep '^>' | head -2 | tr '\n' ' ')"
	else
		pass "$name-timers-unchanged"
	fi
	if why=$(not_stopped "$pid"); then pass "$name-not-stopped"; else fail "$name-not-stopped" "$why"; fi
}

# tid_map_args DIR: --tid-map for every non-leader thread, setup -> verify,
# in the array TIDMAP.
tid_map_args() {
	local dir=$1 i s v
	TIDMAP=()
	for ((i = 2; ; i++)); do
		s=$(sed -n "${i}p" "$dir/setup.tids")
		v=$(sed -n "${i}p" "$dir/verify.tids")
		[ -n "$s" ] && [ -n "$v" ] || break
		TIDMAP+=(--tid-map "$s=$v")
	done
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

ids_of_json() { grep -oE '"id" *: *-?[0-9]+' "$1" | grep -oE -- '-?[0-9]+' | sort -n | tr '\n' ' '; }

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

# refused NAME OUT: ptimer (PT_RC, OUT.err) exited non-zero with exactly one
# line on stderr: NAME-refused, NAME-one-line-error.
refused() {
	local name=$1 out=$2 n
	n=$(grep -c . "$out.err")
	if [ "$PT_RC" -eq 0 ]; then
		fail "$name-refused" "ptimer exited 0 (stdout: $(oneline "$out"))"
		return 1
	fi
	if [ "$PT_RC" -ge 124 ]; then
		fail "$name-refused" "ptimer exit $PT_RC (timeout or signal): $(oneline "$out.err")"
		return 1
	fi
	pass "$name-refused"
	info "$name: exit $PT_RC: $(oneline "$out.err")"
	check "$name-one-line-error" "$n lines on stderr, want 1: $(oneline "$out.err")" [ "$n" -eq 1 ]
	return 0
}

# names FILE WORD...: every WORD appears as a word in FILE.
names() {
	local f=$1 w
	shift
	for w; do grep -qw -- "$w" "$f" || return 1; done
}

# ---- one zdtm_timers scenario: setup, dump, kill, verify, restore ------------------

# run_scenario SCENARIO MODE: zdtm_timers setup SCENARIO, ptimer dump (the
# source untouched), show --json | encode round trip, the process killed, a
# fresh verify process, ptimer restore --mode MODE (auto: no --mode) into it,
# which then checks every timer itself.  With PIDNS=1 both processes are pid 1
# of their own pid namespace (label SCENARIO.MODE.pidns).
PIDNS=0
run_scenario() {
	local sc=$1 mode=$2 label="$1.$2" dir="$TMP/$1.$2" spid vpid sjob vjob img t0 t1 why rc ROLE_WRAP=
	if [ "$PIDNS" = 1 ]; then
		label="$label.pidns" dir="$dir.pidns"
		# /proc stays the parent's: ROLE_PID is unshare's pid, to wait for;
		# DIR/ROLE.pid has the process's pid as this /proc sees it
		ROLE_WRAP="unshare -pf"
	fi
	mkdir -p "$dir"
	start_role setup "$sc" "$dir"
	sjob=$ROLE_PID
	if ! wait_ready "$dir" setup "$sjob" 120; then
		wait "$sjob" 2>/dev/null
		rc=$?
		if [ "$rc" -eq 4 ]; then
			skip "$label" "$(oneline "$dir/setup.out")"
		else
			fail "$label/setup" "zdtm_timers setup exited $rc: $(oneline "$dir/setup.out")"
		fi
		return
	fi
	spid=$(cat "$dir/setup.pid")
	snapshot "$spid" "$dir/src"

	t0=$(now)
	ptimer_run "$dir/dump.out" 120 dump -t "$spid" -D "$dir"
	t1=$(now)
	img="$dir/ptimers-$spid.img"
	[ "$PIDNS" = 1 ] && img="$dir/ptimers-1.img"
	if [ "$PT_RC" -ne 0 ] || [ ! -f "$img" ]; then
		fail "$label/dump" "ptimer dump -t $spid -D $dir: exit $PT_RC, image $([ -f "$img" ] && echo present || echo missing): $(oneline "$dir/dump.out.err")"
		reap "$spid" "$sjob"
		return
	fi
	pass "$label/dump"
	info "$label: dump $(elapsed "$t0" "$t1") s: $(oneline "$dir/dump.out")"
	# Dumping must leave the process as it was: running, same maps, same timers.
	untouched "$label/dump-source" "$spid" "$dir/src"

	# The image says what /proc said, and survives show --json | encode.
	mkdir -p "$dir/rt"
	ptimer_run "$dir/rt/show.json" 60 show "$dir" --json
	if [ "$PT_RC" -ne 0 ]; then
		fail "$label/show-json" "ptimer show $dir --json: exit $PT_RC: $(oneline "$dir/rt/show.json.err")"
	else
		local want got
		want=$(ids_of_proc "$dir/src.timers")
		got=$(ids_of_json "$dir/rt/show.json")
		check "$label/show-json-ids" "ids in show --json differ from /proc/$spid/timers: got '$(echo "$got" | cut -c1-120)', want '$(echo "$want" | cut -c1-120)'" \
			[ "$got" = "$want" ]
		ptimer_run "$dir/rt/encode.out" 60 encode -i "$dir/rt/show.json" -o "$dir/rt/re.img"
		if [ "$PT_RC" -ne 0 ]; then
			fail "$label/encode-roundtrip" "ptimer encode -i show.json: exit $PT_RC: $(oneline "$dir/rt/encode.out.err")"
		elif cmp -s "$img" "$dir/rt/re.img"; then
			pass "$label/encode-roundtrip"
		else
			ptimer_run "$dir/rt/show2.json" 60 show "$dir/rt/re.img" --json
			if cmp -s "$dir/rt/show.json" "$dir/rt/show2.json"; then
				pass "$label/encode-roundtrip"
				info "$label: re-encoded image differs in bytes, show --json identical"
			else
				fail "$label/encode-roundtrip" "show --json of the re-encoded image differs: $(diff "$dir/rt/show.json" "$dir/rt/show2.json" | head -4 | tr '\n' ' ')"
			fi
		fi
	fi
	rm -f "$dir/rt/re.img"

	reap "$spid" "$sjob"

	start_role verify "$sc" "$dir" "$label"
	vjob=$ROLE_PID
	if ! wait_ready "$dir" verify "$vjob" 60; then
		fail "$label/verify-start" "zdtm_timers verify did not get ready: $(oneline "$dir/verify.out")"
		reap "$vjob"
		return
	fi
	vpid=$(cat "$dir/verify.pid")
	tid_map_args "$dir"
	# In their own namespaces both processes have tids 1, 2...: the image's
	# tids are the target's without a map (cases/README.md pidns-leader-tid).
	[ "$PIDNS" = 1 ] && TIDMAP=()
	local modeargs=()
	[ "$mode" = auto ] || modeargs=(--mode "$mode")
	t0=$(now)
	ptimer_run "$dir/restore.out" 300 restore -t "$vpid" -D "$dir" "${TIDMAP[@]}" "${modeargs[@]}"
	t1=$(now)
	if [ "$PT_RC" -ne 0 ]; then
		fail "$label/restore" "ptimer restore -t $vpid -D $dir ${TIDMAP[*]} ${modeargs[*]}: exit $PT_RC: $(oneline "$dir/restore.out.err")"
		reap "$vpid" "$vjob"
		return
	fi
	pass "$label/restore"
	info "$label: restore $(elapsed "$t0" "$t1") s: $(oneline "$dir/restore.out")"
	if why=$(not_stopped "$vpid"); then pass "$label/target-not-stopped"; else fail "$label/target-not-stopped" "$why"; fi
	if [ "$label" = sparse.linear ]; then
		# sparse-million: the cost is said up front, progress shown meanwhile
		check "$label/announces-pairs" "the first line on stderr does not give the number of create/delete pairs: $(head -1 "$dir/restore.out.err" | cut -c1-200)" \
			bash -c 'head -1 "$1" | grep -q "pairs"' _ "$dir/restore.out.err"
		# A progress line comes every 3 s off a terminal (core/restore.c):
		# a restore quicker than that has none to show.
		if awk -v d="$(elapsed "$t0" "$t1")" 'BEGIN { exit !(d < 4) }'; then
			skip "$label/shows-progress" "the restore took $(elapsed "$t0" "$t1") s, under the 3 s progress interval"
		else
			check "$label/shows-progress" "no progress line (NN%) on stderr: $(oneline "$dir/restore.out.err")" \
				grep -q '[0-9]%' "$dir/restore.out.err"
		fi
	fi
	finish_verify "$dir" "$vjob"
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
