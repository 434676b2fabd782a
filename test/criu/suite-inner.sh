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
ZT=$BLD/test/zdtm_timers
W=/tmp/criu-suite
CRIU_TIMEOUT=${PTIMER_CRIU_TIMEOUT:-180}
H_PREFIX=$P/
. "$cdir/harness.sh"
DRIVE_CASES=$cdir/cases DRIVE_BIN=$BLD/test DRIVE_W=$W
. "$cdir/driver.sh"
. "$cdir/flavour-criu.sh"

note() { echo "# $suite: $*"; }


# ---- build -----------------------------------------------------------------
mkdir -p "$SRC" "$W"
build() {
	cd "$SRC" && tar xf "$tarball" &&
		make deps DEPS=build && make -j2 && make install DESTDIR=/tmp/inst PREFIX=/usr &&
		make -j2 build/test/zdtm_timers build/test/pending_timer build/test/rseq_cs_loop build/test/bench_tree build/test/thread_cpu build/test/sigev_thread &&
		go_build
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
# process holds NTIMERS timers, kill the tree.
# DTIME, RTIME (seconds) set; TREE_WHY on failure.
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
	PTIMER_CRIU_MODE=$cmode timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$pid" -D "$img" -o dump.log "${lib[@]}" >"$img/dump.out" 2>&1
	RC=$?
	DTIME=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
	if [ "$RC" -ne 0 ]; then
		TREE_WHY="criu dump exit $RC: $(logtail "$img/dump.log")"
		kill -KILL -- "-$pid" 2>/dev/null
		return 1
	fi
	wait_until 100 gone "$pid"
	restore "$img" "${lib[@]}" -o restore.log
	if [ "$RC" -ne 0 ]; then
		TREE_WHY="criu restore exit $RC: $(logtail "$img/restore.log")"
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
	wait_until 100 gone "$RPID"
	if [ "$n" != "$nproc" ] || [ "$nbad" != 0 ]; then
		TREE_WHY="restored tree has $n processes, $nbad without $ntim timers"
		return 1
	fi
}
if [ "$what" = bench ]; then
	RUNS=${PTIMER_BENCH_RUNS:-3}
	SETS=${PTIMER_BENCH_SETS:-stride sparse100k tree-300x0 tree-300x1 tree-4x20000}
	median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
	for sc in stride sparse100k; do
		[[ " $SETS " == *" $sc "* ]] || continue
		for mode in alone plugin; do
			name=bench-$sc-$mode
			start "$name" setup "$sc" plain || continue
			lib=()
			[ "$mode" = plugin ] && lib=(--libdir "$LIBDIR")
			dump "$name" "$D.img" -- "${lib[@]}" || { kill_wait "$PID"; continue; }
			times=() traced=()
			for ((r = 0; r < RUNS; r++)); do
				# -v4 in every run and mode: the traced-syscall lines
				# carry the timestamps the TRACED column comes from
				restore "$D.img" "${lib[@]}" -v4 -o restore.log
				if [ "$RC" -ne 0 ]; then
					echo "bench: $suite $sc $mode FAILED: $(logtail "$D.img/restore.log")"
					continue 2
				fi
				times+=("$RTIME")
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
			done
			echo "bench: $suite $CRIU_VERSION $sc $mode $(printf '%s\n' "${times[@]}" | median) $(printf '%s\n' "${traced[@]}" | median) ${times[*]}"
		done
	done
	# Trees: criu dump + criu restore -d of a whole tree, alone and with
	# the plugin in turn (alone, plugin, plugin, alone, ...), so that both
	# see the same machine; medians of RUNS pairs.  On criu 4.2+ also
	# criu-mode takeover (auto leaves the timers to criu there).
	tmodes="alone plugin"
	case $CRIU_VERSION in 4.[2-9]* | [5-9].*) tmodes="alone plugin takeover" ;; esac
	for tc in 300x0 300x1 4x20000; do
		[[ " $SETS " == *" tree-$tc "* ]] || continue
		nproc=${tc%x*} ntim=${tc#*x}
		declare -A dt=() rt=()
		bad=
		for ((r = 0; r < RUNS && !bad; r++)); do
			order=$tmodes
			((r % 2)) && order=$(echo "$tmodes" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "") }')
			for mode in $order; do
				if ! tree_round "$tc" "$nproc" "$ntim" "$mode"; then
					echo "bench: $suite tree-$tc $mode FAILED: $TREE_WHY"
					bad=1
					break
				fi
				dt[$mode]+="$DTIME " rt[$mode]+="$RTIME "
			done
		done
		[ -n "$bad" ] && continue
		for mode in $tmodes; do
			echo "bench-tree: $suite $CRIU_VERSION $tc $mode $(printf '%s\n' ${dt[$mode]} | median) $(printf '%s\n' ${rt[$mode]} | median) dump: ${dt[$mode]}restore: ${rt[$mode]}"
		done
	done
	exit 0
fi

# ---- check -------------------------------------------------------------------

