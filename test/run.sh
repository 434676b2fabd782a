#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/run.sh BUILD - every unit test program (BUILD/test/test_*), then the
# end-to-end script (test/e2e.sh), the fuzz corpus replay (test/fuzz/run.sh),
# the cross build for the other architecture (test/cross.sh), both suites
# again built with ASan and UBSan (BUILD-asan, SKIP when not built), the
# kernel matrices (test/qemu/matrix.sh), then the suite against real criu
# 4.1.1 and 4.2.1 in cached Debian roots (test/criu/suite.sh;
# PTIMER_SKIP_CRIU=1 skips it), the plugin with sid's arm64 criu in an arm64
# guest (test/criu/arm64.sh; skipped by PTIMER_SKIP_CRIU=1 or
# PTIMER_SKIP_CRIU_ARM64=1), criu 4.1.1 and 4.2.1 in an amd64 guest for
# lazy pages and pre-dump (test/criu/guest.sh amd64; skipped by
# PTIMER_SKIP_CRIU=1 or PTIMER_SKIP_CRIU_GUEST=1), the slice kernel's guests
# and the slice-move guests (the same switches), then container
# runtimes (test/containers/suite.sh; skipped by PTIMER_SKIP_CRIU=1 or
# PTIMER_SKIP_CONTAINERS=1), then CRIU's own zdtm suite with and without the
# plugin (test/criu/zdtm.sh; skipped by PTIMER_SKIP_CRIU=1 or
# PTIMER_SKIP_ZDTM=1).
#
# Output: TAP version 13, as kselftest prints it.  Every check of every
# program and suite is one test point, numbered in order: "ok N NAME",
# "not ok N NAME" with its reason on the "# " line after it, "ok N NAME #
# SKIP WHY" (what this machine lacks), "ok N NAME # XFAIL WHY" (an expected
# failure, with its reason; kselftest's ksft_test_result_xfail).  The
# suites' own lines pass through as "# " diagnostics: their plans and "ok K
# CASE" lines, and after each program or suite "# stage K NAME: ok" or
# "not ok".  Last the plan "1..N" (N checks) and the totals "# N passed, N
# failed, N skipped[, N xfail]".  A program that exits non-zero without a
# FAIL line (a crash) counts as one FAIL.  Exit 1 when anything failed.
# Runs without a terminal: stdin is /dev/null for everything.

set -u

BUILD=${1:-build}
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
cd "$(dirname "$0")/.." || exit 1
. test/lib/harness.sh
OUT=$(mktemp "${TMPDIR:-/tmp}/ptimer-run.XXXXXX")
# the whole suites and stages that were skipped, for the closing list
SKIPPED=$(mktemp "${TMPDIR:-/tmp}/ptimer-skipped.XXXXXX")
# every FAIL with its reason, repeated at the end: a CI log is often read
# from its tail only
FAILED=$(mktemp "${TMPDIR:-/tmp}/ptimer-failed.XXXXXX")
# the sanitizers' reports, the slice-move carries (below)
SAN_LOG= SM_DIR= BESIDE=
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$OUT" "$SKIPPED" "$FAILED" "$SAN_LOG" "$SM_DIR" "$BESIDE"' EXIT
trap 'exit 130' INT TERM HUP

# Line-buffered stdout for programs that leave stdio's default buffering.
LB=()
command -v stdbuf >/dev/null 2>&1 && LB=(stdbuf -oL -eL)

# tap_filter: the suites' lines (harness.sh's wire format) as TAP 13 test
# points numbered from TAPN + 1; their plans and case lines as diagnostics.
TAPN=0
tap_filter() {
	awk -v n="$TAPN" -v ff="$FAILED" '
	function split_why(l) { i = index(l, ": "); name = i ? substr(l, 1, i - 1) : l; why = i ? substr(l, i + 2) : "" }
	/^PASS / { print "ok " ++n " " substr($0, 6); fflush(); next }
	/^FAIL / { split_why(substr($0, 6)); print "not ok " ++n " " name; print "# " name ": " why; fflush()
		printf "#   %s: %s\n", name, substr(why, 1, 600) >> ff; fflush(ff); next }
	/^SKIP / { split_why(substr($0, 6)); print "ok " ++n " " name " # SKIP " why; fflush(); next }
	/^XFAIL / { split_why(substr($0, 7)); print "ok " ++n " " name " # XFAIL " why; fflush(); next }
	/^(not )?ok [0-9]+/ || /^[0-9]+\.\.[0-9]+$/ || /^TAP version/ { print "# " $0; fflush(); next }
	{ print; fflush() }'
}
# check_lines FILE: how many check lines FILE holds
check_lines() { grep -cE "^($H_STATUS) " "$1"; }

