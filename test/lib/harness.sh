# SPDX-License-Identifier: MIT
#
# test/lib/harness.sh - the one reporting and process harness of every ptimer
# shell suite (test/run.sh, test/e2e.sh and its cases, the qemu guest suite,
# the kernel matrix, the criu and container suites, the fuzz replay, demo and
# bench).  POSIX sh: it is sourced by bash on the host and by busybox sh inside
# the qemu guests.
#
#   . "$TOP/test/lib/harness.sh"
#   H_PREFIX=criu-trixie/     # optional: put in front of every check name
#   plan 12                   # "1..12" as kselftest prints it: the cases to run
#   pass NAME | fail NAME WHY | skip NAME WHY | xfail NAME WHY | info TEXT...
#   skip_suite NAME WHY       # SKIP of a whole suite or stage: also listed at
#                             # the end of `make check` (test/run.sh)
#   check NAME WHY CMD...     # PASS when CMD succeeds, else FAIL NAME: WHY
#   tally FILE                # count the PASS/FAIL/SKIP lines another program printed
#   run_cases CASE...         # plan, then each case with "ok K CASE" / "not ok K CASE"
#   totals [LABEL]            # "# [LABEL: ]N passed, N failed, N skipped[, N xfail]";
#                             # status 1 on a FAIL
#
# Check lines, the suites' wire format, counted by test/run.sh, which
# prints them as TAP 13 (kselftest's directives): "PASS NAME", "FAIL NAME:
# WHY", "SKIP NAME: WHY" (what this machine lacks), "XFAIL NAME: WHY" (a
# check expected to fail, with the reason: criu alone's outcome where it
# is allowed to fail).  "1..N", "ok K CASE", "not ok K CASE" and "# ..."
# are information.
#
# Process helpers for the zdtm_timers roles (test/e2e/zdtm_timers.c: a role
# writes DIR/ROLE.pid, then DIR/ROLE.ready; the verify role checks its timers
# once DIR/restored exists and prints PASS/FAIL/SKIP lines):
#   start_role ROLE SCENARIO DIR [LABEL]   needs ZT (the zdtm_timers program)
#   wait_ready DIR ROLE PID [TIMEOUT_S]    finish_verify DIR PID [ROLE [LABEL TAG]]
#   wait_file FILE PID [TIMEOUT_S]
#   reap PID [JOB]    alive PID    not_stopped PID    wait_until TENTHS CMD...
#   bg_add PID / bg_kill   processes to kill when the suite exits
#   ptimer_run OUT TIMEOUT_S ARGS...       needs PT (the ptimer program)
#   oneline FILE [WIDTH]   logtail FILE...   ids_of_proc FILE   now   elapsed T0 T1

H_PREFIX=${H_PREFIX:-}
H_PASS=0
H_FAIL=0
H_SKIP=0
H_XFAIL=0
H_BG=

# The words a check line starts with, "WORD NAME[: WHY]", wherever a
# program's or a suite's lines are collected: the one pattern (grep -E, sed
# -E) every collector uses, so that none drops a kind (an XFAIL).
H_STATUS='PASS|FAIL|SKIP|XFAIL'

plan() { echo "1..$1"; }
pass() { echo "PASS $H_PREFIX$1"; H_PASS=$((H_PASS + 1)); }
fail() { echo "FAIL $H_PREFIX$1: $2"; H_FAIL=$((H_FAIL + 1)); }
skip() { echo "SKIP $H_PREFIX$1: $2"; H_SKIP=$((H_SKIP + 1)); }
xfail() { echo "XFAIL $H_PREFIX$1: $2"; H_XFAIL=$((H_XFAIL + 1)); }
info() { echo "# $*"; }
# A SKIP is for what the machine truly lacks (a kernel or CPU feature,
# hardware, privileges); an environment a suite needs and could not build
# (a root, a kernel, a package) is a FAIL.  The "# skipped-suite" line is
# what test/run.sh collects for its closing list.
skip_suite() { skip "$1" "$2"; echo "# skipped-suite $H_PREFIX$1: $2"; }