# The plugin's settings file (plugin/conf.h), named by PTIMER_CONFIG so that
# the root's /etc/criu stays untouched: strict from the file refuses the
# exited-thread timer; the environment overrides the file; a bad value is
# one tagged error line and a failed dump that leaves the process running.
case_conf() {
	local rc n line
	printf '# test\nstrict = yes\n' >"$W/strict.conf"
	printf 'criu-mode = takeover\nstrict = maybe\n' >"$W/bad.conf"
	start conf-strict criu exited plain || return
	rm -rf "$D.img"; mkdir -p "$D.img"
	PTIMER_CONFIG=$W/strict.conf timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$D.img" \
		-v4 -o dump.log --libdir "$LIBDIR" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qE 'Error \([a-z_/]+\.c:[0-9]+\): ptimer: .*(gone|exited)' "$D.img/dump.log" && ! gone "$PID"; then
		pass "conf/strict-from-file: dump refused: $(grep -oE 'Error \([^)]*\): ptimer: .*' "$D.img/dump.log" | head -n1 | cut -c1-110)"
	else
		fail "conf/strict-from-file" "criu dump exit $rc, process $(gone "$PID" && echo gone || echo running): $(logtail "$D.img/dump.log")"
	fi
	rm -rf "$D.img"; mkdir -p "$D.img"
	PTIMER_CONFIG=$W/bad.conf timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$D.img" \
		-v4 -o dump.log --libdir "$LIBDIR" >/dev/null 2>&1
	rc=$?
	n=$(grep -c 'ptimer: ' "$D.img/dump.log")
	line=$(grep -F "strict = 'maybe': expected yes or no" "$D.img/dump.log")
	if [ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$line" | grep -c .)" = 1 ] &&
		printf '%s' "$line" | grep -qE "Error \([a-z_/]+\.c:[0-9]+\): ptimer: $W/bad.conf:2: strict" &&
		! ls "$D.img"/ptimers-*.img >/dev/null 2>&1 && ! gone "$PID"; then
		pass "conf/bad-value: dump fails: $(printf '%s' "$line" | grep -oE 'Error \(.*' | cut -c1-120)"
	else
		fail "conf/bad-value" "criu dump exit $rc, $n ptimer lines, process $(gone "$PID" && echo gone || echo running): $(logtail "$D.img/dump.log")"
	fi
	if PTIMER_CONFIG=$W/strict.conf dump conf-env-over-file "$D.img" PTIMER_STRICT=no -- --libdir "$LIBDIR"; then
		pass "conf/env-over-file: PTIMER_STRICT=no over 'strict = yes': dump done"
	fi
	kill_wait "$PID"
}
# The same with criu alone: noted, not counted (criu's failure, not ours).
case_exited_alone() {
	start exited-alone criu exited plain || return
	dump exited-alone "$D.img" || kill_wait "$PID"
	restore "$D.img" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		note "criu alone on the exited-thread timer fails as known: $(grep -m1 -o "Can't create posix timer.*" "$D.img/restore.log" || logtail "$D.img/restore.log")"
	else
		note "criu alone restored the exited-thread timer (the known criu failure is gone in $CRIU_VERSION)"
		touch "$D/restored"; kill_wait "$RPID"
	fi
}

# rseq-critical-section inside criu: the leader loops in its own rseq
# critical section (test/e2e/rseq_cs_loop.c); the plugin runs its code in
# that thread at dump (CHECKPOINT_DEVICES) and at restore
# (RESUME_DEVICES_LATE).  Its counters live in its memory and go through the
# checkpoint: "lost" must stay 0, "aborts" grow after the restore.
case_rseq() {
	local d=$W/rseq img=$W/rseq.img lost aborts0 aborts
	rm -rf "$d" "$img"
	mkdir -p "$d"
	setsid "$BLD/test/rseq_cs_loop" main "$d" >"$d/out" 2>&1 </dev/null &
	PID=$!
	disown "$PID"
	if ! wait_until 100 test -e "$d/ready"; then
		grep -q '^SKIP' "$d/out" && { skip rseq "$(oneline "$d/out")"; return 0; }
		fail rseq/start "rseq_cs_loop did not get ready: $(oneline "$d/out")"
		return 1
	fi
	# takeover: criu-mode auto would leave the timers to criu 4.2 and run
	# no code in the task at restore
	dump rseq "$img" PTIMER_CRIU_MODE=takeover -- --libdir "$LIBDIR" || { kill_wait "$PID"; return 1; }
	restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		fail rseq/restore "criu restore exit $RC: $(logtail "$img/restore.log")"
		return 1
	fi
	grep -q 'ptimer: .*POSIX timers restored' "$img/restore.log" ||
		fail rseq/plugin-restored "no 'ptimer: ... POSIX timers restored' in restore.log"
	aborts0=$(tr -s ' ' <"$d/counts" | awk '{ print $2 }')
	sleep 0.5
	read -r _ aborts _ lost _ < <(tr -s ' ' <"$d/counts")
	if [ "${lost:-x}" = 0 ]; then
		pass "rseq/lost-aborts-0 (aborts $aborts0 -> $aborts)"
	else
		fail rseq/lost-aborts-0 "the looping thread found rseq_cs cleared inside its section ${lost:-?} times after criu dump + restore with the plugin"
	fi
	check rseq/runs-after-restore "aborts did not grow after the restore ($aborts0 -> $aborts)" test "${aborts:-0}" -gt "${aborts0:-0}"
	kill_wait "$RPID"
}