# run.sh's own checks, printed as TAP too
h_emit() {
	printf '%s\n' "$1" | tap_filter
	TAPN=$((TAPN + 1))
}
pass() { H_PASS=$((H_PASS + 1)); h_emit "PASS $1"; }
fail() { H_FAIL=$((H_FAIL + 1)); h_emit "FAIL $1: $2"; }
skip() { H_SKIP=$((H_SKIP + 1)); h_emit "SKIP $1: $2"; }
xfail() { H_XFAIL=$((H_XFAIL + 1)); h_emit "XFAIL $1: $2"; }

# stage_done NAME F0 [SECS]: "# stage K NAME: ok (SECS s)", or ": not ok"
# when FAILs were counted since H_FAIL was F0; SECS, where a run's time
# goes: the stage's own time (0 when not given).
K=0
stage_done() {
	K=$((K + 1))
	local v=ok
	[ "$H_FAIL" -eq "$2" ] || v="not ok"
	echo "# stage $K $1: $v (${3:-0} s)"
}

# skipped_stage NAME WHY: the stage's one SKIP, listed at the end too.
skipped_stage() {
	skip_suite "$1" "$2"
	echo "# skipped-suite $1: $2" >>"$SKIPPED"
	stage_done "$1" "$H_FAIL"
}

# stage_counted NAME OUT: what ran is what the stage says ran.  Every stage
# ends with its totals line ("# [LABEL: ]N passed, N failed, N skipped",
# harness.sh totals, test/lib/tst.h tst_done); the last one in OUT is
# the stage's own (nested suites print theirs before) and must equal the
# PASS/FAIL/SKIP lines OUT holds.  A stage that stopped before its end has
# none, or one that counts less than it printed.
stage_counted() {
	local last p f s x
	last=$(grep -E '^# ([^ ].*: )?[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped(, [0-9]+ xfail)?$' "$2" | tail -n 1)
	if [ -z "$last" ]; then
		fail "$1/totals" "ended without its totals line ('# N passed, N failed, N skipped'): it stopped before its end"
		return
	fi
	case $last in *" xfail") ;; *) last="$last, 0 xfail" ;; esac
	p=$(grep -c '^PASS ' "$2") f=$(grep -c '^FAIL ' "$2") s=$(grep -c '^SKIP ' "$2") x=$(grep -c '^XFAIL ' "$2")
	set -- "$1" $(echo "$last" | sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped, ([0-9]+) xfail$/\1 \2 \3 \4/')
	if [ "$2 $3 $4 $5" != "$p $f $s $x" ]; then
		fail "$1/totals" "its totals say $2 passed, $3 failed, $4 skipped, $5 xfail; it printed $p PASS, $f FAIL, $s SKIP, $x XFAIL lines"
	fi
}

# run NAME COMMAND...: run in the foreground, stream, count.
run() {
	local name=$1 rc f0=$H_FAIL t0=$SECONDS
	shift
	"${LB[@]}" "$@" </dev/null 2>&1 | tee "$OUT" | tap_filter
	rc=${PIPESTATUS[0]}
	stage_end "$name" "$rc" "$f0" $((SECONDS - t0))
}

# stage_end NAME RC F0 SECS: count the stage's output in OUT.  Its
# "# skipped-suite" lines (harness.sh skip_suite) go to the closing list,
# and so does the stage itself when it skipped everything and passed
# nothing.
stage_end() {
	tally "$OUT"
	TAPN=$((TAPN + $(check_lines "$OUT")))
	if [ "$2" -ne 0 ] && ! grep -q '^FAIL ' "$OUT"; then
		fail "$1" "exited with status $2 and printed no FAIL line"
	fi
	stage_counted "$1" "$OUT"
	grep '^# skipped-suite ' "$OUT" >>"$SKIPPED"
	if grep -q '^SKIP ' "$OUT" && ! grep -qE '^(PASS|FAIL) ' "$OUT"; then
		echo "# skipped-suite $1: every check skipped: $(grep -m1 '^SKIP ' "$OUT" | cut -c6-300)" >>"$SKIPPED"
	fi
	stage_done "$1" "$3" "$4"
}