# A helper a suite calls that no file defines is a FAIL (totals), not a
# line on stderr the run goes past: a lost helper once kept 40 checks from
# running, unseen.  bash calls this for any command it cannot find, in a
# subshell, so the name goes to a file totals reads.  Only helper-like
# names (words joined by '_'): an external program a suite probes by
# running it (gcc, go, stress-ng) stays bash's own "command not found".
# busybox sh (the qemu guests) has no such hook.
command_not_found_handle() {
	case $1 in
	*[!a-z0-9_]* | _* | *_ | [0-9]*) ;;
	*_*)
		echo "$1" >>"${TMPDIR:-/tmp}/ptimer-missing.$$"
		echo "${BASH_SOURCE[1]:-bash}: line ${BASH_LINENO[0]:-?}: $1: no such command or shell function (a helper no file defines?)" >&2
		return 127
		;;
	esac
	echo "${BASH_SOURCE[1]:-bash}: line ${BASH_LINENO[0]:-?}: $1: command not found" >&2
	return 127
}
# a file an earlier shell of this pid left (killed before its totals)
rm -f "${TMPDIR:-/tmp}/ptimer-missing.$$"

# check NAME WHY CMD...: PASS NAME when CMD exits 0, else FAIL NAME: WHY.
check() {
	_h_name=$1 _h_why=$2
	shift 2
	if "$@"; then pass "$_h_name"; else fail "$_h_name" "$_h_why"; fi
}

# tally FILE: add the PASS/FAIL/SKIP/XFAIL lines of FILE (printed by another
# program: a verify process, a case file, a guest) to this suite's counts;
# a missing FILE adds nothing.
tally() {
	_h_n=$(cat "$1" 2>/dev/null | grep -c '^PASS ')
	H_PASS=$((H_PASS + ${_h_n:-0}))
	_h_n=$(cat "$1" 2>/dev/null | grep -c '^FAIL ')
	H_FAIL=$((H_FAIL + ${_h_n:-0}))
	_h_n=$(cat "$1" 2>/dev/null | grep -c '^SKIP ')
	H_SKIP=$((H_SKIP + ${_h_n:-0}))
	_h_n=$(cat "$1" 2>/dev/null | grep -c '^XFAIL ')
	H_XFAIL=$((H_XFAIL + ${_h_n:-0}))
	return 0
}

# run_cases CASE...: the plan line ("1..N"), then each CASE, a command whose
# words are separated by ":" ("scenario:mix:auto" runs `scenario mix auto`),
# followed by "ok K CASE" or, when it added a FAIL, "not ok K CASE".
# totals checks that all N ran (a shell error inside a case ends run_cases).
H_PLANNED=
H_RAN=0
run_cases() {
	plan $#
	H_PLANNED=$#
	_hc_k=0
	for _hc_c; do
		_hc_k=$((_hc_k + 1))
		_hc_f=$H_FAIL
		_hc_ifs=$IFS
		IFS=:
		set -f
		# shellcheck disable=SC2086
		set -- $_hc_c
		set +f
		IFS=$_hc_ifs
		"$@"
		if [ "$H_FAIL" -eq "$_hc_f" ]; then
			echo "ok $_hc_k $*"
		else
			echo "not ok $_hc_k $*"
		fi
		H_RAN=$_hc_k
	done
}