# Images made with the plugin, restored by criu without it: a checkpoint
# criu alone restores as it would have without ptimer (the plugin leaves
# criu's core images as criu wrote them), or fails as criu alone does;
# never a process without its timers.  With an empty plugin directory, and
# with none at all (Debian's criu package makes no /usr/lib/criu: criu then
# skips its "Missing required plugin" check, criu/plugin.c cr_plugin_init()).
# The mix scenario's image (scenario mix, an earlier case, restored once
# with the plugin already: the core images are back as criu wrote them).
no_plugin() {  # NAME LOG [CRIU-ARGS]
	local name=$1 log=$2
	shift 2
	# the restored process waits for D/restored again, to be read and killed
	rm -f "$W/mix/restored" "$W/mix/criu.done"
	restore "$MIX_IMG" -v4 -o "$log" "$@"
	if [ "$RC" -eq 0 ]; then
		proc_timers "$RPID" >"$W/mix/timers.$log"
		if cmp -s "$W/mix/timers.before" "$W/mix/timers.$log"; then
			pass "$name: criu alone restored the $(wc -l <"$W/mix/timers.before") timers of the plugin's checkpoint, as before the dump"
		else
			fail "$name" "criu alone restored the plugin's checkpoint with other timers: $(diff "$W/mix/timers.before" "$W/mix/timers.$log" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
		fi
		kill_wait "$RPID"
	elif grep -q "Can't create posix timer" "$MIX_IMG/$log"; then
		pass "$name: fails as criu alone does: $(grep -o "Can't create posix timer.*" "$MIX_IMG/$log" | head -n1 | cut -c1-80)"
	else
		fail "$name" "criu restore without the plugin failed (exit $RC), not as criu alone does: $(logtail "$MIX_IMG/$log")"
	fi
}
MIX_IMG=$W/mix.img
case_no_plugin() {
	if [ ! -d "$MIX_IMG" ] || [ ! -s "$W/mix/timers.before" ]; then
		fail "no-plugin-restore" "no mix image to restore"
		return
	fi
	mkdir -p "$W/empty-libdir"
	no_plugin no-plugin-restore/libdir-without-ptimer restore-noplugin.log --libdir "$W/empty-libdir"
	if [ -e /usr/lib/criu ]; then
		skip "no-plugin-restore/no-plugin-dir" "/usr/lib/criu exists in this root"
	else
		no_plugin no-plugin-restore/no-plugin-dir restore-noplugindir.log
	fi
}

# A timer-holding process tree in a user namespace of its own, root inside
# mapped to host uid 100000 (how container runtimes run it): the tree root
# is a shell, its two children hold timers (mix: one process; threads: two
# threads).  criu dumps the user namespace with the tree; every image the
# plugin writes or rewrites must have criu's own mode and owner (compared
# with criu's inventory.img), because at restore the restored init, host uid
# 100000, opens its children's core images.  The restore itself needs the
# tree in pid and mount namespaces of its own too (criu mounts a proc for
# the user namespace's pid namespace): test/criu/zdtm.sh restores such
# trees, zdtm's uns flavor, with the plugin.
userns_tree() {
	local name=userns-tree img c init bad="" f ref upid n
	D=$W/$name img=$W/$name.img
	rm -rf "$D" "$img"
	mkdir -p "$D/a" "$D/b"
	: >"$D/init.out"
	chown -R 100000:100000 "$D"
	( cd / && exec unshare --user --map-users=0:100000:65536 --map-groups=0:100000:65536 \
		--setuid 0 --setgid 0 setsid \
		sh -c '"$0" criu mix "$1/a" "$2/a" & "$0" criu threads "$1/b" "$2/b" & wait' "$ZT" "$D" "$P/$name" \
		>>"$D/init.out" 2>&1 </dev/null ) &
	upid=$!
	disown "$upid"
	for c in a b; do
		if ! wait_until 600 test -e "$D/$c/criu.ready"; then
			fail "$name/start" "child $c did not get ready: $(oneline "$D/$c/criu.out") $(oneline "$D/init.out")"
			kill -KILL "$upid"
			return 1
		fi
	done
	init=$upid
	if [ "$(awk '/^Uid:/ { print $2 }' "/proc/$init/status")" != 100000 ] ||
		[ "$(readlink "/proc/$init/ns/user")" = "$(readlink /proc/self/ns/user)" ]; then
		fail "$name/start" "init $init is not in a user namespace of its own as host uid 100000: $(grep -E '^Uid:' "/proc/$init/status" | tr '\n\t' '  ')"
		kill -KILL "$upid"
		return 1
	fi
	PID=$init
	dump "$name" "$img" -- --libdir "$LIBDIR" || { kill_wait "$init"; return 1; }
	# every image as criu makes its own (inventory.img: criu's, untouched)
	ref=$(stat -c '%a %u:%g' "$img/inventory.img")
	n=0
	for f in "$img"/core-*.img "$img"/ptimers-*.img; do
		n=$((n + 1))
		[ "$(stat -c '%a %u:%g' "$f")" = "$ref" ] || bad="$bad $(basename "$f") $(stat -c '%a %u:%g' "$f")"
	done
	if [ -n "$bad" ]; then
		fail "$name/image-modes" "criu's inventory.img is $ref, but:$bad"
	else
		pass "$name/image-modes: core and ptimers images are $ref like criu's inventory.img ($n files)"
	fi
	# the two children have timers (the init, a shell, has none)
	n=$(grep -c 'ptimer: task .*: [1-9][0-9]* POSIX timers saved' "$img/dump.log")
	if [ "$n" -ge 2 ]; then
		pass "$name/plugin-dumped: both children's timers"
	else
		fail "$name/plugin-dumped" "$n 'ptimer: task ... POSIX timers saved' lines in dump.log, want 2: $(logtail "$img/dump.log")"
	fi
}

