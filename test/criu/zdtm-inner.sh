#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The part of zdtm.sh that runs inside a SUITE-zdtm root (enter.sh --pidns).
#
#   zdtm-inner.sh SUITE CRIU-TREE SRC.tar SCRIPTS
#
# CRIU-TREE: criu's released source (Debian's orig tarball, extracted by
# zdtm.sh), bind-mounted read-write; its zdtm tests are built here once and
# kept (stamp test/.ptimer-zdtm-built).  The run itself works on a copy in
# /tmp, so the cached tree stays clean.
#
# Then ptimer_plugin.so from SRC.tar, and every test of ZDTM_TESTS in each
# flavor of ZDTM_FLAVORS, once without the plugin and once with it in
# test/plugins (zdtm starts criu with CRIU_LIBS_DIR=test/plugins).  Timer
# tests run with --iters 3 (three dump/restore cycles of the same process).
# One line a test, flavor and mode: "R MODE FLAVOR TEST pass|fail|skip WHY",
# read by zdtm.sh; "# ..." notes.
#
# Runtime adaptations of zdtm to this machine (nothing else is changed):
# - tests run as root: zdtm gives a non-suid test uid 18943, and criu then
#   prlimit()s that task, which needs CAP_SYS_RESOURCE, missing from this
#   machine's bounding set.  zdtm.py's "if not test_flag(desc, 'suid')" gets
#   "and not os.environ.get('ZDTM_AS_ROOT')" (one line);
# - test/pycriu, a link to ../lib/pycriu whose protobuf modules are generated
#   by criu's build, points at the root's installed pycriu (python3-pycriu,
#   the same criu release);
# - CRIU_FAULT=130 (criu's own FI_NO_BREAKPOINTS) when debug-register
#   breakpoints do not fire here (hwbp-probe.c).
set -u

suite=$1 tree=$2 tarball=$3 cdir=$4
TIMER_TESTS=${ZDTM_TIMER_TESTS-posix_timers pthread_timers pthread_timers_h timers timers01 timerfd}
OTHER_TESTS=${ZDTM_OTHER_TESTS-rseq00 sigpending signalfd00 stopped stopped01 stopped02 stopped03 stopped04 stopped12 zombie00 zombie01 zombie_leader pthread00 pthread01}
FLAVORS=${ZDTM_FLAVORS-h ns uns}
MODES="without with"
W=/tmp/zdtm-run
ZT=$W/criu/test
note() { echo "# zdtm-$suite: $*"; }
die() { echo "FAIL zdtm-$suite/${2:-setup}: $1"; exit 1; }

# ---- zdtm's tests, built once into the cached tree ---------------------------
want="$TIMER_TESTS $OTHER_TESTS"
stamp=$tree/test/.ptimer-zdtm-built
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086
	(
		cd "$tree/test" &&
			make -j2 -C zdtm/lib &&
			make -j2 -C zdtm/static $want &&
			make umount2 zdtm_ct
	) >"$tree/test/.ptimer-zdtm-build.log" 2>&1 ||
		die "building zdtm's tests: $(tail -n 3 "$tree/test/.ptimer-zdtm-build.log" | tr '\n' ' ' | cut -c1-300)" build
	echo "$want" >"$stamp"
	note "zdtm's tests built in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s (cached in the tree)"
fi

# ---- the plugin ----------------------------------------------------------------
mkdir -p "$W/src"
(cd "$W/src" && tar xf "$tarball" && make -j2 build/ptimer_plugin.so) >"$W/plugin.log" 2>&1 ||
	die "building ptimer_plugin.so: $(tail -n 3 "$W/plugin.log" | tr '\n' ' ' | cut -c1-300)" plugin

# ---- a private copy of the tree, adapted (see the head of this file) -----------
cp -a "$tree" "$W/criu" || die "cannot copy $tree"
cd "$ZT" || die "no test directory in $tree"
if [ -L pycriu ] && [ -d /usr/lib/python3/dist-packages/pycriu ]; then
	rm pycriu && ln -s /usr/lib/python3/dist-packages/pycriu pycriu
fi
sed -i "s/^\(        if not test_flag(self.__desc, 'suid')\):$/\1 and not os.environ.get('ZDTM_AS_ROOT'):/" zdtm.py
grep -q "and not os.environ.get('ZDTM_AS_ROOT'):" zdtm.py ||
	die "zdtm.py has no \"if not test_flag(self.__desc, 'suid'):\" line to adapt (tests must run as root here)"
