# SPDX-License-Identifier: MIT
#
# test/e2e/lib.sh - what every end-to-end case shares (bash): the build's
# programs, a scratch directory removed at exit, background processes killed
# at exit, and the process helpers below.  Sourced after test/lib/harness.sh
# by test/e2e.sh and by each test/e2e/cases/NAME.sh, run as
#   bash test/e2e/cases/NAME.sh BUILD      (from the top of the checkout)
#
# Sets: B (the build directory, absolute), PT (ptimer), ZT (zdtm_timers),
# TMP (scratch directory), BG (pids to kill at exit).  Exits with a FAIL
# line when the build lacks a program, with a SKIP line when not root.

BUILD=${1:-build}
B=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "FAIL e2e/setup: no build directory '$BUILD'"; exit 1; }
PT=$B/ptimer
ZT=$B/test/zdtm_timers
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-e2e.XXXXXX")
BG=()

e2e_cleanup() {
	local p
	for p in "${BG[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
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

# ---- processes -------------------------------------------------------------


# start_role ROLE SCENARIO DIR [LABEL]: zdtm_timers in the background; its
# pid in ROLE_PID.  Output in DIR/ROLE.out.
# With PIDNS=1 the process is pid 1 of its own pid namespace (unshare -pf,
# /proc stays the parent's): ROLE_PID is then unshare's pid, to wait for;
# DIR/ROLE.pid has the process's pid as this /proc sees it.
ROLE_PID=
PIDNS=0
start_role() {
	local role=$1 sc=$2 dir=$3 pre=()
	shift 3
	[ "$PIDNS" = 1 ] && pre=(unshare -pf)
	"${pre[@]}" "$ZT" "$role" "$sc" "$dir" "$@" >"$dir/$role.out" 2>&1 </dev/null &
	ROLE_PID=$!
	BG+=("$ROLE_PID")
}

# wait_ready DIR ROLE PID [TIMEOUT_S]: poll for DIR/ROLE.ready.
wait_ready() {
	local dir=$1 role=$2 pid=$3 i n=$((${4:-60} * 100))
	for ((i = 0; i < n; i++)); do
		[ -e "$dir/$role.ready" ] && return 0
		alive "$pid" || { [ -e "$dir/$role.ready" ] && return 0; return 1; }
		sleep 0.01
	done
	return 1
}

# reap PID [JOB]: kill the process (and the job that started it), wait.
reap() {
	{
		kill -KILL "$1" ${2:+"$2"}
		wait "${2:-$1}"
	} 2>/dev/null
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

# finish_verify DIR JOB: let a verify process check, then show its lines.
finish_verify() {
	local dir=$1 pid=$2 i rc f
	touch "$dir/restored"
	for ((i = 0; i < 18000; i++)); do
		alive "$pid" || break
		sleep 0.01
	done
	if alive "$pid"; then
		kill -KILL "$pid"
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	grep -E '^(PASS|FAIL|SKIP) ' "$dir/verify.out"
	grep -vE '^(PASS|FAIL|SKIP) ' "$dir/verify.out" | sed 's/^/# verify: /'
	f=$(grep -c '^FAIL ' "$dir/verify.out")
	H_FAIL=$((H_FAIL + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail "$(basename "$dir")/verify-exit" "zdtm_timers verify exited with status $rc and no FAIL line"
	fi
}

# tid_map_args DIR: --tid-map for every non-leader thread, setup -> verify.
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

# ptimer_run OUTFILE TIMEOUT ARGS...: run ptimer, status in PT_RC.
ptimer_run() {
	local out=$1 to=$2
	shift 2
	timeout -k 5 "$to" "$PT" "$@" >"$out" 2>"$out.err" </dev/null
	PT_RC=$?
	[ "$PT_RC" -eq 124 ] && echo "(timed out after $to s)" >>"$out.err"
	return 0
}

ids_of_proc() { awk '/^ID:/ { print $2 }' "$1" | sort -n | tr '\n' ' '; }
ids_of_json() { grep -oE '"id" *: *-?[0-9]+' "$1" | grep -oE -- '-?[0-9]+' | sort -n | tr '\n' ' '; }