# The core images: one idle process (zdtm_timers setup SCENARIO: every
# thread sleeps in pause(); the scenario has no timer that fires, so no
# signal turns up pending in one dump and not the other) dumped three
# times: A and B native with --leave-running, C takeover.  Decoded with
# crit: A and B must be equal once tc.timers.posix is deleted (the control:
# the method sees no other difference between two dumps), A must hold the
# timers, C as many, and C must equal A but for the timers' remaining
# time: the plugin changes no core image at dump.  C's restore (the plugin
# restores the timers, criu reads its core image without them) must leave
# the core images as they were.
crit_case() {  # SCENARIO
	local name=core-strip-$1 pid f base sum
	start "$name" setup "$1" plain || return 1
	pid=$PID
	proc_timers "$pid" >"$D/timers.before"
	dump "$name" "$D.A" PTIMER_CRIU_MODE=native -- --libdir "$LIBDIR" --leave-running || { kill_wait "$pid"; return 1; }
	dump "$name" "$D.B" PTIMER_CRIU_MODE=native -- --libdir "$LIBDIR" --leave-running || { kill_wait "$pid"; return 1; }
	dump "$name" "$D.C" PTIMER_CRIU_MODE=takeover -- --libdir "$LIBDIR" || { kill_wait "$pid"; return 1; }
	for d in A B C; do
		for f in "$D.$d"/core-*.img; do
			base=$(basename "$f" .img)
			if ! crit decode -i "$f" -o "$D.$d/$base.json" 2>"$D.crit.err"; then
				fail "$name/crit" "crit decode $f: $(oneline "$D.crit.err")"
				return 1
			fi
		done
	done
	if python3 "$cdir/core-diff.py" "$pid" "$D.A" "$D.B" "$D.C" >"$D.diff" 2>&1; then
		sed "s|^ok |PASS $P/$name/|" "$D.diff" >"$D.res"
		cat "$D.res"
		tally "$D.res"
	else
		sed -n 's|^ok |PASS '"$P/$name"'/|p; s|^bad \([^:]*\)|FAIL '"$P/$name"'/\1|p' "$D.diff" >"$D.res"
		cat "$D.res"
		tally "$D.res"
		grep -Ev '^(ok|bad) ' "$D.diff" | sed 's/^/# /'
		grep -q '^FAIL ' "$D.res" || fail "$name/core-diff" "core-diff.py failed with no 'bad' line: $(oneline "$D.diff")"
	fi
	# C restores (the plugin takes the timers out of the core image criu
	# reads, and brings them back itself) to the same timers, and leaves
	# criu's core images as they were
	sum=$(cat "$D.C"/core-*.img | sha256sum)
	restore "$D.C" --libdir "$LIBDIR" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		fail "$name/restore" "criu restore of the takeover dump: exit $RC: $(logtail "$D.C/restore.log")"
		return 1
	fi
	plugin_restored "$name" "$D.C"
	if [ "$(cat "$D.C"/core-*.img | sha256sum)" = "$sum" ] && ! ls "$D.C"/*.with-timers >/dev/null 2>&1; then
		pass "$name/cores-put-back: every core image as criu wrote it after the restore, nothing left beside"
	else
		fail "$name/cores-put-back" "the core images changed, or a copy was left: $(ls "$D.C" | tr '\n' ' ')"
	fi
	restored_same "$name/restore" "$D.C"
}
case_core_strip() {
	if ! command -v crit >/dev/null; then
		skip "core-strip" "no crit in this root (python3-pycriu)"
		return
	fi
	crit_case stride	# 2048 timers, one thread
	crit_case cpuclocks	# two threads (two core images), CPU-clock timers
}

# criu-mode auto at restore: images that leave the timers to criu are taken
# over when the restoring criu cannot make exact IDs itself (criu 4.1, a
# kernel before 6.15) or when the restore's settings say takeover.  Here the
# second: a default dump restored with PTIMER_CRIU_MODE=takeover: the plugin
# takes the timers out of the core image criu reads and restores them itself.
case_auto_fallback() {
	local name=auto-fallback img
	start "$name" criu stride plain || return 1
	img=$D.img
	dump "$name" "$img" -- --libdir "$LIBDIR" || { kill_wait "$PID"; return 1; }
	PTIMER_CRIU_MODE=takeover restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		fail "$name/restore" "criu restore exit $RC: $(logtail "$img/restore.log")"
		return 1
	fi
	auto_decision "$name" "$img" || { kill_wait "$RPID"; return 1; }
	if [ "$AUTO_EXACT" = yes ]; then
		check "$name/taken-over-at-restore" "no 'but criu-mode takeover in the restore's settings' in restore.log: $(logtail "$img/restore.log")" \
			grep -q "ptimer: criu-mode auto: .*but criu-mode takeover in the restore.s settings" "$img/restore.log"
	else
		skip "$name/taken-over-at-restore" "criu $CRIU_VERSION here: ptimer restores them whatever the settings"
	fi
	plugin_restored "$name" "$img"
	collect "$name"
}

# One checkpoint of threads as pid 1 of its own pid namespace (its leader's
# SIGEV_THREAD_ID timer is restored by ptimer: criu saves it aimed at the
# process), restored twice at the same time, each copy in a pid namespace of
# its own (the plugin locks the directory: the second waits while the
# first has a core image stripped), then from a read-only bind of the
# directory (criu makes the timers as it saved them; the plugin aims that
# one at the leader again).  Each copy must hold the timers the original
# held, tids as each namespace sees them.
ns_timers() { proc_timers "$1" | sed -E 's#/(tid|pid)\.[0-9]+#/\1#'; }
ns_same() {  # NAME PID
	ns_timers "$2" >"$D/timers.$1"
	if [ -s "$D/timers.before" ] && cmp -s "$D/timers.before" "$D/timers.$1"; then
		pass "$name/$1: the $(wc -l <"$D/timers.before") timers of the original"
	else
		fail "$name/$1" "original: $(tr '\n' ';' <"$D/timers.before") restored: $(tr '\n' ';' <"$D/timers.$1")"
	fi
}
case_concurrent() {
	local name=concurrent img ro p1 p2 r1 r2
	start "$name" criu threads pidns || return 1
	img=$D.img ro=$D.ro
	ns_timers "$PID" >"$D/timers.before"
	dump "$name" "$img" -- --libdir "$LIBDIR" || { kill_wait "$PID"; return 1; }
	rm -f "$D"/restored.*
	for k in 1 2; do
		timeout -s KILL "$CRIU_TIMEOUT" criu restore -D "$img" -d --pidfile "$D/restored.$k" --libdir "$LIBDIR" \
			-v4 -o "restore-$k.log" >"$D/restore-$k.out" 2>&1 &
		eval "p$k=\$!"
	done
	wait "$p1"
	r1=$?
	wait "$p2"
	r2=$?
	if [ "$r1" -eq 0 ] && [ "$r2" -eq 0 ]; then
		pass "$name/both-restored: two criu restore of one directory at once"
		ns_same copy-1 "$(cat "$D/restored.1")"
		ns_same copy-2 "$(cat "$D/restored.2")"
	else
		fail "$name/both-restored" "criu restore exits $r1 and $r2: $(logtail "$img/restore-1.log") $(logtail "$img/restore-2.log")"
	fi
	for k in 1 2; do [ -s "$D/restored.$k" ] && kill_wait "$(cat "$D/restored.$k")"; done
	mkdir -p "$ro" "$W/$name-ro-work"
	if mount --bind "$img" "$ro" && mount -o remount,bind,ro "$ro"; then
		rm -f "$W/$name-ro-work/restored.pid"
		timeout -s KILL "$CRIU_TIMEOUT" criu restore -D "$ro" -W "$W/$name-ro-work" -d \
			--pidfile "$W/$name-ro-work/restored.pid" --libdir "$LIBDIR" -v4 -o restore.log \
			>"$W/$name-ro-work/restore.out" 2>&1
		RC=$?
		if [ "$RC" -eq 0 ]; then
			ns_same read-only "$(cat "$W/$name-ro-work/restored.pid")"
			kill_wait "$(cat "$W/$name-ro-work/restored.pid")"
		else
			fail "$name/read-only" "criu restore exit $RC: $(logtail "$W/$name-ro-work/restore.log")"
		fi
		umount "$ro"
	else
		fail "$name/read-only" "cannot bind-mount the image directory read-only"
	fi
}

# A timer aimed at a thread that has exited, in a pid namespace: criu alone
# cannot dump it ("Unable to convert the notify thread id", criu/timer.c).
# The plugin makes it SIGEV_NONE in the process at CHECKPOINT_DEVICES,
# before criu saves it (the timer could never signal anyone: the process
# behaves the same), so the dump and the restore succeed.  With
# --leave-running the original runs on: the image is restored beside it (a
# pid namespace of its own), both must hold the same timers, then the
# original checks its own timers (the same checks, the exited thread's
# timer as SIGEV_NONE), then a copy restored again checks itself.
case_exited_pidns() {  # NAME [CRIU-ARGS]
	local name=$1 img
	shift
	start "$name" criu exited pidns || return 1
	img=$D.img
	dump "$name" "$img" -- --libdir "$LIBDIR" "$@" || { kill_wait "$PID"; return 1; }
	check "$name/made-none-in-process" "no 'made SIGEV_NONE in the process itself' in dump.log: $(logtail "$img/dump.log")" \
		grep -q 'ptimer: process [0-9]*: 1 timer that can never fire made SIGEV_NONE in the process itself' "$img/dump.log"
	restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		fail "$name/restore" "criu restore exit $RC: $(logtail "$img/restore.log")"
		gone "$PID" || kill_wait "$PID"
		return 1
	fi
	pass "$name/restore (${RTIME} s)"
	case " $* " in
	*" --leave-running "*)
		# the original and the copy side by side, each pid 1 of its own
		# pid namespace: the same timers (tids as each namespace sees them)
		proc_timers "$PID" | sed -E 's#/(tid|pid)\.[0-9]+#/\1#' >"$D/timers.original"
		proc_timers "$RPID" | sed -E 's#/(tid|pid)\.[0-9]+#/\1#' >"$D/timers.copy"
		if [ -s "$D/timers.original" ] && cmp -s "$D/timers.original" "$D/timers.copy"; then
			pass "$name/side-by-side: the original, running on, and the restored copy hold the same $(wc -l <"$D/timers.copy") timers"
		else
			fail "$name/side-by-side" "original: $(tr '\n' ';' <"$D/timers.original") copy: $(tr '\n' ';' <"$D/timers.copy")"
		fi
		# then each checks itself, one after the other (one state directory)
		kill_wait "$RPID"
		RPID=$PID
		collect "$name/original" || return 1
		rm -f "$D/restored" "$D/criu.done" "$D/criu.result"
		restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
		if [ "$RC" -ne 0 ]; then
			fail "$name/restore-again" "criu restore exit $RC: $(logtail "$img/restore.log")"
			return 1
		fi ;;
	esac
	collect "$name"
}
# A dump that fails after the plugin changed the process (a post-dump
# script that refuses: criu resumes the tasks, criu/cr-dump.c
# cr_dump_finish()): the process must go on as before, the timer aimed at
# its leader aimed at it again (the exited thread's timer stays SIGEV_NONE:
# it could never signal anyone), and it checks its own timers.
case_failed_dump_pidns() {
	local name=failed-dump-pidns img script=$W/refuse.sh
	start "$name" criu exited pidns || return 1
	img=$D.img
	rm -rf "$img"
	mkdir -p "$img"
	printf '#!/bin/sh\n[ "$CRTOOLS_SCRIPT_ACTION" = post-dump ] && exit 1\nexit 0\n' >"$script"
	chmod +x "$script"
	ns_timers "$PID" | sed 's#^1 \([0-9]*/[0-9a-f]*\) signal/tid #1 \1 none/pid #' >"$D/timers.before"
	timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$img" -v4 -o dump.log --libdir "$LIBDIR" \
		--action-script "$script" >"$img/dump.out" 2>&1
	RC=$?
	if [ "$RC" -eq 0 ] || gone "$PID"; then
		fail "$name/dump-refused" "criu dump exit $RC, process $(gone "$PID" && echo gone || echo running): $(logtail "$img/dump.log")"
		gone "$PID" || kill_wait "$PID"
		return 1
	fi
	pass "$name/dump-refused: criu dump exit $RC, the process runs on"
	ns_same after-failed-dump "$PID"
	RPID=$PID
	collect "$name"
}