export ZDTM_AS_ROOT=1
if [ -z "${CRIU_FAULT:-}" ]; then
	if ! gcc -O2 -o "$W/hwbp-probe" "$cdir/hwbp-probe.c" 2>/dev/null || ! "$W/hwbp-probe" >/dev/null 2>&1; then
		export CRIU_FAULT=130
	fi
fi
note "criu $(criu --version | awk '/^Version/ { print $2 }'), kernel $(uname -r)${CRIU_FAULT:+, CRIU_FAULT=$CRIU_FAULT (no breakpoints)}"

# run MODE FLAVOR ITERS TEST...: one zdtm.py invocation; R lines from its output.
run() {
	local mode=$1 flavor=$2 iters=$3 log args=() t
	shift 3
	[ $# -gt 0 ] || return 0
	log=$W/$mode.$flavor.$iters.log
	for t in "$@"; do args+=(-t "zdtm/static/$t"); done
	[ "$iters" -gt 1 ] && args+=(--iters "$iters")
	rm -f plugins/ptimer_plugin.so
	[ "$mode" = with ] && cp "$W/src/build/ptimer_plugin.so" plugins/
	rm -rf dump
	timeout -s KILL "${ZDTM_TIMEOUT:-900}" python3 zdtm.py run "${args[@]}" -f "$flavor" --keep-going \
		--keep-img always --criu-bin /usr/sbin/criu --crit-bin /usr/bin/crit >"$log" 2>&1 </dev/null
	for t in "$@"; do
		line=$(awk -v t="zdtm/static/$t" -v mode="$mode" -v fl="$flavor" -v short="$t" '
			index($0, "Skipping " t " (") == 1 { r = "skip"; why = substr($0, length("Skipping " t " (") + 1); sub(/\)$/, "", why) }
			index($0, "Run " t " in ") { ran = 1 }
			index($0, "Test " t " PASS") { r = "pass" }
			index($0, "Test " t " FAIL at ") { r = "fail"; why = $0; sub(/.*FAIL at /, "at ", why); sub(/ *#*$/, "", why) }
			ran && r == "fail" && why !~ /Error/ && /Error \(/ && !/rlimit/ { why = why "; " $0 }
			END {
				if (r == "") { r = ran ? "fail" : "skip"; why = ran ? "no PASS or FAIL line from zdtm.py" : "zdtm.py did not run it" }
				gsub(/b\x27|\x27$/, "", why)
				print "R", mode, fl, short, r, why
			}' "$log")
		# a failed dump or restore: criu's own error lines say why
		case $line in
		"R $mode $flavor $t fail "*)
			e=$(cat dump/zdtm/static/"$t"/*/*/dump.log dump/zdtm/static/"$t"/*/*/restore.log 2>/dev/null |
				grep -E 'Error \(|Warn  \(.*ptimer' | grep -v rlimit | tail -n 3 | tr '\n' ' ' | cut -c1-400)
			[ -n "$e" ] && line="$line; criu: $e" ;;
		esac
		echo "$line"
	done
	# With the plugin: dumps whose log shows it loaded, POSIX timers it saved.
	if [ "$mode" = with ]; then
		for t in "$@"; do
			echo "P $flavor $t $(grep -l 'ptimer: ' dump/zdtm/static/"$t"/*/*/dump.log 2>/dev/null | wc -l) $(cat dump/zdtm/static/"$t"/*/*/dump.log 2>/dev/null | grep -o 'ptimer: task .*: [0-9]* POSIX timers saved' | awk '{ s += $(NF-3) } END { print s + 0 }')"
		done
	fi
	cp "$log" "/zdtm-logs/" 2>/dev/null
	rm -rf dump
}

# Flavor by flavor, both modes each, so that a run cut short by the time
# budget (ZDTM_DEADLINE, epoch seconds) leaves whole flavors behind it.
for flavor in $FLAVORS; do
	for mode in $MODES; do
		if [ -n "${ZDTM_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$ZDTM_DEADLINE" ]; then
			for t in $TIMER_TESTS $OTHER_TESTS; do
				echo "R $mode $flavor $t budget not run: over the time budget (PTIMER_ZDTM_BUDGET)"
			done
			continue
		fi
		t0=$EPOCHREALTIME
		# shellcheck disable=SC2086
		run "$mode" "$flavor" 3 $TIMER_TESTS
		# shellcheck disable=SC2086
		run "$mode" "$flavor" 1 $OTHER_TESTS
		note "$mode plugin, flavor $flavor: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
	done
done