# beside NAME AFTER COMMAND...: start a stage in the background, once the
# stage AFTER (started by beside; "" for none) has ended; its output is
# kept for joined.  The guest stages, each a qemu guest on one vCPU (one
# host core under TCG), run two at a time on this machine's two cores;
# nothing else runs meanwhile.
BESIDE=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-beside.XXXXXX")
declare -A BESIDE_PID
beside() {
	local name=$1 after=$2 f=$BESIDE/$1
	shift 2
	(
		if [ -n "$after" ]; then
			while [ ! -e "$BESIDE/$after.end" ]; do sleep 1; done
		fi
		t0=$SECONDS
		"${LB[@]}" "$@" </dev/null >"$f.out" 2>&1
		echo "$? $((SECONDS - t0))" >"$f.end.new"
		mv -f "$f.end.new" "$f.end"
	) &
	BESIDE_PID[$name]=$!
}

# joined NAME: wait for a stage beside started, then print and count its
# output as run does, in the stages' order.
joined() {
	local name=$1 f=$BESIDE/$1 rc=1 secs=0 f0=$H_FAIL
	wait "${BESIDE_PID[$name]}"
	[ -s "$f.end" ] && read -r rc secs <"$f.end"
	cp "$f.out" "$OUT" 2>/dev/null || : >"$OUT"
	tap_filter <"$OUT"
	stage_end "$name" "$rc" "$f0" "$secs"
}

shopt -s nullglob
ASAN_BUILD=${PTIMER_ASAN_BUILD:-$BUILD-asan}
units=()
for prog in "$BUILD"/test/test_*; do
	[ -x "$prog" ] && units+=("$prog")
done
asan_units=()
if [ -x "$ASAN_BUILD/ptimer" ]; then
	for prog in "$ASAN_BUILD"/test/test_*; do
		[ -x "$prog" ] && asan_units+=("$prog")
	done
