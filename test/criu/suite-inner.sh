#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The part of suite.sh that runs inside a Debian root (enter.sh --pidns: this
# shell is pid 1 of its own pid namespace and reaps what criu restore -d
# leaves behind).
#
#   suite-inner.sh SUITE SRC.tar CRIUDIR [check|bench]
#   suite-inner.sh SUITE prebuilt:DIR CRIUDIR [check|bench]
#
# Both modes first build the project from SRC.tar in /tmp/src with the
# root's compilers: make deps && make && make install DESTDIR=/tmp/inst
# PREFIX=/usr, plus the zdtm_timers test program.  With prebuilt:DIR
# nothing is built: DIR holds what was cross-built on the host
# (test/criu/arm64.sh), DIR/usr/bin/ptimer, DIR/usr/lib/criu/ptimer_plugin.so
# and the test programs in DIR/build/test.
# /tmp is enter.sh's tmpfs, private to this run: two runs at once in one
# cached root never use each other's build or plugin.
# PTIMER_CRIU_CASES (words as run_cases takes them: "drive:mix:criu-native
# case_rseq") runs those cases only, after prepare; default: all of them.
#
# check: test/cases/LIST's rounds in the criu flavours (test/lib/driver.sh,
# test/lib/flavour-criu.sh: real `criu dump` + `criu restore --libdir
# /tmp/inst/usr/lib/criu`, the program checking itself after the restore),
# then the suite's own cases.  The plan "1..N" (N cases), one
# PASS/FAIL/SKIP line a check (test/lib/harness.sh, sourced from CRIUDIR,
# where suite.sh puts it), "ok K CASE" after each case, "# ..." notes, and
# the totals last.
# bench: criu restore wall times of the sparse sets, criu alone and with the
# plugin; prints "bench: SUITE VERSION SET MODE MEDIAN TRACED RUNS..." lines
# (seconds; TRACED: the median time criu spent tracing the task's syscalls
# one by one in CRIU_FAULT=130 mode, from the -v4 log).
set -u