# criu alone on the same: noted, not counted (criu's failure, not ours).
case_exited_pidns_alone() {
	start exited-pidns-alone criu exited pidns || return
	if timeout -s KILL "$CRIU_TIMEOUT" criu dump -t "$PID" -D "$D.img" -v4 -o dump.log >/dev/null 2>&1 </dev/null; then
		note "criu alone dumped the exited-thread timer in a pid namespace (the known criu failure is gone in $CRIU_VERSION)"
		wait_until 100 gone "$PID"
	else
		note "criu alone on the exited-thread timer in a pid namespace fails as known: $(grep -m1 -o 'Unable to convert the notify thread id.*' "$D.img/dump.log" || logtail "$D.img/dump.log")"
		kill_wait "$PID"
	fi
}

# One checkpoint, restored again and again: with the plugin twice (each
# time it takes the timers out of the core images criu reads, when it
# restores them itself, and puts them back), after a restore that did not
# finish (simulated: a core image left stripped, criu's own beside it as
# core-PID.img.with-timers; the plugin puts it back first), by criu alone
# (empty plugin directory), and with the plugin from a read-only bind of the
# directory (it cannot take the timers out there: criu restores them as it
# saved them, the plugin checks them).  Each restore must give the timers
# /proc/PID/timers showed before the dump; the images stay as criu wrote them.
restored_same() {  # NAME IMG
	local name=$1 img=$2
	if [ "$RC" -ne 0 ]; then
		fail "$name" "criu restore exit $RC: $(logtail "$img/restore.log")"
		return 1
	fi
	proc_timers "$RPID" >"$D/timers.after"
	if cmp -s "$D/timers.before" "$D/timers.after"; then
		pass "$name: $(wc -l <"$D/timers.after") timers as before the dump (${RTIME} s)"
	else
		fail "$name" "/proc/PID/timers differ: $(diff "$D/timers.before" "$D/timers.after" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
	fi
	kill_wait "$RPID"
}
case_reuse() {
	local name=reuse img sum core ro
	start "$name" criu stride plain || return 1
	img=$D.img ro=$D.ro
	proc_timers "$PID" >"$D/timers.before"
	dump "$name" "$img" -- --libdir "$LIBDIR" || { kill_wait "$PID"; return 1; }
	core=$img/core-$PID.img
	sum=$(cat "$img"/core-*.img | sha256sum)
	restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
	restored_same "$name/plugin-1" "$img"
	restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
	restored_same "$name/plugin-2" "$img"
	# the state a killed restore leaves (when ptimer restores the timers)
	if crit decode -i "$core" -o "$D/core.json" 2>"$D/crit.err" &&
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for e in d["entries"]:
    e.get("tc", {}).get("timers", {}).pop("posix", None)
json.dump(d, open(sys.argv[1], "w"))' "$D/core.json" &&
		crit encode -i "$D/core.json" -o "$D/core.stripped" 2>>"$D/crit.err" &&
		ln "$core" "$core.with-timers" && mv "$D/core.stripped" "$core"; then
		restore "$img" --libdir "$LIBDIR" -v4 -o restore.log
		check "$name/after-killed-restore/put-back" "no 'left by a restore that did not finish' in restore.log: $(logtail "$img/restore.log")" \
			grep -q "ptimer: core-$PID.img.with-timers: left by a restore that did not finish; put back" "$img/restore.log"
		restored_same "$name/after-killed-restore" "$img"
	else
		fail "$name/after-killed-restore" "cannot make a stripped core image with crit: $(oneline "$D/crit.err")"
	fi
	mkdir -p "$W/empty-libdir"
	restore "$img" --libdir "$W/empty-libdir" -v4 -o restore-alone.log
	restored_same "$name/criu-alone" "$img"
	if [ "$(cat "$img"/core-*.img | sha256sum)" = "$sum" ] && ! compgen -G "$img/*.with-timers" >/dev/null; then
		pass "$name/cores-as-criu-wrote-them: after four restores"
	else
		fail "$name/cores-as-criu-wrote-them" "the core images changed, or a copy was left: $(ls "$img" | tr '\n' ' ')"
	fi
	mkdir -p "$ro" "$W/ro-work"
	if mount --bind "$img" "$ro" && mount -o remount,bind,ro "$ro"; then
		rm -f "$W/ro-work/restored.pid"
		timeout -s KILL "$CRIU_TIMEOUT" criu restore -D "$ro" -W "$W/ro-work" -d --pidfile "$W/ro-work/restored.pid" \
			--libdir "$LIBDIR" -v4 -o restore.log >"$W/ro-work/restore.out" 2>&1
		RC=$? RPID=$(cat "$W/ro-work/restored.pid" 2>/dev/null) RTIME=-
		restored_same "$name/read-only" "$W/ro-work"
		umount "$ro"
	else
		fail "$name/read-only" "cannot bind-mount the image directory read-only"
	fi
}