# totals [LABEL]: the counts of this suite; exit status 1 when a check failed.
# After run_cases, first a FAIL "plan" when fewer cases ran than it planned
# (kselftest's "Planned tests != run tests").
totals() {
	if [ -s "${TMPDIR:-/tmp}/ptimer-missing.$$" ]; then
		for _h_m in $(sort -u "${TMPDIR:-/tmp}/ptimer-missing.$$"); do
			fail "missing-helper/$_h_m" "called, but no file of the suite defines it: the checks around the call did not run"
		done
		rm -f "${TMPDIR:-/tmp}/ptimer-missing.$$"
	fi
	if [ -n "$H_PLANNED" ] && [ "$H_RAN" -ne "$H_PLANNED" ]; then
		fail plan "$H_PLANNED cases planned, $H_RAN ran: case $((H_RAN + 1)) ended the run"
	fi
	if [ "$H_XFAIL" -gt 0 ]; then
		echo "# ${1:+$1: }$H_PASS passed, $H_FAIL failed, $H_SKIP skipped, $H_XFAIL xfail"
	else
		echo "# ${1:+$1: }$H_PASS passed, $H_FAIL failed, $H_SKIP skipped"
	fi
	[ "$H_FAIL" -eq 0 ]
}

# missing_helpers: for a script that keeps no totals (bench.sh, demo.sh):
# the helpers it called that no file defines, on one line on stderr, and
# exit status 1; 0 when none.
missing_helpers() {
	[ -s "${TMPDIR:-/tmp}/ptimer-missing.$$" ] || return 0
	echo "$(basename "$0"): called, but no file defines: $(sort -u "${TMPDIR:-/tmp}/ptimer-missing.$$" | tr '\n' ' ')" >&2
	rm -f "${TMPDIR:-/tmp}/ptimer-missing.$$"
	return 1
}

# logtail FILE...: the last error-looking lines of criu's logs (criu's
# "Error (" tags, the plugin's "ptimer" lines), on one line.
logtail() {
	{ grep -hE 'Error|error|rror \(|Missing|ptimer' "$@" 2>/dev/null | tail -n 4; } | tr '\n' ' ' | cut -c1-400
}

# oneline FILE [WIDTH]: a file's text on one line, cut at WIDTH (400) chars.
oneline() { tr '\n' ' ' <"$1" 2>/dev/null | sed 's/ *$//' | cut -c1-"${2:-400}"; }

# ids_of_proc FILE: the timer IDs of a /proc/PID/timers text, sorted, one
# line ("0 3 9 ").
ids_of_proc() { awk '/^ID:/ { print $2 }' "$1" | sort -n | tr '\n' ' '; }

