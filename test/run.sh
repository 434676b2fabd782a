#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/run.sh BUILD - every unit test program (BUILD/test/test_*), then the
# end-to-end script (test/e2e.sh), the fuzz corpus replay (test/fuzz/run.sh),
# both suites again built with ASan and UBSan (BUILD-asan, SKIP when not
# built), then the suite against real criu 4.1.1 and 4.2.1 in cached Debian
# roots (test/criu/suite.sh; PTIMER_SKIP_CRIU=1 skips it), then container
# runtimes (test/containers/suite.sh; also skipped by PTIMER_SKIP_CRIU=1).  Output streams
# through; the PASS/FAIL/SKIP
# lines of all of them are counted (test/unit/check.h), a program that exits
# non-zero without a FAIL line (a crash) counts as one FAIL, and the last line
# is "N passed, N failed, N skipped".  Exit 1 when anything failed.
# Runs without a terminal: stdin is /dev/null for everything.

set -u

BUILD=${1:-build}
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
cd "$(dirname "$0")/.." || exit 1
npass=0
nfail=0
nskip=0
OUT=$(mktemp "${TMPDIR:-/tmp}/ptimer-run.XXXXXX")
trap 'rm -f "$OUT"' EXIT
trap 'exit 130' INT TERM HUP

# Line-buffered stdout for programs that leave stdio's default buffering.
LB=()
command -v stdbuf >/dev/null 2>&1 && LB=(stdbuf -oL -eL)

count() { grep -c "^$1 " "$OUT"; }

# run NAME COMMAND...: run in the foreground, stream, count.
run() {
	local name=$1 rc p f s
	shift
	"${LB[@]}" "$@" </dev/null 2>&1 | tee "$OUT"
	rc=${PIPESTATUS[0]}
	p=$(count PASS)
	f=$(count FAIL)
	s=$(count SKIP)
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited with status $rc and printed no FAIL line"
		f=1
	fi
	npass=$((npass + p))
	nfail=$((nfail + f))
	nskip=$((nskip + s))
}

shopt -s nullglob
for prog in "$BUILD"/test/test_*; do
	[ -x "$prog" ] || continue
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
# The unit programs and test/e2e.sh again against BUILD-asan ('make asan':
# host code and test programs with ASan and UBSan, the blob as always).
# Sanitizer reports go to files (log_path), so a report from a process whose
# failure a test expects still shows; each report is one FAIL.
ASAN_BUILD=${PTIMER_ASAN_BUILD:-$BUILD-asan}
if [ ! -x "$ASAN_BUILD/ptimer" ]; then
	echo "SKIP sanitizers: $ASAN_BUILD/ptimer not built ('make asan'; 'make check' builds it)"
	nskip=$((nskip + 1))
else
	SAN_LOG=$(mktemp -d "${TMPDIR:-/tmp}/ptimer-san.XXXXXX")
	chmod 1777 "$SAN_LOG"	# the e2e suite also runs ptimer unprivileged
	trap 'rm -f "$OUT"; rm -rf "$SAN_LOG"' EXIT
	SAN_ENV=(env "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$SAN_LOG/asan"
		"UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$SAN_LOG/ubsan")
	for prog in "$ASAN_BUILD"/test/test_*; do
		[ -x "$prog" ] || continue
		echo "# $prog (ASan, UBSan)"
		run "asan-$(basename "$prog")" "${SAN_ENV[@]}" "$prog"
	done
	echo "# test/e2e.sh $ASAN_BUILD (ASan, UBSan)"
	run asan-e2e "${SAN_ENV[@]}" bash test/e2e.sh "$ASAN_BUILD"
	nrep=0
	for rep in "$SAN_LOG"/*; do
		cat "$rep"
		# Warnings alone ("ASan is ignoring requested ...") are shown, not counted.
		grep -q -E 'ERROR: |runtime error|SUMMARY: ' "$rep" || continue
		echo "FAIL sanitizer-report: $(grep -m1 -E 'ERROR: |runtime error|SUMMARY: ' "$rep") ($(basename "$rep"))"
		nrep=$((nrep + 1))
	done
	if [ "$nrep" -eq 0 ]; then
		echo "PASS sanitizers: no ASan or UBSan report from the unit and e2e suites"
		npass=$((npass + 1))
	else
		nfail=$((nfail + nrep))
	fi
fi

# ---- the kernel matrix ---------------------------------------------------------
# test/qemu/matrix.sh: the end-to-end suite inside Debian's 6.1, 6.12 and
# newest (7.x) kernels, booted under qemu (a few minutes; kernels are fetched
# once and cached).  PTIMER_MATRIX=0 leaves it out (one SKIP line).
if [ "${PTIMER_MATRIX:-1}" = 0 ]; then
	echo "SKIP kernel-matrix: PTIMER_MATRIX=0"
	nskip=$((nskip + 1))
else
	echo "# test/qemu/matrix.sh $BUILD"
	run kernel-matrix bash test/qemu/matrix.sh "$BUILD"
fi
if [ -n "${PTIMER_SKIP_CRIU:-}" ]; then
	echo "SKIP criu: PTIMER_SKIP_CRIU is set"
	nskip=$((nskip + 1))
else
	echo "# test/criu/suite.sh check"
	run criu bash test/criu/suite.sh check
fi
# test/containers/suite.sh: runc, crun and podman with the plugin's .deb in
# roots of their own, the trixie -> sid moves, and the install on Debian 12,
# 13 and sid (test/containers/install.sh).  PTIMER_SKIP_CRIU=1 or
# PTIMER_SKIP_CONTAINERS=1 leave it out.
if [ -n "${PTIMER_SKIP_CRIU:-}${PTIMER_SKIP_CONTAINERS:-}" ]; then
	echo "SKIP containers: PTIMER_SKIP_CRIU or PTIMER_SKIP_CONTAINERS is set"
	nskip=$((nskip + 1))
else
	echo "# test/containers/suite.sh check"
	run containers env PTIMER_BUILD="$BUILD" bash test/containers/suite.sh check
fi

echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
