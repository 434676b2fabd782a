# SPDX-License-Identifier: MIT
#
# test/lib/harness.sh - the one reporting and process harness of every ptimer
# shell suite (e2e, qemu guest, criu, containers, zdtm).  POSIX sh: it is
# sourced by bash on the host and by busybox sh inside the qemu guests.
#
#   . "$TOP/test/lib/harness.sh"
#   H_PREFIX=criu-trixie/     # optional: put in front of every check name
#   plan 12                   # "1..12" as kselftest prints it (optional)
#   pass NAME | fail NAME WHY | skip NAME WHY | info TEXT...
#   check NAME WHY CMD...     # PASS when CMD succeeds, else FAIL NAME: WHY
#   totals                    # "# N passed, N failed, N skipped"; status 1 on a FAIL
#
# Output lines, counted by test/run.sh: "PASS NAME", "FAIL NAME: WHY",
# "SKIP NAME: WHY"; "# ..." is information.

H_PREFIX=${H_PREFIX:-}
H_PASS=0
H_FAIL=0
H_SKIP=0

plan() { echo "1..$1"; }
pass() { echo "PASS $H_PREFIX$1"; H_PASS=$((H_PASS + 1)); }
fail() { echo "FAIL $H_PREFIX$1: $2"; H_FAIL=$((H_FAIL + 1)); }
skip() { echo "SKIP $H_PREFIX$1: $2"; H_SKIP=$((H_SKIP + 1)); }
info() { echo "# $*"; }

# check NAME WHY CMD...: PASS NAME when CMD exits 0, else FAIL NAME: WHY.
check() {
	_h_name=$1 _h_why=$2
	shift 2
	if "$@"; then pass "$_h_name"; else fail "$_h_name" "$_h_why"; fi
}

# totals: the counts of this suite; exit status 1 when a check failed.
totals() {
	echo "# $H_PASS passed, $H_FAIL failed, $H_SKIP skipped"
	[ "$H_FAIL" -eq 0 ]
}

# oneline FILE [WIDTH]: a file's text on one line, cut at WIDTH (400) chars.
oneline() { tr '\n' ' ' <"$1" 2>/dev/null | sed 's/ *$//' | cut -c1-"${2:-400}"; }

# now: seconds since the epoch with nanoseconds; elapsed T0 T1: T1 - T0 in s.
now() { date +%s.%N; }
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