# now: seconds since the epoch with nanoseconds (H_CLOCK: a command printing
# the same, where date lacks %N: busybox); elapsed T0 T1: T1 - T0 in s.
now() { if [ -n "${H_CLOCK:-}" ]; then $H_CLOCK; else date +%s.%N; fi; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# alive PID: the process exists and is not a zombie.
alive() {
	[ -r "/proc/$1/stat" ] || return 1
	! awk '{ sub(/^.*\) /, ""); exit($1 == "Z" ? 0 : 1) }' "/proc/$1/stat" 2>/dev/null
}

# wait_until TENTHS CMD...: run CMD every 0.1 s until it succeeds; 1 when
# TENTHS tenths of a second passed without success.
wait_until() {
	_h_n=$1 _h_i=0
	shift
	while [ "$_h_i" -lt "$_h_n" ]; do
		"$@" && return 0
		sleep 0.1
		_h_i=$((_h_i + 1))
	done
	return 1
}

# not_stopped PID: no thread of PID is stopped or traced; else prints which.
not_stopped() {
	for _h_f in /proc/"$1"/task/*/status; do
		_h_s=$(awk '/^State:/ { print $2 }' "$_h_f" 2>/dev/null)
		case $_h_s in
		t | T) echo "tid $(basename "$(dirname "$_h_f")") is in state $_h_s"; return 1 ;;
		esac
	done
	return 0
}

# bg_add PID: kill PID when the suite exits (bg_kill, from its exit trap).
bg_add() { H_BG="$H_BG $1"; }
bg_kill() {
	for _h_p in $H_BG; do
		kill -KILL "$_h_p" 2>/dev/null
	done
	wait 2>/dev/null
}

# start_role ROLE SCENARIO DIR [LABEL]: `$ZT ROLE SCENARIO DIR [LABEL]` in the
# background, output in DIR/ROLE.out, stdin /dev/null; its pid in ROLE_PID
# (also bg_add'ed).  ROLE_WRAP: words put in front ("unshare -pf": then
# ROLE_PID is unshare's, DIR/ROLE.pid has the role's own pid); ROLE_CWD: the
# directory to start it in (default: this one).
ROLE_PID=
start_role() {
	# shellcheck disable=SC2086
	(cd "${ROLE_CWD:-.}" && exec ${ROLE_WRAP:-} "$ZT" "$@") >"$3/$1.out" 2>&1 </dev/null &
	ROLE_PID=$!
	bg_add "$ROLE_PID"
}

# H_POLL: seconds between two looks of wait_ready and finish_verify (0.02;
# more in a one-CPU guest, where each look takes time from the process
# watched).
H_POLL=${H_POLL:-0.02}
_h_polls() { awk -v t="$1" -v p="$H_POLL" 'BEGIN { printf "%d", t / p }'; }

# wait_file FILE PID [TIMEOUT_S]: poll for FILE (60 s); 1 when PID ended or
# the time passed without it.  wait_ready DIR ROLE PID [TIMEOUT_S]: the same
# for DIR/ROLE.ready.
wait_file() {
	_h_i=0 _h_n=$(_h_polls "${3:-60}")
	while [ "$_h_i" -lt "$_h_n" ]; do
		[ -e "$1" ] && return 0
		alive "$2" || { [ -e "$1" ]; return; }
		sleep "$H_POLL"
		_h_i=$((_h_i + 1))
	done
	return 1
}
wait_ready() { wait_file "$1/$2.ready" "$3" "${4:-60}"; }

# reap PID [JOB]: kill the process (and the job that started it), wait.
reap() {
	kill -KILL "$1" ${2:+"$2"} 2>/dev/null
	wait "${2:-$1}" 2>/dev/null
}

# finish_verify DIR PID [ROLE [LABEL TAG]]: let a verify role (ROLE, default
# verify) check (touch DIR/restored), wait for it (180 s, then killed),
# show and count its PASS/FAIL/SKIP lines (DIR/ROLE.out; with TAG, the
# program's prefix TAG/ replaced by LABEL/), its other lines as
# "# verify: ...".  A verify that exits non-zero without a FAIL line is one
# FAIL.
finish_verify() {
	_h_out=$1/${3:-verify}.out
	touch "$1/restored"
	_h_i=0 _h_n=$(_h_polls 180)
	while alive "$2" && [ "$_h_i" -lt "$_h_n" ]; do
		sleep "$H_POLL"
		_h_i=$((_h_i + 1))
	done
	alive "$2" && kill -KILL "$2"
	wait "$2" 2>/dev/null
	_h_rc=$?
	if [ -n "${5:-}" ]; then
		sed -E "s#^($H_STATUS) $5/#\\1 $H_PREFIX$4/#" "$_h_out" >"$_h_out.named" 2>/dev/null
		_h_out=$_h_out.named
	fi
	grep -E "^($H_STATUS) " "$_h_out" 2>/dev/null
	grep -vE "^($H_STATUS) " "$_h_out" 2>/dev/null | sed 's/^/# verify: /'
	tally "$_h_out"
	if [ "$_h_rc" -ne 0 ] && ! grep -q '^FAIL ' "$_h_out" 2>/dev/null; then
		fail "$(basename "$1")/verify-exit" "the ${3:-verify} role exited with status $_h_rc and no FAIL line"
	fi
}

# ptimer_run OUT TIMEOUT_S ARGS...: `$PT ARGS` with stdout in OUT, stderr in
# OUT.err, killed after TIMEOUT_S; its exit status in PT_RC (124: timed out,
# said in OUT.err).
ptimer_run() {
	_h_out=$1 _h_to=$2
	shift 2
	timeout -k 5 "$_h_to" "$PT" "$@" >"$_h_out" 2>"$_h_out.err" </dev/null
	PT_RC=$?
	[ "$PT_RC" -eq 124 ] && echo "(timed out after $_h_to s)" >>"$_h_out.err"
	return 0
}
