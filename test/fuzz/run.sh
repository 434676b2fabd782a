#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test/fuzz/run.sh replay BUILD - run every committed input of
#   test/fuzz/corpus/<target>/ through BUILD/fuzz/fuzz_<target> once (a
#   libFuzzer binary given files runs each and exits non-zero on a crash or
#   sanitizer report); one PASS or FAIL line per target (test/run.sh counts
#   them).  A target that is not built is a SKIP.
# test/fuzz/run.sh fuzz BUILD [SECONDS] - fuzz each target SECONDS (30), its
#   corpus read from test/fuzz/corpus/<target>/ and new inputs written to a
#   scratch directory (BUILD/fuzz/new/<target>, never the repository); crash
#   inputs go to BUILD/fuzz/crash/<target>/.  Prints the exec count of each
#   run; exit 1 on any crash, leak, timeout or sanitizer report.
# Both print the plan "1..N" (N targets) first, "ok K TARGET" after each and
# the totals last (test/lib/harness.sh).
set -u

mode=${1:-replay}
BUILD=${2:-build}
secs=${3:-30}
cd "$(dirname "$0")/../.." || exit 1
. test/lib/harness.sh
case $mode in
replay | fuzz) ;;
*)
	echo "usage: $0 replay|fuzz BUILD [SECONDS]" >&2
	exit 2
	;;
esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
set -- test/fuzz/corpus/*/
plan $#
k=0
for dir; do
	t=$(basename "$dir")
	bin=$BUILD/fuzz/fuzz_$t
	k=$((k + 1))
	f0=$H_FAIL
	if [ ! -x "$bin" ]; then
		skip "fuzz-$t" "$bin not built (make fuzz-build; needs clang and libclang-rt-dev)"
		echo "ok $k fuzz-$t"
		continue
	fi
	case $mode in
	replay)
		files=("$dir"*)
		log=$(mktemp "${TMPDIR:-/tmp}/ptimer-fuzz.XXXXXX")
		if "$bin" -rss_limit_mb=2048 -timeout=10 "${files[@]}" >"$log" 2>&1; then
			pass "fuzz-$t: ${#files[@]} corpus inputs replayed"
		else
			tail -n 40 "$log"
			fail "fuzz-$t" "replaying $dir crashed (report above)"
		fi
		rm -f "$log"
		;;
	fuzz)
		new=$BUILD/fuzz/new/$t
		crash=$BUILD/fuzz/crash/$t
		mkdir -p "$new" "$crash"
		log=$BUILD/fuzz/$t.log
		echo "# fuzz_$t: $secs s, new inputs to $new"
		if "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
			-print_final_stats=1 -artifact_prefix="$crash/" "$new" "$dir" >"$log" 2>&1; then
			execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
			pass "fuzz-$t: ${execs:-?} execs in $secs s, corpus $(ls "$new" | wc -l) new inputs"
		else
			tail -n 60 "$log"
			fail "fuzz-$t" "crash input in $crash/ (log $log)"
		fi
		;;
	esac
	if [ "$H_FAIL" -eq "$f0" ]; then echo "ok $k fuzz-$t"; else echo "not ok $k fuzz-$t"; fi
done
totals fuzz
