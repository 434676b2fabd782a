#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/run.sh BUILD - every unit test program (BUILD/test/test_*), then the
# end-to-end script (test/e2e.sh), the fuzz corpus replay (test/fuzz/run.sh),
# then the suite against real criu 4.1.1 and 4.2.1 in cached Debian roots
# (test/criu/suite.sh; PTIMER_SKIP_CRIU=1 skips it).  Output streams
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

# ---- fuzz corpus replay --------------------------------------------------------
# test/fuzz/run.sh replay: every committed test/fuzz/corpus/<target>/ input
# through BUILD/fuzz/fuzz_<target> (libFuzzer, ASan, UBSan; 'make fuzz-build').
echo "# test/fuzz/run.sh replay $BUILD"
run fuzz-replay bash test/fuzz/run.sh replay "$BUILD"

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

echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ]