# A test program that checks itself after a criu restore, role criu
# (test/e2e/pending_timer.c, test/e2e/thread_cpu.c): it writes D/criu.pid and
# D/criu.ready once set up, checks once D/restored appears, and writes its
# PASS/FAIL lines, named WHAT/..., to D/criu.result, then D/criu.done.
# stress-ng's timer, clock, timerfd and itimer stressors (a tree of five
# processes: the timer stressor's POSIX timer fires at 1 MHz), checkpointed
# 1.5 s into a 6 s run and restored: the run must end as it would have,
# "successful run completed", each stressor in the metrics with its bogo
# ops.  A NAME ending in "alone": criu without the plugin, the outcome shown
# as "# criu alone:" lines, not counted (its dump may time out here).
STRESSORS=(timer clock timerfd itimer)
stress_ok() {  # OUT: the summary of a finished run, or why not
	local s why=
	grep -q 'successful run completed' "$1" && ! grep -q 'unsuccessful run' "$1" ||
		why="no 'successful run completed' line"
	for s in "${STRESSORS[@]}"; do
		grep -qE "metrc: .*\] +$s +[1-9][0-9]* " "$1" || why="$why${why:+; }no metrics for $s"
	done
	if [ -n "$why" ]; then
		echo "$why: $(grep -E 'fail|error|unsuccessful|passed|failed' "$1" | tr '\n' ' ' | cut -c1-300)"
		return 1
	fi
	grep -oE '(passed: [0-9]+|successful run completed in [0-9.]+ ?[a-z]*)' "$1" | tr '\n' ' ' | sed 's/ $//'
}
case_stress() {  # NAME [DUMP-ENV]...
	local name=$1 img job plugin=(--libdir "$LIBDIR") alone= res t k=? dead
	shift
	case $name in *alone) plugin=() alone=1 ;; esac
	D=$W/$name img=$W/$name.img
	rm -rf "$D" "$img"
	mkdir -p "$D"
	(cd "$D" && exec setsid stress-ng $(printf -- '--%s 1 ' "${STRESSORS[@]}") --timeout 6s --metrics-brief \
		>"$D/stress.out" 2>&1 </dev/null) &
	job=$!
	disown "$job"
	# the workers are children of the stress-ng started here
	if ! wait_until 100 eval '[ "$(pgrep -c -P "$job")" -ge ${#STRESSORS[@]} ]'; then
		fail "$name/start" "stress-ng did not start its ${#STRESSORS[@]} workers: $(oneline "$D/stress.out")"
		kill -KILL -- "-$job" 2>/dev/null
		return 1
	fi
	sleep 1.5
	PID=$job
	# dump's FAIL line: criu alone's is a note, not counted
	if ! dump "$name" "$img" "$@" -- "${plugin[@]}" >"$D/dump.msg"; then
		kill -KILL -- "-$job" 2>/dev/null
		if [ -n "$alone" ]; then
			H_FAIL=$((H_FAIL - 1))
			note "criu alone: dump of stress-ng failed: $(logtail "$img/dump.log")"
		else
			cat "$D/dump.msg"
		fi
		return 0
	fi
	t=$DTIME
	# the timer stressor holds its POSIX timer for the whole run; but
	# criu's seize of a worker sometimes stalls (signals at 1 MHz) until
	# the workers exit at the end of the run ("Seized task N, state 2":
	# dead), before any plugin hook: then there is nothing to save
	dead=$(grep -c 'Seized task [0-9]*, state 2' "$img/dump.log")
	if [ "$dead" -gt 0 ]; then
		note "$name: criu seized $dead of stress-ng's workers only as they exited (dump ${t} s): no timers to save"
	elif [ -z "$alone" ]; then
		k=$(grep -oE 'ptimer: task [0-9]+ \(vpid [0-9]+\): [0-9]+ POSIX timers saved' "$img/dump.log" |
			awk '{ n += $(NF - 3); t++ } END { printf "%d timers of %d tasks", n, t }')
		check "$name/plugin-saves-timers" "the plugin saved $k: $(logtail "$img/dump.log")" \
			test "${k%% *}" -ge 1
	fi
	restore "$img" "${plugin[@]}" -v4 -o restore.log
	if [ "$RC" -ne 0 ]; then
		kill -KILL -- "-$job" 2>/dev/null
		if [ -n "$alone" ]; then
			note "criu alone: restore of stress-ng failed: $(logtail "$img/restore.log")"
		else
			fail "$name/restore" "criu restore exit $RC: $(logtail "$img/restore.log")"
		fi
		return 0
	fi
	if ! wait_until 300 gone "$RPID"; then
		kill -KILL -- "-$RPID" 2>/dev/null
		res="still running 30 s after the restore: $(oneline "$D/stress.out")"
	elif res=$(stress_ok "$D/stress.out"); then
		if [ -n "$alone" ]; then note "criu alone: stress-ng ok: $res"
		else pass "$name/run-completes: dump ${t} s ($k), restore ${RTIME} s; $res"; fi
		return 0
	fi
	if [ -n "$alone" ]; then note "criu alone: stress-ng after the restore: $res"
	else fail "$name/run-completes" "$res"; fi
}