fi
# the layer check, the units, e2e, fuzz replay, cross, the sanitizer stage (its units, its e2e and
# the report check, or one SKIP), the kernel matrix (x86_64, arm64), criu,
# criu-arm64, criu-guest-trixie, criu-guest-sid, criu-guest-slice(-dev),
# slice-move, containers, zdtm
if [ -x "$ASAN_BUILD/ptimer" ]; then
	PLANNED=$((1 + ${#units[@]} + 3 + ${#asan_units[@]} + 2 + 11))
else
	PLANNED=$((1 + ${#units[@]} + 3 + 1 + 11))
fi
echo "TAP version 13"
echo "# $PLANNED programs and suites"
# The kernel that grants rseq time-slice extensions (test/qemu/slice-kernel.sh)
# is built from source on a machine's first run, 11-13 min of both cores:
# started now, niced, it takes what the stages before the matrix leave
# idle; the matrix and the slice guest wait for it.
if [ "${PTIMER_MATRIX:-1}" != 0 ] || [ -z "${PTIMER_SKIP_CRIU:-}${PTIMER_SKIP_CRIU_GUEST:-}" ]; then
	[ "$(uname -m)" = x86_64 ] && bash test/qemu/slice-kernel.sh --bg
fi

# test/layers.sh: the includes keep docs/design.md's layers (no circle)
echo "# test/layers.sh"
run layers bash test/layers.sh

for prog in "${units[@]}"; do
	echo "# $prog"
	run "$(basename "$prog")" "$prog"
done
echo "# test/e2e.sh $BUILD"
run e2e bash test/e2e.sh "$BUILD"

# ---- fuzz corpus replay and the sanitizer build ---------------------------------
# test/fuzz/run.sh replay: every committed test/fuzz/corpus/<target>/ input
# through BUILD/fuzz/fuzz_<target> (libFuzzer, ASan, UBSan; 'make fuzz-build').
echo "# test/fuzz/run.sh replay $BUILD"
run fuzz-replay bash test/fuzz/run.sh replay "$BUILD"
# test/cross.sh: `make ARCH=arm64` (the other architecture) into build-arm64/,
# what file, readelf and qemu-user say of it.
echo "# test/cross.sh $BUILD"
run cross bash test/cross.sh "$BUILD"
# whether the cross stage built build-arm64 (its check cross/build), for the
# arm64 kernel matrix
CROSS_BUILT=0
grep -qE '^PASS cross/build([: ]|$)' "$OUT" && CROSS_BUILT=1
# The unit programs and test/e2e.sh again against BUILD-asan ('make asan':
# host code and test programs with ASan and UBSan, the blob as always).
# Sanitizer reports go to files (log_path), so a report from a process whose
# failure a test expects still shows; each report is one FAIL.
if [ ! -x "$ASAN_BUILD/ptimer" ]; then
	skipped_stage sanitizers "$ASAN_BUILD/ptimer not built ('make asan'; 'make check' builds it)"
else
	SAN_LOG=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-san.XXXXXX")
	chmod 1777 "$SAN_LOG"	# the e2e suite also runs ptimer unprivileged
	SAN_ENV=(env "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$SAN_LOG/asan"
		"UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$SAN_LOG/ubsan")
	for prog in "${asan_units[@]}"; do
		echo "# $prog (ASan, UBSan)"
		run "asan-$(basename "$prog")" "${SAN_ENV[@]}" "$prog"
	done
	echo "# test/e2e.sh $ASAN_BUILD (ASan, UBSan)"
	run asan-e2e "${SAN_ENV[@]}" bash test/e2e.sh "$ASAN_BUILD"
	nrep=0 f0=$H_FAIL san_t0=$SECONDS
	for rep in "$SAN_LOG"/*; do
		cat "$rep"
		# Warnings alone ("ASan is ignoring requested ...") are shown, not counted.
		grep -q -E 'ERROR: |runtime error|SUMMARY: ' "$rep" || continue
		fail sanitizer-report "$(grep -m1 -E 'ERROR: |runtime error|SUMMARY: ' "$rep") ($(basename "$rep"))"
		nrep=$((nrep + 1))
	done
	[ "$nrep" -eq 0 ] && pass "sanitizers: no ASan or UBSan report from the unit and e2e suites"
	stage_done sanitizers "$f0" $((SECONDS - san_t0))
fi

# ---- the kernel matrix ---------------------------------------------------------
# test/qemu/matrix.sh: the end-to-end suite inside Debian's 6.1, 6.12 and
# newest (7.x) kernels and the slice kernel, booted under qemu (a few
# minutes; kernels are fetched once and cached), two guests at once
# (PTIMER_MATRIX_JOBS).  PTIMER_MATRIX=0 leaves it out (one SKIP line).
if [ "${PTIMER_MATRIX:-1}" = 0 ]; then
	skipped_stage kernel-matrix "PTIMER_MATRIX=0"
else
	echo "# test/qemu/matrix.sh $BUILD"
	run kernel-matrix env PTIMER_MATRIX_JOBS="${PTIMER_MATRIX_JOBS:-2}" bash test/qemu/matrix.sh "$BUILD"
fi
# The same guest suite on Debian's arm64 kernels under qemu-system-aarch64,
# with what the cross stage built into build-arm64 (`make ARCH=arm64`), or
# the build PTIMER_ARM64_BUILD names; a SKIP when there is none (an older
# build-arm64 is not booted).  Two guests at once (PTIMER_MATRIX_JOBS; each
# takes a core, nothing else runs meanwhile): about 2 minutes for the three
# kernels.  PTIMER_MATRIX=0 or PTIMER_MATRIX_ARM64=0 leave it out.
ARM64_BUILD=${PTIMER_ARM64_BUILD:-}
[ -z "$ARM64_BUILD" ] && [ "$CROSS_BUILT" = 1 ] && [ "$(uname -m)" = x86_64 ] && ARM64_BUILD=$PWD/build-arm64
if [ "${PTIMER_MATRIX:-1}" = 0 ] || [ "${PTIMER_MATRIX_ARM64:-1}" = 0 ]; then
	skipped_stage kernel-matrix-arm64 "PTIMER_MATRIX=0 or PTIMER_MATRIX_ARM64=0"
elif [ -z "$ARM64_BUILD" ]; then
	skipped_stage kernel-matrix-arm64 "the cross stage did not build build-arm64 (its SKIP or FAIL above says why)"
elif [ ! -x "$ARM64_BUILD/ptimer" ] || [ ! -x "$ARM64_BUILD/test/zdtm_timers" ]; then
	skipped_stage kernel-matrix-arm64 "$ARM64_BUILD/ptimer or $ARM64_BUILD/test/zdtm_timers not built ('make ARCH=arm64' cross-builds them)"
else
	echo "# test/qemu/matrix.sh $ARM64_BUILD arm64"
	run kernel-matrix-arm64 env PTIMER_MATRIX_JOBS="${PTIMER_MATRIX_JOBS:-2}" \
		bash test/qemu/matrix.sh "$ARM64_BUILD" arm64
fi
if [ -n "${PTIMER_SKIP_CRIU:-}" ]; then
	skipped_stage criu "PTIMER_SKIP_CRIU is set"
else
	echo "# test/criu/suite.sh check"
	run criu bash test/criu/suite.sh check
fi
# ---- the criu guests, two at a time ------------------------------------------
# Each a qemu guest of one vCPU under TCG, one host core: two lanes of
# them run at once (beside), and their output comes in this order (joined).
# GUEST_WHY[NAME]: why the stage is skipped; GUEST_CMD[NAME]: its command
# line, for the log.
GUESTS=(criu-arm64 criu-guest-trixie criu-guest-sid criu-guest-slice criu-guest-slice-dev slice-move)
declare -A GUEST_WHY GUEST_CMD
LANE_A= LANE_B=	# the last stage started in each lane
# guest NAME LANE COMMAND...: NAME beside, after the lane's last stage
guest() {
	local name=$1 lane=$2
	shift 2
	GUEST_CMD[$name]="$*"
	beside "$name" "${!lane}" "$@"
	printf -v "$lane" %s "$name"
}
SKIP_GUEST=
[ -n "${PTIMER_SKIP_CRIU:-}${PTIMER_SKIP_CRIU_GUEST:-}" ] && SKIP_GUEST="PTIMER_SKIP_CRIU or PTIMER_SKIP_CRIU_GUEST is set"
NO_SLICE=
[ "$(uname -m)" != x86_64 ] && NO_SLICE="the slice kernel is built for x86_64; this host is $(uname -m)"

# test/criu/arm64.sh: sid's arm64 criu with the plugin, on what the cross
# stage built (ARM64_BUILD, as for the arm64 matrix), inside sid's arm64
# kernel under qemu-system-aarch64 (its own SKIP when something else is
# missing).  PTIMER_SKIP_CRIU=1 or PTIMER_SKIP_CRIU_ARM64=1 leave it out.
if [ -n "${PTIMER_SKIP_CRIU:-}${PTIMER_SKIP_CRIU_ARM64:-}" ]; then
	GUEST_WHY[criu-arm64]="PTIMER_SKIP_CRIU or PTIMER_SKIP_CRIU_ARM64 is set"
elif [ -z "$ARM64_BUILD" ]; then
	GUEST_WHY[criu-arm64]="the cross stage did not build build-arm64 (its SKIP or FAIL above says why)"
else
	guest criu-arm64 LANE_B bash test/criu/arm64.sh "$ARM64_BUILD"
fi
# test/criu/guest.sh amd64: criu 4.1.1 and 4.2.1 with the plugin and alone,
# in sid's amd64 kernel under qemu-system-x86_64, for what this host's
# kernel cannot do: lazy pages and pre-dump (soft-dirty, userfaultfd).
# test/criu/guest.sh amd64-slice: criu 4.2.1 and criu-dev (the criu stage
# built it) with the plugin and alone on the kernel built with rseq
# time-slice extensions (test/qemu/slice-kernel.sh): threads granted
# extensions before the dump and after the restore.
# test/criu/slice-move.sh: slice checkpoints moved between kernels for real
# (stock 7.2 -> slice kernel -> stock 7.2 and 6.12), `ptimer restore` and
# criu 4.2.1 with the plugin, --rseq-slice auto, require and off.  The
# steps that need sid's root on stock 7.2 or on the slice kernel run in
# those boots (guest.sh PTIMER_GUEST_MORE_CASES), not in boots of their
# own: criu-guest-sid dumps on stock 7.2, criu-guest-slice restores that
# and dumps, and the slice-move stage boots stock 7.2 and 6.12 to restore
# (test/criu/slice-move.sh PTIMER_SLICE_MOVE_FROM): one lane.
if [ -n "$SKIP_GUEST" ]; then
	for n in "${GUESTS[@]}"; do
		[ "$n" = criu-arm64 ] || GUEST_WHY[$n]=$SKIP_GUEST
	done
elif [ -n "$NO_SLICE" ]; then
	guest criu-guest-trixie LANE_B bash test/criu/guest.sh amd64 trixie "$BUILD"
	guest criu-guest-sid LANE_A bash test/criu/guest.sh amd64 sid "$BUILD"
	GUEST_WHY[criu-guest-slice]=$NO_SLICE GUEST_WHY[criu-guest-slice-dev]=$NO_SLICE GUEST_WHY[slice-move]=$NO_SLICE
else
	SM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-slice-move.XXXXXX")
	guest criu-guest-sid LANE_A env PTIMER_GUEST_MORE_CASES=slice_move:dump:stock \
		PTIMER_GUEST_CARRY_OUT="$SM_DIR/from-stock" bash test/criu/guest.sh amd64 sid "$BUILD"
	guest criu-guest-trixie LANE_B bash test/criu/guest.sh amd64 trixie "$BUILD"
	guest criu-guest-slice LANE_A env "PTIMER_GUEST_MORE_CASES=slice_move:restore:stock slice_move:dump:slice" \
		PTIMER_GUEST_CARRY_IN="$SM_DIR/from-stock" PTIMER_GUEST_CARRY_OUT="$SM_DIR/from-slice" \
		bash test/criu/guest.sh amd64-slice sid "$BUILD"
	guest criu-guest-slice-dev LANE_B bash test/criu/guest.sh amd64-slice criu-dev "$BUILD"
	guest slice-move LANE_A env PTIMER_SLICE_MOVE_FROM="$SM_DIR" bash test/criu/slice-move.sh "$BUILD"
fi
for n in "${GUESTS[@]}"; do
	if [ -n "${GUEST_WHY[$n]:-}" ]; then
		skipped_stage "$n" "${GUEST_WHY[$n]}"
	else
		echo "# ${GUEST_CMD[$n]}"
		joined "$n"
	fi
done
# test/containers/suite.sh: runc, crun and podman with the plugin's .deb in
# roots of their own, the trixie -> sid moves, and the install on Debian 12,
# 13 and sid (test/containers/install.sh).
if [ -n "${PTIMER_SKIP_CRIU:-}${PTIMER_SKIP_CONTAINERS:-}" ]; then
	skipped_stage containers "PTIMER_SKIP_CRIU or PTIMER_SKIP_CONTAINERS is set"
else
	echo "# test/containers/suite.sh check"
	run containers env PTIMER_BUILD="$BUILD" bash test/containers/suite.sh check
fi
if [ -n "${PTIMER_SKIP_CRIU:-}${PTIMER_SKIP_ZDTM:-}" ]; then
	skipped_stage zdtm "PTIMER_SKIP_CRIU or PTIMER_SKIP_ZDTM is set"
else
	echo "# test/criu/zdtm.sh"
	run zdtm bash test/criu/zdtm.sh
fi

# kselftest's closing check: the stages that ran are the ones planned
[ "$K" -eq "$PLANNED" ] || fail plan "$PLANNED stages planned, $K ran (the plan count above is out of date)"

# Every whole suite or stage that did not run, and why: a skipped suite
# hides in a long log and a green total.
if [ -s "$SKIPPED" ]; then
	echo "# suites and stages skipped in this run:"
	sed 's/^# skipped-suite /#   /' "$SKIPPED"
else
	echo "# suites and stages skipped in this run: none"
fi
if [ -s "$FAILED" ]; then
	echo "# failed in this run:"
	cat "$FAILED"
fi
echo "1..$TAPN"
totals