suite=$1 tarball=$2 cdir=$3 what=${4:-check}
P="criu-$suite"
SRC=/tmp/src
INST=/tmp/inst BLD=$SRC/build PREBUILT=
case $tarball in
prebuilt:*) PREBUILT=${tarball#prebuilt:} INST=${tarball#prebuilt:} BLD=${tarball#prebuilt:}/build ;;
esac
LIBDIR=$INST/usr/lib/criu
# criu-dev (suite.sh): its criu first on PATH, its criu-plugin.h for the
# plugin's build (the Makefile's CRIU_PLUGIN_INC: DIR/criu/criu-plugin.h)
if [ -n "${PTIMER_CRIU_DEV:-}" ]; then
	mkdir -p /tmp/criu-dev-bin /tmp/criu-dev-inc/criu
	ln -sf "/criu-dev/$PTIMER_CRIU_DEV" /tmp/criu-dev-bin/criu
	cp "/criu-dev/${PTIMER_CRIU_DEV%/criu/criu}/criu/include/criu-plugin.h" /tmp/criu-dev-inc/criu/
	export PATH=/tmp/criu-dev-bin:$PATH CRIU_PLUGIN_INC=/tmp/criu-dev-inc
fi
FAULT_LIBDIR=/tmp/fault-libdir	# the plugin built with PTIMER_FAULT_INJECT (fault_build)
ZT=$BLD/test/zdtm_timers
W=/tmp/criu-suite
CRIU_TIMEOUT=${PTIMER_CRIU_TIMEOUT:-180}
H_PREFIX=$P/
. "$cdir/harness.sh"
DRIVE_CASES=$cdir/cases DRIVE_BIN=$BLD/test DRIVE_W=$W
. "$cdir/driver.sh"
. "$cdir/flavour-criu.sh"
. "$cdir/slice-move.sh"

note() { echo "# $suite: $*"; }


# ---- build -----------------------------------------------------------------
mkdir -p "$SRC" "$W"
build() {
	cd "$SRC" && tar xf "$tarball" &&
		make deps DEPS=build && make -j2 && make install DESTDIR=/tmp/inst PREFIX=/usr &&
		make -j2 $(c_progs criu criu-native criu-takeover criu-strict criu-pidns criu-alone criu-post-dump-copy \
			criu-page-server) build/test/bench_tree build/test/test_plugin_hooks &&
		go_build && java_build && fault_build &&
		gcc -O2 -Wall -shared -fPIC -o build/test/zero_plugin.so test/criu/zero_plugin.c
}
# c_progs FLAVOUR...: make's targets for the C programs the cases of those
# flavours run (drive_progs, test/lib/driver.sh); Go's and Java's programs
# have builders of their own (go_build, java_build).
c_progs() {
	local p
	for p in $(drive_progs "$@"); do
		[ -f "test/e2e/$p.c" ] && echo "build/test/$p"
	done
}
# fault_build: the plugin again, failing on demand (core/fault.h,
# PTIMER_FAULT=POINT), in its own directory for the failed-restore case.
fault_build() {
	make -j2 B=build-fault SANITIZE=-DPTIMER_FAULT_INJECT build-fault/ptimer_plugin.so &&
		mkdir -p "$FAULT_LIBDIR" && cp build-fault/ptimer_plugin.so "$FAULT_LIBDIR/"
}
# java_build: test/e2e/JfrProfile.java with the root's JDK, and its wrapper.
java_build() {
	javac -d build/test test/e2e/JfrProfile.java &&
		install -m 0755 test/e2e/jfr_profile.sh build/test/jfr_profile
}
# go_build: test/e2e/go_profile.go with the root's Go (golang-go), offline.
go_build() {
	mkdir -p "$W/go" &&
		env GOCACHE="$W/go/cache" GOPATH="$W/go/path" GOTOOLCHAIN=local GOPROXY=off GOFLAGS= \
			go build -o build/test/go_profile test/e2e/go_profile.go
}

# prepare: build and install (PASS lines in check mode; FAIL and exit when
# either fails), criu's version, and how criu must stop tasks here.
prepare() {
	local t0=$EPOCHREALTIME
	if [ -n "$PREBUILT" ]; then
		note "prebuilt for $(uname -m) in $PREBUILT: nothing to build"
	elif (build) >"$W/build.log" 2>&1; then
		[ "$what" = check ] && pass "build: make deps && make && make install DESTDIR=/tmp/inst PREFIX=/usr ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s)"
	else
		fail build "$(tail -n 5 "$W/build.log" | tr '\n' ' ' | cut -c1-400)"
		exit 1
	fi
	if [ ! -f "$LIBDIR/ptimer_plugin.so" ] || [ ! -x "$INST/usr/bin/ptimer" ]; then
		fail install "no $LIBDIR/ptimer_plugin.so or $INST/usr/bin/ptimer after make install"
		exit 1
	fi
	[ "$what" = check ] && pass "install: $INST/usr/bin/ptimer and $LIBDIR/ptimer_plugin.so"
	# the hooks' answers, built against this criu's criu-plugin.h (a
	# prebuilt tree, cross-built for a guest, has no such test program)
	if [ "$what" = check ] && [ -z "$PREBUILT" ]; then
		(cd "$SRC" && build/test/test_plugin_hooks) >"$W/hooks.out" 2>&1
		sed -nE "s#^($H_STATUS) #\\1 plugin-#p" "$W/hooks.out" >"$W/hooks.lines"
		cat "$W/hooks.lines"
		tally "$W/hooks.lines"
		grep -q '^# test_plugin_hooks: ' "$W/hooks.out" || fail plugin-hooks "test_plugin_hooks ended early: $(oneline "$W/hooks.out")"
	fi
	CRIU_VERSION=$(criu --version | awk '/^Version/ { print $2 }')
	note "criu $CRIU_VERSION, kernel $(uname -r)"
	note "programs: $(go version 2>/dev/null || echo 'no go'); $(stress-ng --version 2>/dev/null | cut -d' ' -f1-3 || echo 'no stress-ng')"

	# criu stops tasks with debug-register breakpoints; where they never
	# fire (this machine), dump and restore hang: criu's own fallback,
	# FI_NO_BREAKPOINTS.  The probe is for x86 debug registers.
	if [ "$(uname -m)" != x86_64 ]; then
		note "breakpoints not probed on $(uname -m)${CRIU_FAULT:+; criu runs with CRIU_FAULT=$CRIU_FAULT}"
	elif gcc -O2 -o "$W/hwbp-probe" "$cdir/hwbp-probe.c" 2>"$W/hwbp.err"; then
		if [ -z "${CRIU_FAULT:-}" ] && ! "$W/hwbp-probe" >"$W/hwbp.out" 2>&1; then
			export CRIU_FAULT=130
		fi
		note "$(cat "$W/hwbp.out" 2>/dev/null)${CRIU_FAULT:+; criu runs with CRIU_FAULT=$CRIU_FAULT (no breakpoints)}"
	else
		note "hwbp-probe did not build ($(oneline "$W/hwbp.err")); assuming breakpoints are broken"
		export CRIU_FAULT=${CRIU_FAULT:-130}
	fi
}
# check: the first case (run_cases, below); bench: before anything else
[ "$what" = bench ] && prepare

# ---- bench -------------------------------------------------------------------

# tree_round CASE NPROC NTIMERS MODE: start bench_tree NPROC NTIMERS, criu
# dump it (MODE plugin: with --libdir; takeover: the same, with criu-mode
# takeover), criu restore -d the image the same way, check every restored
# process holds NTIMERS timers, kill the tree.  criu logs at -v3 in every
# mode, where the plugin says its own time per phase (phases, below).
# DTIME, RTIME (seconds), DPH, RPH (the plugin's phases, "-" alone) set;
# TREE_WHY on failure.
# group_gone PGID: no process of the group is left but zombies: a killed
# tree's 300 processes tear down their memory after the leader has gone,
# and a round that starts meanwhile is timed against that work
group_gone() {
	! cat /proc/[0-9]*/stat 2>/dev/null | sed 's/^.*) //' |
		awk -v g="$1" '$3 == g && $1 != "Z" { f = 1; exit } END { exit !f }'
}
tree_round() {
	local tc=$1 nproc=$2 ntim=$3 mode=$4 d=$W/tree-$1 img=$W/tree-$1.img lib=() pid t0 n nbad p procs cmode=auto
	[ "$mode" != alone ] && lib=(--libdir "$LIBDIR")
	[ "$mode" = takeover ] && cmode=takeover
	rm -rf "$d" "$img"
	mkdir -p "$d" "$img"
	( cd / && exec setsid "$BLD/test/bench_tree" "$nproc" "$ntim" "$d" >"$d/out" 2>&1 </dev/null ) &
	disown $!
	if ! wait_until 600 test -e "$d/ready"; then
		TREE_WHY="bench_tree did not get ready: $(oneline "$d/out")"
		return 1
	fi
	pid=$(cat "$d/pid")
	t0=$EPOCHREALTIME
	PTIMER_CRIU_MODE=$cmode timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$pid" -D "$img" -v3 -o dump.log "${lib[@]}" >"$img/dump.out" 2>&1
	RC=$?
	DTIME=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f", b - a }')
	if [ "$RC" -ne 0 ]; then
		TREE_WHY="criu dump exit $RC: $(logtail "$img/dump.log")"
		kill -KILL -- "-$pid" 2>/dev/null
		return 1
	fi
	wait_until 100 group_gone "$pid"
	restore "$img" "${lib[@]}" -v3 -o restore.log
	if [ "$RC" -ne 0 ]; then
		TREE_WHY="criu restore exit $RC: $(logtail "$img/restore.log")"
		return 1
	fi
	DPH=$(phases "$img/dump.log" dump) RPH=$(phases "$img/restore.log" restore)
	if [ "$mode" != alone ] && { [ "$DPH" = - ] || [ "$RPH" = - ]; }; then
		TREE_WHY="no 'ptimer: time in ptimer' line in dump.log or restore.log"
		kill -KILL -- "-$RPID" 2>/dev/null
		return 1
	fi
	# every process of the restored tree, with its timers
	procs="$RPID $(cat "/proc/$RPID/task/$RPID/children" 2>/dev/null)"
	n=0 nbad=0
	for p in $procs; do
		[ "$(grep -c '^ID:' "/proc/$p/timers" 2>/dev/null)" = "$ntim" ] || nbad=$((nbad + 1))
		n=$((n + 1))
	done
	kill -KILL -- "-$RPID" 2>/dev/null
	wait_until 100 group_gone "$RPID"
	if [ "$n" != "$nproc" ] || [ "$nbad" != 0 ]; then
		TREE_WHY="restored tree has $n processes, $nbad without $ntim timers"
		return 1
	fi
}
# phases LOG STAGE: the plugin's own time in criu's run, from its line
# "time in ptimer (STAGE): init X ms, N task calls Y ms (longest Z ms),
# exit W ms, in all T ms", as "X/Y/W/T" (ms); "-" when there is none.
phases() {
	sed -nE "s#.*ptimer: time in ptimer \($2\): init ([0-9.]+) ms, [0-9]+ task calls? ([0-9.]+) ms \(longest [0-9.]+ ms\), exit ([0-9.]+) ms, in all ([0-9.]+) ms.*#\1/\2/\3/\4#p" "$1" | tail -n 1 | grep . || echo -
}
# phase_median "X/Y/W/T ..." : each of the four the median of the runs;
# "-" when no run had the line
phase_median() {
	local k out=
	printf '%s\n' $1 | grep -qE '^[0-9]' || { echo -; return; }
	for k in 1 2 3 4; do
		out+=$(printf '%s\n' $1 | grep -v '^-$' | cut -d/ -f$k | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }')
		[ $k -lt 4 ] && out+=/
	done
	echo "$out"
}
if [ "$what" = bench ]; then
	RUNS=${PTIMER_BENCH_RUNS:-3}
	RUNS_E=${PTIMER_BENCH_RUNS_E:-11}
	((RUNS_E < RUNS)) && RUNS_E=$RUNS
	SETS=${PTIMER_BENCH_SETS:-stride sparse100k tree-1x7 tree-300x0 tree-300x1 tree-4x20000}
	median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
	for sc in stride sparse100k; do
		[[ " $SETS " == *" $sc "* ]] || continue
		for mode in alone plugin; do
			name=bench-$sc-$mode
			start "$name" setup "$sc" plain || continue
			lib=()
			[ "$mode" = plugin ] && lib=(--libdir "$LIBDIR")
			dump "$name" "$D.img" -- "${lib[@]}" || { kill_wait "$PID"; continue; }
			times=() traced=() rph= total=0
			# RUNS runs, more (up to RUNS_E) while they are quick
			# (their sum under 3 s): a restore of 40 ms moves by
			# several ms from one run to the next here
			for ((r = 0; r < RUNS_E; r++)); do
				# -v4 in every run and mode: the traced-syscall lines
				# carry the timestamps the TRACED column comes from
				restore "$D.img" "${lib[@]}" -v4 -o restore.log
				if [ "$RC" -ne 0 ]; then
					echo "bench: $suite $sc $mode FAILED: $(logtail "$D.img/restore.log")"
					continue 2
				fi
				times+=("$RTIME")
				rph+="$(phases "$D.img/restore.log" restore) "
				traced+=("$(awk '/is going to execute the syscall/ { t = substr($1, 2) + 0; if (a == "") a = t; b = t }
					END { printf "%.6f", (a == "") ? 0 : b - a }' "$D.img/restore.log")")
				n=$(grep -c '^ID:' "/proc/$RPID/timers")
				kill_wait "$RPID"
				want=2048
				[ "$sc" = sparse100k ] && want=100
				if [ "$n" != "$want" ]; then
					echo "bench: $suite $sc $mode FAILED: restored process has $n timers, not $want"
					continue 2
				fi
				# a run over 20 s (criu 4.1.1's create/delete loop up to
				# ID 9,900,000) is not repeated: the bench stays short
				awk -v t="$RTIME" 'BEGIN { exit !(t > 20) }' && break
				total=$(awk -v a="$total" -v t="$RTIME" 'BEGIN { print a + t }')
				((r + 1 >= RUNS)) && awk -v a="$total" 'BEGIN { exit !(a > 3) }' && break
			done
			echo "bench: $suite $CRIU_VERSION $sc $mode $(printf '%s\n' "${times[@]}" | median) $(printf '%s\n' "${traced[@]}" | median) ${times[*]}"
			[ "$mode" = plugin ] && echo "bench-phases: $suite $CRIU_VERSION $sc $mode - $(phase_median "$rph")"
		done
	done
	# Trees: criu dump + criu restore -d of a whole tree, alone and with
	# the plugin in turn (alone, plugin, plugin, alone, ...), so that both
	# see the same machine; medians of RUNS pairs.  On criu 4.2+ also
	# criu-mode takeover (auto leaves the timers to criu there).
	tmodes="alone plugin"
	case $CRIU_VERSION in 4.[2-9]* | [5-9].*) tmodes="alone plugin takeover" ;; esac
	for tc in 1x7 300x0 300x1 4x20000; do
		[[ " $SETS " == *" tree-$tc "* ]] || continue
		nproc=${tc%x*} ntim=${tc#*x}
		# a tree's ratio sits within a few per cent of 1 where the plugin
		# has little to do, and a 300-process dump moves by 10-30% from
		# one round to the next here: 9 pairs; one small process
		# restores in a few ms: 25
		runs=${PTIMER_BENCH_TREE_RUNS:-9}
		[ "$tc" = 1x7 ] && runs=${PTIMER_BENCH_RUNS_SMALL:-25}
		declare -A dt=() rt=() dp=() rp=()
		bad=
		for ((r = 0; r < runs && !bad; r++)); do
			order=$tmodes
			((r % 2)) && order=$(echo "$tmodes" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }')
			for mode in $order; do
				if ! tree_round "$tc" "$nproc" "$ntim" "$mode"; then
					echo "bench: $suite tree-$tc $mode FAILED: $TREE_WHY"
					bad=1
					break
				fi
				dt[$mode]+="$DTIME " rt[$mode]+="$RTIME " dp[$mode]+="$DPH " rp[$mode]+="$RPH "
			done
		done
		[ -n "$bad" ] && continue
		for mode in $tmodes; do
			echo "bench-tree: $suite $CRIU_VERSION $tc $mode $(printf '%s\n' ${dt[$mode]} | median) $(printf '%s\n' ${rt[$mode]} | median) dump: ${dt[$mode]}restore: ${rt[$mode]}"
			[ "$mode" = alone ] ||
				echo "bench-phases: $suite $CRIU_VERSION $tc $mode $(phase_median "${dp[$mode]}") $(phase_median "${rp[$mode]}")"
		done
	done
	exit 0
fi

# test/cases/LIST's rounds in the criu flavours (test/lib/driver.sh,
# test/lib/flavour-criu.sh), the suite's own cases among them (case files
# with a round of their own: the criu-mode settings and fallbacks, criu
# alone on the exited-thread timer, rseq, a plugin's checkpoint restored
# without it, user namespaces, the stripped core image, leaders that exit,
# image reuse, concurrent restores, stress-ng).
mapfile -t CASES < <(drive_words criu criu-takeover criu-strict criu-native criu-pidns criu-alone \
	criu-post-dump-copy criu-page-server)
[ -n "${PTIMER_CRIU_CASES:-}" ] && read -ra CASES <<<"$PTIMER_CRIU_CASES"
run_cases prepare "${CASES[@]}"
totals "$suite"