# The cases of test/cases/LIST in the criu flavours (test/lib/driver.sh,
# test/lib/flavour-criu.sh), then this suite's own: the criu-mode settings
# and their fallbacks, criu alone on the exited-thread timer, rseq, a
# plugin dump restored without the plugin (mix's image, a LIST case),
# user namespaces, the stripped core image, pid-namespace
# leaders that exit, image reuse, concurrent restores, stress-ng.  (What
# criu hands a checkpoint to, post-dump copies, page server, lazy pages and
# pre-dump, are criu flavours: test/lib/flavour-criu.sh.)
mapfile -t CASES < <(drive_words criu criu-takeover criu-strict criu-native criu-pidns criu-alone \
	criu-post-dump-copy criu-page-server)
CASES+=(
	case_auto_fallback
	case_conf
	case_exited_alone
	case_rseq
	case_no_plugin
	userns_tree
	case_stress:stress
	case_stress:native-stress:PTIMER_CRIU_MODE=native
	case_stress:stress-alone
	case_core_strip
	case_exited_pidns:exited-pidns
	case_exited_pidns:leave-running-pidns:--leave-running
	case_failed_dump_pidns
	case_exited_pidns_alone
	case_reuse
	case_concurrent
)
[ -n "${PTIMER_CRIU_CASES:-}" ] && read -ra CASES <<<"$PTIMER_CRIU_CASES"
run_cases prepare "${CASES[@]}"
totals "$suite"
